"""The values the Raft core exchanges with its embedding program: log entries, snapshots, the hard
state to persist, read states, and the peer messages (etcd-io/raft's ``raftpb`` in plain Python).

Messages are plain dataclasses; ``codec.py`` gives them an explicit binary form, so no peer input
is ever unpickled or evaluated.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

NONE = 0
"""The node id meaning "nobody" (no vote, no known leader); real node ids are positive."""


class Entry(NamedTuple):
    """One log entry. An entry with empty ``data`` is the no-op a new leader appends (Raft
    thesis section 6.4: a leader commits an entry of its own term before it serves)."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, as the Raft papers name it
    term: int
    data: bytes = b""


class Snapshot(NamedTuple):
    """The whole state machine as of ``index`` (whose entry had ``term``): log compaction by
    snapshot (Raft paper section 7). Index 0 is the empty snapshot every log starts from."""

    index: int = 0  # type: ignore[assignment]
    term: int = 0
    data: bytes = b""


class HardState(NamedTuple):
    """What must be durable before any message that depends on it leaves the node (Raft paper
    Figure 2, "persistent state on all servers"; the commit index rides along as etcd does)."""

    term: int = 0
    vote: int = NONE
    commit: int = 0


class ReadState(NamedTuple):
    """A ReadIndex answer (Raft thesis section 6.4): once this node has applied ``index``, a
    read of its state machine for the request ``context`` is linearizable."""

    index: int  # type: ignore[assignment]
    context: bytes


class MessageType(enum.IntEnum):
    """Peer message types; the values are the codec's type byte."""

    APPEND = 1
    APPEND_RESPONSE = 2
    VOTE = 3
    VOTE_RESPONSE = 4
    PRE_VOTE = 5
    PRE_VOTE_RESPONSE = 6
    HEARTBEAT = 7
    HEARTBEAT_RESPONSE = 8
    SNAPSHOT = 9


RESPONSE_OF = {
    MessageType.VOTE: MessageType.VOTE_RESPONSE,
    MessageType.PRE_VOTE: MessageType.PRE_VOTE_RESPONSE,
}


@dataclass(slots=True)
class Message:
    """One peer message. Field use by type (as etcd-io/raft's ``Message``):

    - APPEND: ``index``/``log_term`` locate the entry before ``entries``; ``commit`` is the
      leader's commit index. APPEND_RESPONSE: ``index`` is the follower's last matching index, or
      on ``reject`` the probed index with ``reject_hint`` = the follower's last index.
    - VOTE / PRE_VOTE: ``index``/``log_term`` are the candidate's last entry. A PRE_VOTE carries
      the term the sender would campaign in, without having moved to it.
    - HEARTBEAT: ``commit`` (capped at the follower's match), ``context`` of a pending ReadIndex;
      HEARTBEAT_RESPONSE echoes the ``context``.
    - SNAPSHOT: ``snapshot`` for a follower whose next entry was compacted away.
    """

    type: MessageType
    to: int
    sender: int
    term: int
    log_term: int = 0
    index: int = 0
    entries: tuple[Entry, ...] = ()
    commit: int = 0
    reject: bool = False
    reject_hint: int = 0
    context: bytes = b""
    snapshot: Snapshot | None = None
