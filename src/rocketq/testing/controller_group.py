"""Helpers for controller-group tests: free ports, configs, a register state machine, and a
group of in-process ControllerServers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import errno
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from rocketq.controller.config import ControllerConfig
from rocketq.controller.server import ControllerServer
from rocketq.testing.wait import until

# small ticks so that elections take a fraction of a second, loose enough for a loaded machine
TICK_MS = 25
ELECTION_TICK = 10
WAIT_S = 15.0
#: a start whose picked port was taken is tried this many times in all, RETRY_PAUSE_S apart
START_ATTEMPTS = 8
RETRY_PAUSE_S = 0.5


def free_ports(count: int) -> list[int]:
    """Ports the kernel just handed out (peers must know each other's ports before binding).
    They are released: another socket can take one before its server binds it, so a group
    starts through :func:`start_all_on_fresh_ports` / :func:`start_retrying`."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def peers_text(ports: Sequence[int]) -> str:
    return ";".join(f"n{i}-127.0.0.1:{port}" for i, port in enumerate(ports))


def port_taken(exc: OSError) -> bool:
    return exc.errno == errno.EADDRINUSE


class PeerGroup(Protocol):
    peers: str
    size: int

    async def start_once(self, self_id: str) -> ControllerServer: ...

    async def stop_all(self) -> None: ...


async def start_retrying(group: PeerGroup, self_id: str) -> ControllerServer:
    """Start ``self_id`` on its port in ``group.peers`` (a restart must: the others know it),
    again after a pause while that port is taken (START_ATTEMPTS in all)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return await group.start_once(self_id)
        except OSError as exc:
            if not port_taken(exc) or attempt == START_ATTEMPTS:
                raise
            await asyncio.sleep(RETRY_PAUSE_S)
    raise AssertionError("unreachable")


async def start_all_on_fresh_ports(group: PeerGroup) -> None:
    """Start n0..n<size-1>. Their ports were picked before (each names the others): if one
    was taken meanwhile, stop those started, pick fresh ports and start them all again
    (START_ATTEMPTS in all), then raise the bind error."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            for i in range(group.size):
                await group.start_once(f"n{i}")
        except OSError as exc:
            if not port_taken(exc) or attempt == START_ATTEMPTS:
                raise
            await group.stop_all()
            group.peers = peers_text(free_ports(group.size))
        else:
            return


class RegisterMachine:
    """A replicated map with set and compare-and-set (the controller's records are CAS'd)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.applied: list[int] = []

    def apply(self, index: int, data: bytes) -> object:
        command = json.loads(data)
        self.applied.append(index)
        key = command["key"]
        if command["op"] == "cas" and self.values.get(key) != command["expect"]:
            return False
        self.values[key] = command["value"]
        return True

    def snapshot(self) -> bytes:
        return json.dumps(self.values, sort_keys=True).encode()

    def restore(self, data: bytes) -> None:
        self.values = json.loads(data)


def set_command(key: str, value: str) -> bytes:
    return json.dumps({"op": "set", "key": key, "value": value}).encode()


def cas_command(key: str, expect: str | None, value: str) -> bytes:
    return json.dumps({"op": "cas", "key": key, "expect": expect, "value": value}).encode()


class Group:
    """Three (or N) controllers sharing one peers string, each with its own store."""

    def __init__(self, root: Path, size: int = 3, snapshot_entries: int = 1000) -> None:
        self.root = root
        self.peers = peers_text(free_ports(size))
        self.size = size
        self.snapshot_entries = snapshot_entries
        self.servers: dict[str, ControllerServer] = {}
        self.machines: dict[str, RegisterMachine] = {}

    def config(self, self_id: str) -> ControllerConfig:
        return ControllerConfig(
            controller_dleger_group="group1",
            controller_dleger_peers=self.peers,
            controller_dleger_self_id=self_id,
            controller_store_path=str(self.root / self_id),
            raft_tick_ms=TICK_MS,
            raft_election_tick=ELECTION_TICK,
            raft_snapshot_entries=self.snapshot_entries,
        )

    async def start(self, self_id: str) -> ControllerServer:
        return await start_retrying(self, self_id)

    async def start_once(self, self_id: str) -> ControllerServer:
        machine = RegisterMachine()
        server = ControllerServer(self.config(self_id), machine)
        await server.start()
        self.servers[self_id] = server
        self.machines[self_id] = machine
        return server

    async def start_all(self) -> None:
        await start_all_on_fresh_ports(self)

    async def stop(self, self_id: str) -> None:
        await self.servers.pop(self_id).shutdown()

    async def stop_all(self) -> None:
        for self_id in list(self.servers):
            await self.stop(self_id)

    def leaders(self) -> list[str]:
        return [name for name, server in self.servers.items() if server.is_leader]

    async def leader(self) -> ControllerServer:
        """The one serving leader, once the running servers agree on it."""

        def settled() -> bool:
            leaders = self.leaders()
            if len(leaders) != 1:
                return False
            ids = {s.leader_peer_id for s in self.servers.values()}
            return ids == {leaders[0]}

        assert await until(settled, WAIT_S), f"no single leader: {self.leaders()}"
        return self.servers[self.leaders()[0]]
