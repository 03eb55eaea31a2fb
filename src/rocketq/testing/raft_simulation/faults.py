"""``FaultInjector``: the fault mix a simulated run suffers, one fault every 1-4 s of virtual time.

Crashes (of the leader, of any node, of every node at once, and "during" a Ready: after the
writes were issued, before the fsync returned, so unsynced writes are lost and the last append
may be torn), partitions (the leader alone; the leader with one follower; a random split) for
1-8 s, one-way cuts (asymmetric partitions), and lossy spells. Crashed nodes restart after
0.2-5 s.

Some seeds also strike at the narrow windows where consensus bugs live (FoundationDB's
"buggify"): a node that has just become leader, or a leader whose commit index has just
advanced, is cut off at once, before what it sent arrives.
"""

from __future__ import annotations

import random
from typing import Protocol

from rocketq.controller.raft import Role
from rocketq.testing.raft_simulation.event import FAULT, HEAL
from rocketq.testing.raft_simulation.network import SimNetwork
from rocketq.testing.raft_simulation.node import SimNode


class Simulation(Protocol):
    """What the injector needs of the simulation."""

    nodes: dict[int, SimNode]
    network: SimNetwork

    def schedule(self, delay_us: int, kind: int, payload: object) -> None: ...

    def crash(self, node_id: int) -> None: ...

    def note(self, kind: int, what: str) -> None: ...


FAULT_KINDS = (
    ("crash_leader", 3),
    ("crash_in_ready", 2),
    ("crash_any", 1),
    ("crash_all", 1),
    ("isolate_leader", 3),
    ("leader_with_one", 1),
    ("split", 1),
    ("one_way", 2),
    ("lossy", 1),
)
NAMES = tuple(name for name, _ in FAULT_KINDS)
WEIGHTS = tuple(weight for _, weight in FAULT_KINDS)


class FaultInjector:
    def __init__(self, simulation: Simulation, rng: random.Random) -> None:
        self.sim = simulation
        self.rng = rng
        self.stopped = False
        self.base_drop = simulation.network.drop_probability
        self.injected: list[str] = []
        self.isolate_new_leader = rng.random() < 0.5
        self.isolate_after_commit = rng.random() < 0.5
        self.leader_marks: dict[int, tuple[int, int]] = {}

    def start(self) -> None:
        self._next()

    def _next(self) -> None:
        self.sim.schedule(self.rng.randrange(1_000_000, 4_000_000), FAULT, None)

    def on_fault(self, _: object) -> None:
        if self.stopped:
            return
        name = self.rng.choices(NAMES, WEIGHTS)[0]
        self.injected.append(name)
        getattr(self, name)()
        self.sim.note(FAULT, f"{name}, blocked links {sorted(self.sim.network.blocked)}")
        self._next()

    def leader_stepped(self, node_id: int, term: int, commit: int) -> None:
        """After every event of a leader: maybe cut it off right after it won or committed."""
        mark = self.leader_marks.get(node_id)
        self.leader_marks[node_id] = (term, commit)
        if self.stopped or mark == (term, commit):
            return
        if mark is None or mark[0] != term:
            strike = self.isolate_new_leader and self.rng.random() < 0.4
        else:
            strike = self.isolate_after_commit and self.rng.random() < 0.2
        if strike:
            others = [i for i in self.sim.nodes if i != node_id]
            self.sim.network.partition([[node_id], others])
            self.injected.append("isolate_at_window")
            self.sim.note(FAULT, f"isolate node {node_id} at term {term}, commit {commit}")
            self._heal_later(300_000, 2_000_000)

    def on_heal(self, _: object) -> None:
        self.sim.network.heal()
        self.sim.network.drop_probability = self.base_drop

    def _heal_later(self, low_us: int = 1_000_000, high_us: int = 8_000_000) -> None:
        self.sim.schedule(self.rng.randrange(low_us, high_us), HEAL, None)

    def _alive(self) -> list[int]:
        return [i for i, node in self.sim.nodes.items() if node.raw is not None]

    def _leader(self) -> int | None:
        leaders = [
            i
            for i, node in self.sim.nodes.items()
            if node.raw is not None and node.raw.role is Role.LEADER
        ]
        return max(leaders, key=lambda i: self.sim.nodes[i].raw.term) if leaders else None  # type: ignore[union-attr]

    def _leader_or_any(self) -> int | None:
        leader = self._leader()
        alive = self._alive()
        return leader if leader is not None else (self.rng.choice(alive) if alive else None)

    def crash_leader(self) -> None:
        target = self._leader_or_any()
        if target is not None:
            self.sim.crash(target)

    def crash_in_ready(self) -> None:
        target = self._leader_or_any()
        if target is not None:
            self.sim.nodes[target].crash_in_next_ready = True

    def crash_any(self) -> None:
        alive = self._alive()
        if alive:
            self.sim.crash(self.rng.choice(alive))

    def crash_all(self) -> None:
        for node_id in self._alive():
            self.sim.crash(node_id)

    def isolate_leader(self) -> None:
        target = self._leader_or_any()
        if target is not None:
            others = [i for i in self.sim.nodes if i != target]
            self.sim.network.partition([[target], others])
            self._heal_later()

    def leader_with_one(self) -> None:
        target = self._leader_or_any()
        if target is not None:
            others = [i for i in self.sim.nodes if i != target]
            self.rng.shuffle(others)
            self.sim.network.partition([[target, others[0]], others[1:]])
            self._heal_later()

    def split(self) -> None:
        ids = list(self.sim.nodes)
        self.rng.shuffle(ids)
        cut = self.rng.randrange(1, len(ids))
        self.sim.network.partition([ids[:cut], ids[cut:]])
        self._heal_later()

    def one_way(self) -> None:
        target = self._leader_or_any()
        if target is not None:
            other = self.rng.choice([i for i in self.sim.nodes if i != target])
            pair = (target, other) if self.rng.random() < 0.5 else (other, target)
            self.sim.network.cut_one_way(*pair)
            self._heal_later()

    def lossy(self) -> None:
        self.sim.network.drop_probability = 0.3
        self._heal_later()
