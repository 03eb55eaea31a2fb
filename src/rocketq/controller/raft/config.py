"""``RaftConfig``: the static membership, the timing in ticks, and the injected randomness.

Time is counted in ticks the embedding program delivers (``RawNode.tick``); randomness of the
election timeout comes from an injected ``random.Random``-like object, so a seeded simulator
replays a run exactly. The ``unsafe_*`` switches exist only to prove that the simulator's
checker catches their violations; nothing but tests may set them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class RandomSource(Protocol):
    """The part of ``random.Random`` the core uses."""

    def randrange(self, start: int, stop: int) -> int: ...


@dataclass(frozen=True, kw_only=True)
class RaftConfig:
    node_id: int
    peers: tuple[int, ...]
    """Every voter, this node included (static membership)."""
    rng: RandomSource = field(compare=False)
    election_tick: int = 10
    """Followers campaign after a random timeout in [election_tick, 2 * election_tick)."""
    heartbeat_tick: int = 1
    max_entries_per_append: int = 64
    pre_vote: bool = True
    check_quorum: bool = True
    unsafe_commit_previous_term_by_counting: bool = False
    """UNSAFE, test only: commit entries of earlier terms by counting replicas (Raft paper
    Figure 8 shows how a committed entry is then overwritten)."""

    def __post_init__(self) -> None:
        if self.node_id <= 0 or self.node_id not in self.peers:
            raise ValueError(f"node_id {self.node_id} must be a positive member of {self.peers}")
        if len(set(self.peers)) != len(self.peers) or min(self.peers) <= 0:
            raise ValueError(f"peers must be distinct positive ids: {self.peers}")
        if not 0 < self.heartbeat_tick < self.election_tick:
            raise ValueError("need 0 < heartbeat_tick < election_tick")
        if self.max_entries_per_append < 1:
            raise ValueError("max_entries_per_append must be at least 1")

    @property
    def quorum(self) -> int:
        return len(self.peers) // 2 + 1
