"""Helpers for controller-group tests: free ports, configs, a register state machine, and a
group of in-process ControllerServers on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from pathlib import Path

from rocketq.controller.config import ControllerConfig
from rocketq.controller.server import ControllerServer
from rocketq.testing.wait import until

# small ticks so that elections take a fraction of a second, loose enough for a loaded machine
TICK_MS = 25
ELECTION_TICK = 10
WAIT_S = 15.0


def free_ports(count: int) -> list[int]:
    """Ports the kernel just handed out (peers must know each other's ports before binding)."""
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
        machine = RegisterMachine()
        server = ControllerServer(self.config(self_id), machine)
        await server.start()
        self.servers[self_id] = server
        self.machines[self_id] = machine
        return server

    async def start_all(self) -> None:
        for i in range(self.size):
            await self.start(f"n{i}")

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
