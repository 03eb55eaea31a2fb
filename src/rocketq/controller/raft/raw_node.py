"""``RawNode``: the Raft core behind the Ready contract (etcd-io/raft's ``rawnode.go``).

The embedding program drives it in one loop::

    node.step(message) / node.tick() / node.propose(data) / node.read_index(context)
    while node.has_ready():
        ready = node.ready()
        persist ready.snapshot, ready.entries (overwriting the log from entries[0].index) and
            ready.hard_state, then fsync              -- BEFORE anything below
        send ready.messages                           -- they may depend on what was persisted
        apply ready.committed_entries (and the snapshot) to the state machine
        serve ready.read_states once applied >= their index
        node.advance(ready)

Messages are only ever handed out together with the writes they depend on (a vote grant with
the vote, an append acknowledgement with the entries), so a program that follows the order
above never answers on the strength of a write a crash could lose (Raft paper Figure 2:
"updated on stable storage before responding to RPCs"). Nothing else may be called between
``ready()`` and ``advance()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.controller.raft.config import RaftConfig
from rocketq.controller.raft.log import RaftLog
from rocketq.controller.raft.message import (
    Entry,
    HardState,
    Message,
    ReadState,
    Snapshot,
)
from rocketq.controller.raft.raft import Raft
from rocketq.controller.raft.role import Role


@dataclass(frozen=True)
class RestoredState:
    """What a restarting node read back from its disk."""

    hard_state: HardState = field(default_factory=HardState)
    snapshot: Snapshot = field(default_factory=Snapshot)
    entries: list[Entry] = field(default_factory=list)


@dataclass(frozen=True)
class Ready:
    hard_state: HardState | None
    """Persist when not None."""
    entries: tuple[Entry, ...]
    """Persist: the log from ``entries[0].index`` on is replaced by these."""
    snapshot: Snapshot | None
    """Persist, drop the log up to its index, and restore the state machine from it."""
    messages: tuple[Message, ...]
    """Send only after the writes above are durable."""
    committed_entries: tuple[Entry, ...]
    """Apply in order (an entry with empty data is a leader's no-op)."""
    read_states: tuple[ReadState, ...]
    role: Role
    leader: int
    term: int


class RawNode:
    def __init__(self, config: RaftConfig, restored: RestoredState | None = None) -> None:
        restored = restored or RestoredState()
        self._raft = Raft(config, restored.hard_state, restored.snapshot, list(restored.entries))
        self._persisted = self._hard_state()
        self._in_ready = False

    # ---- inputs ------------------------------------------------------------------------------

    def tick(self) -> None:
        self._check_idle()
        self._raft.tick()

    def step(self, message: Message) -> None:
        self._check_idle()
        if message.to != self._raft.id or message.sender not in self._raft.config.peers:
            return  # not ours, or from outside the static membership
        self._raft.step(message)

    def propose(self, data: bytes) -> int | None:
        """Append ``data`` as leader; its index, or None when this node may not serve (not the
        leader, or its no-op is not committed yet)."""
        self._check_idle()
        return self._raft.propose(data)

    def read_index(self, context: bytes) -> bool:
        """Queue a linearizable read; a ``ReadState`` with ``context`` comes back in a Ready.
        False when this node may not serve reads now."""
        self._check_idle()
        return self._raft.read_index(context)

    def campaign(self) -> None:
        """Start an election at once (tests and scripted scenarios)."""
        self._check_idle()
        self._raft.campaign(pre=self._raft.config.pre_vote)

    def compact(self, index: int, data: bytes) -> None:
        """The program persisted a snapshot ``data`` of its state machine at applied ``index``:
        drop the entries it covers."""
        self._check_idle()
        self._raft.log.compact(index, data)

    # ---- outputs -----------------------------------------------------------------------------

    def has_ready(self) -> bool:
        raft, log = self._raft, self._raft.log
        persisted = self._persisted
        return bool(
            raft.messages
            or raft.read_states
            or log.unstable_snapshot
            or log.stable < log.last_index
            or log.applied < log.committed
            or raft.term != persisted.term
            or raft.vote != persisted.vote
            or log.committed != persisted.commit
        )

    def ready(self) -> Ready:
        self._check_idle()
        raft, log = self._raft, self._raft.log
        hard_state = self._hard_state()
        ready = Ready(
            hard_state if hard_state != self._persisted else None,
            tuple(log.unstable_entries()),
            log.snapshot if log.unstable_snapshot else None,
            tuple(raft.messages),
            tuple(log.next_committed_entries()),
            tuple(raft.read_states),
            raft.role,
            raft.leader,
            raft.term,
        )
        raft.messages = []
        raft.read_states = []
        self._in_ready = True
        return ready

    def advance(self, ready: Ready) -> None:
        """The program persisted, sent and applied ``ready``."""
        if not self._in_ready:
            raise RuntimeError("advance() without ready()")
        self._in_ready = False
        log = self._raft.log
        if ready.hard_state is not None:
            self._persisted = ready.hard_state
        if ready.snapshot is not None:
            log.unstable_snapshot = False
        if ready.entries:
            log.stable = ready.entries[-1].index
        if ready.committed_entries:
            log.applied = ready.committed_entries[-1].index
        self._raft.on_persisted()

    def _check_idle(self) -> None:
        if self._in_ready:
            raise RuntimeError("call advance() before feeding the node again")

    def _hard_state(self) -> HardState:
        raft = self._raft
        return HardState(raft.term, raft.vote, raft.log.committed)

    # ---- observation (the embedding program and the simulator's checker read these) -------

    @property
    def id(self) -> int:
        return self._raft.id

    @property
    def role(self) -> Role:
        return self._raft.role

    @property
    def leader(self) -> int:
        return self._raft.leader

    @property
    def term(self) -> int:
        return self._raft.term

    @property
    def log(self) -> RaftLog:
        return self._raft.log

    def is_serving(self) -> bool:
        """Leader with an entry of its own term committed: proposals and reads are accepted."""
        return self._raft.role is Role.LEADER and self._raft.committed_in_current_term()
