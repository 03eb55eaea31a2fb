"""``MetadataLog``: the one seam between the controller's state machine and its consensus engine.

The controller proposes its events (apply broker id, elect master, alter sync state set, ...)
as opaque bytes and applies them in log order; it reads behind a barrier so that a read never
misses a write acknowledged before it began. Our own Raft (``rocketq.controller.raft``, driven
by an IO loop) implements it; another engine (etcd transactions on a revision, say) could,
without the controller noticing.
"""

from __future__ import annotations

from typing import Protocol

from rocketq.errors import IllegalStateError


class NotLeaderError(IllegalStateError):
    """This node may not serve the request (not the serving leader), or lost leadership
    before a proposal it accepted was applied (that proposal's outcome is then unknown: it may
    still commit). ``leader_id`` is the leader this node knows of, if any (RocketMQ answers
    CONTROLLER_NOT_LEADER)."""

    def __init__(self, message: str, leader_id: int | None = None) -> None:
        super().__init__(message)
        self.leader_id = leader_id


class ReplicatedStateMachine(Protocol):
    """What the log drives: every node applies the same entries in the same order."""

    def apply(self, index: int, data: bytes) -> object:
        """Apply one committed entry; the result goes back to whoever proposed it."""
        ...

    def snapshot(self) -> bytes:
        """The whole state, for log compaction and for a follower that fell behind."""
        ...

    def restore(self, data: bytes) -> None: ...


class MetadataLog(Protocol):
    async def propose(self, data: bytes) -> tuple[int, object]:
        """Replicate ``data``; once committed and applied here, its (index, apply result).
        Raises when this node is not the serving leader, or loses leadership first."""
        ...

    async def read_barrier(self) -> int:
        """Wait until a read of the local state machine is linearizable (ReadIndex); returns
        the applied index it reads at. Raises when this node is not the serving leader."""
        ...

    @property
    def leader_id(self) -> int | None:
        """The leader this node knows of, if any."""
        ...

    @property
    def term(self) -> int: ...

    @property
    def is_leader(self) -> bool:
        """True when this node leads and serves (its no-op of the term is committed)."""
        ...
