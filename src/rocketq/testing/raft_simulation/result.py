"""The simulation's settings and its outcome, with a short trace of the last events."""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.controller.raft import Message
from rocketq.testing.raft_simulation.event import EVENT_NAMES


@dataclass(frozen=True, kw_only=True)
class SimulationConfig:
    node_count: int = 3
    duration_us: int = 60_000_000
    settle_us: int = 10_000_000
    tick_us: int = 100_000
    election_tick: int = 10
    heartbeat_tick: int = 3
    client_count: int = 3
    faults: bool = True
    unsafe_skip_fsync_before_reply: bool = False
    unsafe_disable_prevote_checkquorum: bool = False
    unsafe_commit_previous_term_by_counting: bool = False


@dataclass
class SimulationResult:
    seed: int
    violation: str | None
    trace: list[str]
    leader_terms: int = 0
    operations: int = 0
    completed: int = 0
    events: int = 0
    virtual_us: int = 0
    torn_writes: int = 0

    def report(self) -> str:
        head = f"seed {self.seed}: {self.violation or 'ok'}"
        stats = (
            f"{self.events} events, {self.virtual_us / 1e6:.1f} s virtual, {self.leader_terms} "
            f"terms with a leader, {self.operations} operations ({self.completed} answered)"
        )
        return "\n".join([head, stats, "last events:", *self.trace])


def describe(now: int, kind: int, payload: object) -> str:
    if isinstance(payload, Message):
        m = payload
        detail = (
            f"{m.type.name} {m.sender}->{m.to} term {m.term} index {m.index} "
            f"log_term {m.log_term} entries {len(m.entries)} commit {m.commit}"
            f"{' reject' if m.reject else ''}"
        )
    else:
        detail = str(payload)
    return f"  {now / 1e6:10.6f} s {EVENT_NAMES[kind]:8} {detail}"
