"""``ReadOnly``: a leader's queue of ReadIndex requests (Raft thesis section 6.4; etcd-io/raft's
``readOnly``).

A request records the leader's commit index when it arrives and waits until a quorum has
answered a heartbeat that carried its context: the leader was then still the leader after the
request arrived, so every write acknowledged before the request is within that index. Answers
arrive in order, and an answer for one request confirms every request queued before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.controller.raft.message import ReadState


@dataclass(slots=True)
class PendingRead:
    context: bytes
    index: int
    acks: set[int] = field(default_factory=set)


class ReadOnly:
    def __init__(self, self_id: int, quorum: int) -> None:
        self.self_id = self_id
        self.quorum = quorum
        self.pending: list[PendingRead] = []

    def add(self, context: bytes, commit_index: int) -> list[ReadState]:
        """Queue a request; what it releases at once (only in a one-node group)."""
        self.pending.append(PendingRead(context, commit_index, {self.self_id}))
        return self.ack(context, self.self_id)

    def ack(self, context: bytes, sender: int) -> list[ReadState]:
        """``sender`` answered the heartbeat carrying ``context``; the requests now confirmed."""
        for position, read in enumerate(self.pending):
            if read.context == context:
                read.acks.add(sender)
                if len(read.acks) < self.quorum:
                    return []
                released = self.pending[: position + 1]
                del self.pending[: position + 1]
                return [ReadState(r.index, r.context) for r in released]
        return []

    def last_context(self) -> bytes:
        """The context a heartbeat carries so that a lost round is retried."""
        return self.pending[-1].context if self.pending else b""
