"""A controller group served as ``rocketq controller`` serves it (state machine, manager,
processors), and brokers played by tests over the wire: each with a RemotingClient for its
requests and a RemotingServer of its own for the NOTIFY_BROKER_ROLE_CHANGED pushes."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path

from rocketq.controller.config import ControllerConfig
from rocketq.controller.manager import ControllerManager
from rocketq.controller.processor import ControllerRequestProcessor
from rocketq.controller.replicas_info import ControllerStateMachine
from rocketq.controller.server import ControllerServer
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_headers import (
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    GetMetaDataResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader,
    NotifyBrokerRoleChangedRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_group import (
    ELECTION_TICK,
    TICK_MS,
    WAIT_S,
    free_ports,
    peers_text,
    start_all_on_fresh_ports,
    start_retrying,
)
from rocketq.testing.wait import until

CLUSTER = "DefaultCluster"
#: brokers' heartbeat timeout in these tests (controllerHeartBeatTimeoutMills)
HEARTBEAT_TIMEOUT_MS = 1_000


class ControllerGroup:
    """N controllers wired as ``cli.controller.new_controller_server`` wires them, with short
    scan intervals and a one-second heartbeat grace for a new leader."""

    def __init__(self, root: Path, size: int = 3, **overrides: object) -> None:
        self.root = root
        self.peers = peers_text(free_ports(size))
        self.size = size
        self.overrides = overrides
        self.servers: dict[str, ControllerServer] = {}
        self.managers: dict[str, ControllerManager] = {}

    def config(self, self_id: str) -> ControllerConfig:
        base = ControllerConfig(
            controller_dleger_group="group1",
            controller_dleger_peers=self.peers,
            controller_dleger_self_id=self_id,
            controller_store_path=str(self.root / "store"),
            config_store_path=str(self.root / f"{self_id}.properties"),
            scan_not_active_broker_interval_ms=100,
            scan_inactive_master_interval_ms=100,
            raft_tick_ms=TICK_MS,
            raft_election_tick=ELECTION_TICK,
        )
        return dataclasses.replace(base, **self.overrides)  # type: ignore[arg-type]

    async def start(self, self_id: str) -> ControllerServer:
        return await start_retrying(self, self_id)

    async def start_once(self, self_id: str) -> ControllerServer:
        state_machine = ControllerStateMachine()
        server = ControllerServer(self.config(self_id), state_machine)
        manager = ControllerManager(server, state_machine)
        manager.heartbeats.default_timeout_ms = HEARTBEAT_TIMEOUT_MS
        ControllerRequestProcessor(manager).register_to(server)
        await server.start()
        self.servers[self_id], self.managers[self_id] = server, manager
        return server

    async def start_all(self) -> None:
        await start_all_on_fresh_ports(self)

    async def stop(self, self_id: str) -> None:
        self.managers.pop(self_id)
        await self.servers.pop(self_id).shutdown()

    async def stop_all(self) -> None:
        for self_id in list(self.servers):
            await self.stop(self_id)

    @property
    def addrs(self) -> list[str]:
        return [s.addr for s in self.servers.values()]

    async def leader(self) -> ControllerServer:
        def settled() -> bool:
            leaders = [s for s in self.servers.values() if s.is_leader]
            ids = {s.leader_peer_id for s in self.servers.values()}
            return len(leaders) == 1 and ids == {leaders[0].self_id}

        assert await until(settled, WAIT_S), "no single serving leader"
        return next(s for s in self.servers.values() if s.is_leader)


class FakeBroker:
    """A broker of a controller-mode group, as far as the controller can tell."""

    def __init__(self, broker_name: str) -> None:
        self.broker_name = broker_name
        self.broker_id: int | None = None
        self.client = RemotingClient()
        self.server = RemotingServer()
        self.pushes: asyncio.Queue[tuple[NotifyBrokerRoleChangedRequestHeader, bytes]] = (
            asyncio.Queue()
        )
        self.server.register_processor(RequestCode.NOTIFY_BROKER_ROLE_CHANGED, self._on_push)

    async def start(self) -> None:
        await self.server.start("127.0.0.1", 0)

    async def close(self) -> None:
        await self.client.shutdown()
        await self.server.stop()

    @property
    def addr(self) -> str:
        return self.server.addr

    async def _on_push(self, channel: RemotingChannel, request: RemotingCommand) -> None:
        header = NotifyBrokerRoleChangedRequestHeader.from_ext_fields(request.ext_fields)
        self.pushes.put_nowait((header, request.body))

    async def call(
        self, addr: str, code: int, header: CommandCustomHeader | None = None, body: bytes = b""
    ) -> RemotingCommand:
        fields = header.to_ext_fields() if header is not None else {}
        request = RemotingCommand.create_request(code, fields, body)
        return await self.client.invoke(addr, request, WAIT_S)

    async def register(self, leader: str) -> int:
        """Get the next id, apply it, register (RocketMQ 5.1.1's registration)."""
        next_id = await self.call(
            leader,
            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
            GetNextBrokerIdRequestHeader(cluster_name=CLUSTER, broker_name=self.broker_name),
        )
        assert next_id.code == ResponseCode.SUCCESS, next_id.remark
        header = GetNextBrokerIdResponseHeader.from_ext_fields(next_id.ext_fields)
        assert header.next_broker_id is not None
        broker_id = header.next_broker_id
        applied = await self.call(
            leader,
            RequestCode.CONTROLLER_APPLY_BROKER_ID,
            ApplyBrokerIdRequestHeader(
                cluster_name=CLUSTER,
                broker_name=self.broker_name,
                applied_broker_id=broker_id,
                register_check_code=f"{self.addr};1700000000000",
            ),
        )
        assert applied.code == ResponseCode.SUCCESS, applied.remark
        registered = await self.call(
            leader,
            RequestCode.CONTROLLER_REGISTER_BROKER,
            RegisterBrokerToControllerRequestHeader(
                cluster_name=CLUSTER,
                broker_name=self.broker_name,
                broker_id=broker_id,
                broker_address=self.addr,
            ),
        )
        assert registered.code == ResponseCode.SUCCESS, registered.remark
        self.broker_id = broker_id
        return broker_id

    async def heartbeat(
        self,
        addrs: list[str],
        *,
        epoch: int = 0,
        max_offset: int = 0,
        timeout_ms: int = HEARTBEAT_TIMEOUT_MS,
    ) -> None:
        """BROKER_HEARTBEAT to every controller, as ReplicasManager does."""
        header = BrokerHeartbeatRequestHeader(
            cluster_name=CLUSTER,
            broker_addr=self.addr,
            broker_name=self.broker_name,
            broker_id=self.broker_id,
            epoch=epoch,
            max_offset=max_offset,
            heartbeat_timeout_mills=timeout_ms,
        )
        for addr in addrs:
            response = await self.call(addr, RequestCode.BROKER_HEARTBEAT, header)
            assert response.code == ResponseCode.SUCCESS, response.remark

    async def heartbeat_forever(
        self, addrs: list[str], period_s: float = 0.1, timeout_ms: int = HEARTBEAT_TIMEOUT_MS
    ) -> None:
        """The broker's heartbeat schedule (brokerHeartbeatInterval), until cancelled."""
        while True:
            for addr in addrs:
                with contextlib.suppress(OSError, AssertionError):  # a controller that is down
                    await self.heartbeat([addr], timeout_ms=timeout_ms)
            await asyncio.sleep(period_s)


def metadata_of(response: RemotingCommand) -> GetMetaDataResponseHeader:
    return GetMetaDataResponseHeader.from_ext_fields(response.ext_fields)
