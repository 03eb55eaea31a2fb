"""A node's role and a leader's queued ReadIndex requests."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Role(enum.Enum):
    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


@dataclass(slots=True)
class PendingRead:
    """A ReadIndex request waiting for a quorum's heartbeat answers (thesis §6.4)."""

    context: bytes
    index: int
    acks: set[int] = field(default_factory=set)
