"""``ScriptedCluster``: Raft nodes whose every message delivery a test chooses, for the scripted
scenarios (the Raft paper's Figure 8 and friends); the invariants are checked after each step.

Messages wait in ``outbox`` until a test delivers or drops them; nothing ticks unless told.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from rocketq.controller.raft import Message, MessageType, RaftConfig, Role
from rocketq.testing.raft_simulation.invariants import RaftInvariants
from rocketq.testing.raft_simulation.node import SimNode
from rocketq.testing.raft_simulation.register import CasCommand

Route = Callable[[Message], bool]


class ScriptedCluster:
    def __init__(self, size: int, seed: int = 0, **raft_options: object) -> None:
        rng = random.Random(seed)
        self.invariants = RaftInvariants()
        ids = tuple(range(1, size + 1))
        self.nodes: dict[int, SimNode] = {}
        for node_id in ids:
            config = RaftConfig(
                node_id=node_id,
                peers=ids,
                rng=random.Random(rng.getrandbits(64)),
                **raft_options,  # type: ignore[arg-type]
            )
            node = SimNode(node_id, config, random.Random(rng.getrandbits(64)), self._on_apply)
            node.snapshot_every = 10**9
            self.nodes[node_id] = node
            node.start()
        self.outbox: list[Message] = []
        self.results: dict[int, object] = {}
        self.next_op = 1

    def _on_apply(self, node_id: int, entry: object, is_snapshot: bool) -> None:
        self.invariants.on_apply(node_id, entry, is_snapshot)  # type: ignore[arg-type]

    def _after(self, node: SimNode, messages: list[Message]) -> None:
        self.outbox.extend(messages)
        self.invariants.after_step(node.node_id, node.raw)
        for op_id, result in node.completions:
            self.results.setdefault(op_id, result)
        node.completions.clear()

    def raw(self, node_id: int):  # type: ignore[no-untyped-def]
        raw = self.nodes[node_id].raw
        assert raw is not None, f"node {node_id} is down"
        return raw

    def campaign(self, node_id: int) -> None:
        node = self.nodes[node_id]
        self.raw(node_id).campaign()
        self._after(node, node.handle_ready())

    def tick(self, node_id: int, count: int = 1) -> None:
        node = self.nodes[node_id]
        for _ in range(count):
            self._after(node, node.tick())

    def propose(self, node_id: int, key: int, expected: int, new: int) -> int | None:
        op_id, self.next_op = self.next_op, self.next_op + 1
        accepted, messages = self.nodes[node_id].propose(CasCommand(op_id, key, expected, new))
        self._after(self.nodes[node_id], messages)
        return op_id if accepted else None

    def deliver(self, route: Route = lambda m: True, limit: int | None = None) -> int:
        """Deliver waiting messages that ``route`` accepts (and those they cause), oldest first,
        until none is left or ``limit`` were delivered; messages to a crashed node are lost."""
        delivered = 0
        while delivered < (limit or 10_000):
            position = next((i for i, m in enumerate(self.outbox) if route(m)), None)
            if position is None:
                return delivered
            message = self.outbox.pop(position)
            node = self.nodes[message.to]
            if node.raw is not None:
                self._after(node, node.step(message))
            delivered += 1
        if limit is None:
            raise AssertionError("messages never stopped flowing")
        return delivered

    def drop(self, route: Route = lambda m: True) -> None:
        self.outbox = [m for m in self.outbox if not route(m)]

    def crash(self, node_id: int) -> None:
        self.nodes[node_id].crash()
        self.invariants.node_down(node_id)
        self.outbox = [m for m in self.outbox if m.to != node_id]

    def restart(self, node_id: int) -> None:
        node = self.nodes[node_id]
        node.start()
        self.invariants.node_down(node_id)
        self._after(node, node.handle_ready())

    def leaders(self) -> list[int]:
        return [i for i, n in self.nodes.items() if n.raw is not None and n.raw.role is Role.LEADER]


def between(group: set[int]) -> Route:
    """Messages whose sender and receiver are both in ``group``."""
    return lambda m: m.sender in group and m.to in group


def of_type(kind: MessageType, sender: int, to: int) -> Route:
    return lambda m: m.type is kind and m.sender == sender and m.to == to
