"""``Simulation``: a seeded, single-threaded, discrete-event simulation of a Raft cluster
(tigerbeetle's VOPR and FoundationDB's simulation in miniature).

Theory of operation:
- One ``random.Random(seed)`` derives every other source of randomness (network, disks, each
  node's election timeouts, clients, faults), and events run from one heap ordered by (virtual
  time in µs, sequence number): the same seed replays the same run, event for event.
- Virtual time jumps to the next event, so idle time costs nothing. Each node ticks on its own
  drifting clock (its tick period is the nominal one ± up to 5 %).
- After every event the touched node is checked against the Raft invariants
  (``invariants.py``) and, when it leads, against CheckQuorum (a leader cut off from a quorum
  for two election timeouts of its own clock must have stepped down). At the end the network
  heals, every node restarts, a serving leader must emerge, and each register's history must be
  linearizable.
"""

from __future__ import annotations

import heapq
import random
from collections import deque

from rocketq.controller.raft import Message, RaftConfig, Role
from rocketq.testing.raft_simulation.event import (
    CLIENT,
    DELIVER,
    RESTART,
    TICK,
    TIMEOUT,
)
from rocketq.testing.raft_simulation.faults import FaultInjector
from rocketq.testing.raft_simulation.invariants import InvariantViolation, RaftInvariants
from rocketq.testing.raft_simulation.linearizability import READ
from rocketq.testing.raft_simulation.network import SimNetwork
from rocketq.testing.raft_simulation.node import SimNode
from rocketq.testing.raft_simulation.result import SimulationConfig, SimulationResult, describe
from rocketq.testing.raft_simulation.workload import ClientWorkload


class Simulation:
    def __init__(self, seed: int, config: SimulationConfig | None = None) -> None:
        self.seed = seed
        self.config = config = config or SimulationConfig()
        rng = self.rng = random.Random(seed)
        self.now = 0
        self.queue: list[tuple[int, int, int, object]] = []
        self.sequence = 0
        self.trace: deque[tuple[int, int, object]] = deque(maxlen=40)
        self.events = 0
        self.network = SimNetwork(
            random.Random(rng.getrandbits(64)),
            max_delay_us=rng.choice((5_000, 20_000, 60_000)),
            drop_probability=rng.choice((0.0, 0.01, 0.05)),
            duplicate_probability=rng.choice((0.0, 0.01, 0.03)),
        )
        self.invariants = RaftInvariants()
        self.workload = ClientWorkload(random.Random(rng.getrandbits(64)))
        ids = tuple(range(1, config.node_count + 1))
        safe = not config.unsafe_disable_prevote_checkquorum
        per_append, snapshot_every = rng.choice((1, 1, 2, 8)), rng.choice((4, 16, 64))
        self.nodes: dict[int, SimNode] = {}
        self.period: dict[int, int] = {}
        self.last_heard: dict[int, dict[int, int]] = {}
        for node_id in ids:
            raft_config = RaftConfig(
                node_id=node_id,
                peers=ids,
                rng=random.Random(rng.getrandbits(64)),
                election_tick=config.election_tick,
                heartbeat_tick=config.heartbeat_tick,
                max_entries_per_append=per_append,
                pre_vote=safe,
                check_quorum=safe,
                unsafe_commit_previous_term_by_counting=config.unsafe_commit_previous_term_by_counting,
            )
            self.nodes[node_id] = SimNode(
                node_id,
                raft_config,
                random.Random(rng.getrandbits(64)),
                self.invariants.on_apply,
                snapshot_every=snapshot_every,
                unsafe_skip_fsync_before_reply=config.unsafe_skip_fsync_before_reply,
            )
            self.period[node_id] = int(config.tick_us * rng.uniform(0.95, 1.05))
        self.faults = FaultInjector(self, random.Random(rng.getrandbits(64)))
        self.faults.stopped = not config.faults
        self.clients_stopped = False

    # ---- event queue -------------------------------------------------------------------------

    def schedule(self, delay_us: int, kind: int, payload: object) -> None:
        self.sequence += 1
        heapq.heappush(self.queue, (self.now + delay_us, self.sequence, kind, payload))

    def run(self) -> SimulationResult:
        try:
            self._start()
            self._loop(self.config.duration_us)
            self._settle()
            violation = self.workload.check()
        except InvariantViolation as exc:
            violation = f"{type(exc).__name__}: {exc}"
        except (AssertionError, ValueError, RuntimeError) as exc:  # the core's own checks
            violation = f"a node's own check failed: {type(exc).__name__}: {exc}"
        return self._result(violation)

    def run_until(self, until_us: int) -> None:
        """Run events up to ``until_us`` of virtual time (scripted scenarios)."""
        self._loop(until_us)
        self.now = max(self.now, until_us)

    def leaders(self) -> list[int]:
        return [i for i, n in self.nodes.items() if n.raw is not None and n.raw.role is Role.LEADER]

    def start(self) -> None:
        self._start()

    def _start(self) -> None:
        for node_id, node in self.nodes.items():
            node.start()
            self.last_heard[node_id] = {}
            self.schedule(self.rng.randrange(self.period[node_id]), TICK, node_id)
        for client in range(self.config.client_count):
            self.schedule(self.rng.randrange(1_000_000), CLIENT, client)
        if self.config.faults:
            self.faults.start()

    def _loop(self, until_us: int) -> None:
        queue, handlers = self.queue, self._handlers()
        while queue and queue[0][0] <= until_us:
            self.now, _, kind, payload = heapq.heappop(queue)
            self.events += 1
            if kind != TICK:  # a tick is traced only when it changed something
                self.trace.append((self.now, kind, payload))
            handlers[kind](payload)

    def _settle(self) -> None:
        """Heal, restart everyone, stop the faults: a serving leader must emerge."""
        self.faults.stopped = True
        self.network.heal()
        for node_id, node in self.nodes.items():
            if node.raw is None:
                self.restart(node_id)
        self._loop(self.now + self.config.settle_us)
        self.workload.finish()
        if not any(node.raw is not None and node.raw.is_serving() for node in self.nodes.values()):
            raise InvariantViolation(
                f"liveness: no serving leader {self.config.settle_us} µs after healing"
            )

    def _handlers(self) -> tuple:  # type: ignore[type-arg]
        return (
            self._on_tick,
            self._on_deliver,
            self._on_client,
            self.faults.on_fault,
            self.faults.on_heal,
            self.restart,
            self._on_timeout,
        )

    # ---- node events ---------------------------------------------------------------------------

    def _on_tick(self, node_id: object) -> None:
        assert isinstance(node_id, int)
        node = self.nodes[node_id]
        if node.raw is None:
            return
        self._after(node, node.tick())
        if node.changed:
            self.trace.append((self.now, TICK, node_id))
        if node.raw is not None:
            self.schedule(self.period[node_id], TICK, node_id)
            if node.raw.role is Role.LEADER:
                self._check_quorum_contact(node)

    def _on_deliver(self, message: object) -> None:
        assert isinstance(message, Message)
        node = self.nodes[message.to]
        if node.raw is None or (message.sender, message.to) in self.network.blocked:
            return  # a partition also cuts what was in flight
        if message.term == node.raw.term:
            self.last_heard[message.to][message.sender] = self.now
        self._after(node, node.step(message))

    def _after(self, node: SimNode, messages: list[Message]) -> None:
        """Route what the node sent, check it, answer its clients, notice a crash."""
        network = self.network
        for message in messages:
            for delay in network.delays(message.sender, message.to):
                self.schedule(delay, DELIVER, message)
        if node.raw is None:
            self.crashed(node.node_id)
            return
        if not node.changed:
            return  # log, term, vote and commit are as they were: nothing new to check
        self.invariants.after_step(node.node_id, node.raw)
        if node.raw.role is Role.LEADER:
            self.faults.leader_stepped(node.node_id, node.raw.term, node.raw.log.committed)
        if node.completions:
            for op_id, result in node.completions:
                client = self.workload.complete(op_id, node.node_id, result, self.now)
                if client is not None:
                    self.schedule(self.rng.randrange(100_000, 1_500_000), CLIENT, client)
            node.completions.clear()

    def _check_quorum_contact(self, node: SimNode) -> None:
        window = (2 * self.config.election_tick + 2) * self.period[node.node_id]
        heard = self.last_heard[node.node_id]
        recent = 1 + sum(1 for t in heard.values() if self.now - t <= window)
        if recent < node.config.quorum:
            raise InvariantViolation(
                f"CheckQuorum: node {node.node_id} still leads after hearing from no quorum for "
                f"{window / 1e6:.3f} s"
            )

    def note(self, kind: int, what: str) -> None:
        """Add ``what`` to the trace (faults say what they did)."""
        self.trace.append((self.now, kind, what))

    def crashed(self, node_id: int) -> None:
        self.invariants.node_down(node_id)
        self.schedule(self.rng.randrange(200_000, 5_000_000), RESTART, node_id)

    def crash(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.raw is not None:
            node.crash()
            self.crashed(node_id)

    def restart(self, node_id: object) -> None:
        assert isinstance(node_id, int)
        node = self.nodes[node_id]
        if node.raw is not None:
            return
        node.start()
        self.invariants.node_down(node_id)
        self.last_heard[node_id] = {}
        self.invariants.after_step(node_id, node.raw)  # what it read back from its disk
        self._after(node, node.handle_ready())
        self.schedule(self.period[node_id], TICK, node_id)

    # ---- clients -------------------------------------------------------------------------------

    def _on_client(self, client: object) -> None:
        assert isinstance(client, int)
        if self.clients_stopped:
            return
        leaders = [
            n for n in self.nodes.values() if n.raw is not None and n.raw.role is Role.LEADER
        ]
        if not leaders:
            self.schedule(self.rng.randrange(50_000, 300_000), CLIENT, client)
            return
        node = self.rng.choice(leaders)
        op_id, op = self.workload.new_operation(client, node.node_id, self.now)
        if op.kind == READ:
            accepted, messages = node.read(op_id, op.key)
        else:
            accepted, messages = node.propose(self.workload.command(op_id, op))
        if accepted:
            self.workload.inflight[op_id] = op
            self.schedule(self.workload.timeout_us, TIMEOUT, op_id)
        else:
            self.workload.refused += 1
            self.schedule(self.rng.randrange(50_000, 300_000), CLIENT, client)
        self._after(node, messages)

    def _on_timeout(self, op_id: object) -> None:
        assert isinstance(op_id, int)
        client = self.workload.time_out(op_id)
        if client is not None:
            self.schedule(self.rng.randrange(50_000, 500_000), CLIENT, client)

    # ---- result --------------------------------------------------------------------------------

    def _result(self, violation: str | None) -> SimulationResult:
        trace = [describe(*event) for event in self.trace]
        return SimulationResult(
            self.seed,
            violation,
            trace,
            leader_terms=self.invariants.leader_terms,
            operations=len(self.workload.history),
            completed=self.workload.completed,
            events=self.events,
            virtual_us=self.now,
            torn_writes=sum(node.disk.torn_writes for node in self.nodes.values()),
        )


def run_seed(seed: int, config: SimulationConfig | None = None) -> SimulationResult:
    return Simulation(seed, config).run()
