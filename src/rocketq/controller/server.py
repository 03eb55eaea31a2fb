"""ControllerServer: one controller of the group, on its ``controllerDLegerPeers`` address.

It wires a ``RemotingServer`` on the self peer's port, the Raft transport on that same port
(``RAFT_MESSAGE``, as RocketMQ's DLedger controller shares the DLedger port), and a
``RaftNode`` over ``RaftStorage`` in ``<controllerStorePath>/raft-<controllerDLegerSelfId>``
(a directory per peer, as DLedger's ``dledger-<selfId>``, so several controllers can share a
store path on one machine).

The seams for the controller proper:

- ``state_machine``: the ``ReplicatedStateMachine`` the log drives (the controller's
  ``ControllerStateMachine``); until it is given, a placeholder that holds nothing.
- ``register_processor(code, processor)``: the controller's request processors (904,
  1001-1013); they reach the log through ``metadata_log`` (``propose``, ``read_barrier``,
  ``is_leader``, ``leader_id``) and the leader's address through ``leader_addr``.
- ``raft_node.add_role_listener``: told of every role, term or leader change.
- ``add_service(service)``: started after the server, stopped before it (the controller's
  ``ControllerManager`` with its scans); ``metrics_collector``: the controller's ``/metrics``.

Until a processor is registered for a code, that request is refused with
REQUEST_CODE_NOT_SUPPORTED and a remark naming this controller: refused, never dropped.
"""

from __future__ import annotations

import logging
from typing import Protocol

from prometheus_client.registry import Collector

from rocketq.controller.config import ControllerConfig
from rocketq.controller.metadata_log import MetadataLog, ReplicatedStateMachine
from rocketq.controller.raft import Message
from rocketq.controller.raft_node import RaftNode, new_raft_config
from rocketq.controller.raft_storage import RaftStorage
from rocketq.controller.raft_transport import RaftTransport
from rocketq.errors import ConfigError, IllegalStateError
from rocketq.remoting.channel import RemotingChannel, RequestProcessor
from rocketq.remoting.client import parse_addr
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


class Service(Protocol):
    async def start(self) -> None: ...

    async def shutdown(self) -> None: ...


class PlaceholderStateMachine:
    """Holds nothing: the state machine until the controller's own is plugged in."""

    def apply(self, index: int, data: bytes) -> object:
        raise IllegalStateError(f"no controller state machine to apply entry {index}")

    def snapshot(self) -> bytes:
        return b""

    def restore(self, data: bytes) -> None:
        if data:
            raise IllegalStateError("no controller state machine to restore a snapshot into")


class ControllerServer:
    def __init__(
        self,
        config: ControllerConfig,
        state_machine: ReplicatedStateMachine | None = None,
        *,
        listen_host: str | None = None,
    ) -> None:
        if config.controller_dleger_peers is None or config.controller_dleger_self_id is None:
            raise ConfigError("a controller needs controllerDLegerPeers and controllerDLegerSelfId")
        if not config.controller_dleger_group:
            raise ConfigError("a controller needs controllerDLegerGroup")
        self.config = config
        self.group = config.controller_dleger_group
        self.self_id = config.controller_dleger_self_id
        self._raft_ids = config.raft_ids
        self._peer_of_raft_id = {number: peer for peer, number in self._raft_ids.items()}
        self._listen_host = listen_host
        raft_id = config.self_raft_id
        self.remoting_server = RemotingServer()
        self.transport = RaftTransport(
            {self._raft_ids[peer]: addr for peer, addr in config.peers.items()},
            raft_id,
            self._on_raft_message,
        )
        storage = RaftStorage(config.store_path / f"raft-{self.self_id}", raft_id)
        self.raft_node = RaftNode(
            new_raft_config(
                raft_id,
                tuple(sorted(self._raft_ids.values())),
                election_tick=config.raft_election_tick,
                heartbeat_tick=config.raft_heartbeat_tick,
            ),
            storage,
            state_machine or PlaceholderStateMachine(),
            self.transport.send,
            tick_s=config.raft_tick_ms / 1000,
            snapshot_entries=config.raft_snapshot_entries,
        )
        self.transport.register_to(self.remoting_server)
        self.remoting_server.register_default_processor(self._refuse)
        self._services: list[Service] = []
        self.metrics_collector: Collector | None = None
        self._started = False

    # ---- the seams -----------------------------------------------------------------------

    def register_processor(self, code: int, processor: RequestProcessor) -> None:
        """Serve a controller request code (904, 1001-1013) with ``processor``."""
        self.remoting_server.register_processor(code, processor)

    def add_service(self, service: Service) -> None:
        """Start ``service`` after the server starts; shut it down before the server stops."""
        self._services.append(service)

    @property
    def metadata_log(self) -> MetadataLog:
        return self.raft_node

    @property
    def is_leader(self) -> bool:
        return self.raft_node.is_leader

    @property
    def leader_peer_id(self) -> str | None:
        """The ``controllerDLegerSelfId`` of the leader this node knows of."""
        leader = self.raft_node.leader_id
        return None if leader is None else self._peer_of_raft_id.get(leader)

    @property
    def leader_addr(self) -> str | None:
        """The leader's controller address (RocketMQ's controllerLeaderAddress)."""
        peer = self.leader_peer_id
        return None if peer is None else self.config.peers[peer]

    @property
    def addr(self) -> str:
        return self.config.self_addr

    @property
    def port(self) -> int:
        return self.remoting_server.port

    # ---- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            raise IllegalStateError("controller already started")
        host, port = parse_addr(self.config.self_addr)
        await self.raft_node.start()
        try:
            await self.remoting_server.start(self._listen_host or host, port)
        except OSError:
            await self.raft_node.stop()
            raise
        self.transport.start()
        self._started = True
        for service in self._services:
            await service.start()
        log.info(
            "controller %s of group %s listening on %s (raft node %d of %s)",
            self.self_id,
            self.group,
            self.remoting_server.addr,
            self.config.self_raft_id,
            ", ".join(f"{p}={n}" for p, n in sorted(self._raft_ids.items())),
        )

    async def shutdown(self) -> None:
        if not self._started:
            return
        self._started = False
        for service in reversed(self._services):
            await service.shutdown()
        await self.remoting_server.stop()
        await self.transport.stop()
        await self.raft_node.stop()
        log.info("controller %s stopped", self.self_id)

    async def __aenter__(self) -> ControllerServer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    # ---- handlers ------------------------------------------------------------------------

    def _on_raft_message(self, message: Message) -> None:
        if self._started and not self.raft_node.halted:
            self.raft_node.step(message)

    async def _refuse(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            f"request code {request.code} is not served by controller {self.self_id} "
            f"of group {self.group}",
        )
