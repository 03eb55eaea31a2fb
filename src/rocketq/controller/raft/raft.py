"""``Raft``: the consensus state machine, one ``step`` per peer message and one ``tick`` per clock
tick (etcd-io/raft's ``raft.go``); ``raw_node.py`` wraps it in the Ready contract.

Theory of operation:
- Elections (Raft paper section 5.2) start with a PreVote round (thesis section 9.6): a node
  asks whether it could win at term + 1 without moving to it, so a node that rejoins after a
  partition cannot disrupt a healthy leader by inflating terms.
- CheckQuorum (thesis section 6.2): a leader that has not heard from a quorum within an
  election timeout steps down; a node that heard from a leader within the (minimum) election
  timeout ignores vote and pre-vote requests. Messages of a lower term from a leader are
  answered, so that a leader left behind learns the new term.
- A new leader appends an empty entry and serves proposals and reads only once an entry of its
  own term is committed (thesis section 6.4); entries are committed by counting replicas only
  when they are of the current term (paper section 5.4.2, Figure 8).
- Reads use ReadIndex (thesis section 6.4): the leader records its commit index, confirms it
  is still leader with a heartbeat round a quorum answers, and hands back a ``ReadState``.
- A leader counts its own log only up to what the program has persisted (``advance``), so nothing
  is committed on the strength of an unsynced local write.
"""

from __future__ import annotations

from rocketq.controller.raft.config import RaftConfig
from rocketq.controller.raft.log import RaftLog
from rocketq.controller.raft.message import (
    NONE,
    RESPONSE_OF,
    Entry,
    HardState,
    Message,
    MessageType,
    ReadState,
    Snapshot,
)
from rocketq.controller.raft.progress import Progress, quorum_index
from rocketq.controller.raft.read_only import ReadOnly
from rocketq.controller.raft.role import Role

MT = MessageType


class Raft:
    def __init__(
        self, config: RaftConfig, hard: HardState, snapshot: Snapshot, entries: list[Entry]
    ):
        self.config = config
        self.id = config.node_id
        self.log = RaftLog(snapshot, entries, hard.commit)
        self.term = hard.term
        self.vote = hard.vote
        self.role = Role.FOLLOWER
        self.leader = NONE
        self.messages: list[Message] = []
        self.read_states: list[ReadState] = []
        self.progress: dict[int, Progress] = {}
        self.votes: dict[int, bool] = {}
        self.reads = ReadOnly(self.id, config.quorum)
        self.election_elapsed = 0
        self.heartbeat_elapsed = 0
        self.randomized_timeout = 0
        self.become_follower(self.term, NONE)

    # ---- roles -------------------------------------------------------------------------------

    def _reset(self, term: int) -> None:
        if term != self.term:
            self.term = term
            self.vote = NONE
        self.leader = NONE
        self.election_elapsed = self.heartbeat_elapsed = 0
        tick = self.config.election_tick
        self.randomized_timeout = tick + self.config.rng.randrange(0, tick)
        self.votes = {}
        self.progress = {}
        self.reads = ReadOnly(self.id, self.config.quorum)

    def become_follower(self, term: int, leader: int) -> None:
        self._reset(term)
        self.role = Role.FOLLOWER
        self.leader = leader

    def become_leader(self) -> None:
        self._reset(self.term)
        self.role = Role.LEADER
        self.leader = self.id
        nxt = self.log.last_index + 1
        self.progress = {peer: Progress(next=nxt) for peer in self.config.peers}
        self.progress[self.id].match = self.log.stable
        self.log.append(Entry(nxt, self.term))  # the no-op of thesis section 6.4
        self.broadcast_append()

    def campaign(self, pre: bool) -> None:
        if pre:
            self._reset(self.term)
            self.role = Role.PRE_CANDIDATE
            kind, term = MT.PRE_VOTE, self.term + 1
        else:
            self._reset(self.term + 1)
            self.role = Role.CANDIDATE
            self.vote = self.id  # persisted (Ready.hard_state) before the requests leave
            kind, term = MT.VOTE, self.term
        if self._poll(self.id, granted=True):
            return
        for peer in self.config.peers:
            if peer != self.id:
                self.send(
                    kind, peer, term=term, index=self.log.last_index, log_term=self.log.last_term
                )

    def _poll(self, voter: int, granted: bool) -> bool:
        """Record a vote; act on the result. True when the round is decided."""
        self.votes.setdefault(voter, granted)
        yes = sum(self.votes.values())
        if yes >= self.config.quorum:
            if self.role is Role.PRE_CANDIDATE:
                self.campaign(pre=False)
            else:
                self.become_leader()
            return True
        if len(self.votes) - yes >= self.config.quorum:
            self.become_follower(self.term, NONE)
            return True
        return False

    # ---- clock -------------------------------------------------------------------------------

    def tick(self) -> None:
        self.election_elapsed += 1
        if self.role is not Role.LEADER:
            if self.election_elapsed >= self.randomized_timeout:
                self.campaign(pre=self.config.pre_vote)
            return
        if self.election_elapsed >= self.config.election_tick:
            self.election_elapsed = 0
            if self.config.check_quorum and not self._quorum_active():
                self.become_follower(self.term, NONE)
                return
        self.heartbeat_elapsed += 1
        if self.heartbeat_elapsed >= self.config.heartbeat_tick:
            self.heartbeat_elapsed = 0
            self.broadcast_heartbeat(self.reads.last_context())

    def _quorum_active(self) -> bool:
        active = 0
        for peer, progress in self.progress.items():
            if peer == self.id or progress.recent_active:
                active += 1
            progress.recent_active = False
        return active >= self.config.quorum

    # ---- messages ----------------------------------------------------------------------------

    def send(
        self, kind: MessageType, to: int, *, term: int | None = None, **fields: object
    ) -> None:
        term = self.term if term is None else term
        self.messages.append(Message(kind, to, self.id, term, **fields))  # type: ignore[arg-type]

    def step(self, m: Message) -> None:
        if m.term > self.term:
            if m.type in (MT.VOTE, MT.PRE_VOTE) and self._in_lease():
                return  # heard from a leader recently: not disrupted (thesis section 4.2.3)
            if m.type is MT.PRE_VOTE or (m.type is MT.PRE_VOTE_RESPONSE and not m.reject):
                pass  # a pre-vote never moves a term
            elif m.type in (MT.APPEND, MT.HEARTBEAT, MT.SNAPSHOT):
                self.become_follower(m.term, m.sender)
            else:
                self.become_follower(m.term, NONE)
        elif m.term < self.term:
            self._step_stale(m)
            return
        if m.type in (MT.VOTE, MT.PRE_VOTE):
            self._step_vote(m)
        elif self.role is Role.LEADER:
            self._step_leader(m)
        elif m.type in (MT.APPEND, MT.HEARTBEAT, MT.SNAPSHOT):
            if self.role is not Role.FOLLOWER:
                self.become_follower(m.term, m.sender)
            self._step_follower(m)
        elif self.role is not Role.FOLLOWER:
            self._step_candidate(m)

    def _in_lease(self) -> bool:
        return (
            self.config.check_quorum
            and self.leader != NONE
            and self.election_elapsed < self.config.election_tick
        )

    def _step_stale(self, m: Message) -> None:
        if m.type in (MT.APPEND, MT.HEARTBEAT) and (
            self.config.check_quorum or self.config.pre_vote
        ):
            # the sender is a leader of an older term, or we moved on during a partition: tell it
            self.send(MT.APPEND_RESPONSE, m.sender)
        elif m.type is MT.PRE_VOTE:
            self.send(MT.PRE_VOTE_RESPONSE, m.sender, reject=True)

    def _step_vote(self, m: Message) -> None:
        can_vote = (
            self.vote == m.sender
            or (self.vote == NONE and self.leader == NONE)
            or (m.type is MT.PRE_VOTE and m.term > self.term)
        )
        if can_vote and self.log.is_up_to_date(m.index, m.log_term):
            self.send(RESPONSE_OF[m.type], m.sender, term=m.term)
            if m.type is MT.VOTE:
                self.election_elapsed = 0
                self.vote = m.sender
        else:
            self.send(RESPONSE_OF[m.type], m.sender, reject=True)

    def _step_candidate(self, m: Message) -> None:
        wanted = MT.PRE_VOTE_RESPONSE if self.role is Role.PRE_CANDIDATE else MT.VOTE_RESPONSE
        if m.type is wanted:
            self._poll(m.sender, granted=not m.reject)

    def _step_follower(self, m: Message) -> None:
        self.election_elapsed = 0
        self.leader = m.sender
        if m.type is MT.APPEND:
            self._handle_append(m)
        elif m.type is MT.HEARTBEAT:
            self.log.commit_to(m.commit)
            self.send(MT.HEARTBEAT_RESPONSE, m.sender, context=m.context)
        else:
            self._handle_snapshot(m)

    def _handle_append(self, m: Message) -> None:
        if m.index < self.log.committed:
            self.send(MT.APPEND_RESPONSE, m.sender, index=self.log.committed)
            return
        last_new = self.log.maybe_append(m.index, m.log_term, m.commit, m.entries)
        if last_new is None:
            hint = self.log.last_index
            self.send(MT.APPEND_RESPONSE, m.sender, index=m.index, reject=True, reject_hint=hint)
        else:
            self.send(MT.APPEND_RESPONSE, m.sender, index=last_new)

    def _handle_snapshot(self, m: Message) -> None:
        snapshot = m.snapshot
        assert snapshot is not None
        if snapshot.index > self.log.committed:
            if self.log.match_term(snapshot.index, snapshot.term):
                self.log.commit_to(snapshot.index)
            else:
                self.log.restore(snapshot)
        self.send(MT.APPEND_RESPONSE, m.sender, index=self.log.committed)

    # ---- leader ------------------------------------------------------------------------------

    def _step_leader(self, m: Message) -> None:
        progress = self.progress.get(m.sender)
        if progress is None:
            return
        progress.recent_active = True
        if m.type is MT.APPEND_RESPONSE:
            if m.reject:
                if progress.decrease_to(m.index, m.reject_hint):
                    self.send_append(m.sender)
            elif progress.update(m.index) and self.maybe_commit():
                self.broadcast_append()
            else:
                self.send_append(m.sender, empty=False)
        elif m.type is MT.HEARTBEAT_RESPONSE:
            progress.paused = False
            if progress.match < self.log.last_index:
                self.send_append(m.sender)
            if m.context:
                self.read_states.extend(self.reads.ack(m.context, m.sender))

    def maybe_commit(self) -> bool:
        index = quorum_index([p.match for p in self.progress.values()], self.config.quorum)
        if index <= self.log.committed:
            return False
        if (
            self.log.term(index) != self.term
            and not self.config.unsafe_commit_previous_term_by_counting
        ):
            return False  # Figure 8: an older term's entry commits only under one of this term
        return self.log.commit_to(index)

    def send_append(self, to: int, empty: bool = True) -> None:
        progress = self.progress[to]
        if progress.paused or (not empty and progress.next > self.log.last_index):
            return
        prev = progress.next - 1
        prev_term = self.log.term(prev)
        progress.paused = True
        if prev_term is None or prev < self.log.snapshot.index:
            self.send(MT.SNAPSHOT, to, snapshot=self.log.snapshot)
            return
        high = min(self.log.last_index + 1, progress.next + self.config.max_entries_per_append)
        entries = tuple(self.log.slice(progress.next, high))
        commit = self.log.committed
        self.send(MT.APPEND, to, index=prev, log_term=prev_term, entries=entries, commit=commit)

    def broadcast_append(self) -> None:
        for peer in self.config.peers:
            if peer != self.id:
                self.send_append(peer)

    def broadcast_heartbeat(self, context: bytes) -> None:
        for peer, progress in self.progress.items():
            if peer != self.id:
                commit = min(progress.match, self.log.committed)
                self.send(MT.HEARTBEAT, peer, commit=commit, context=context)

    def committed_in_current_term(self) -> bool:
        return self.log.term(self.log.committed) == self.term

    def read_index(self, context: bytes) -> bool:
        if self.role is not Role.LEADER or not self.committed_in_current_term():
            return False
        released = self.reads.add(context, self.log.committed)
        if released:
            self.read_states.extend(released)
        else:
            self.broadcast_heartbeat(context)
        return True

    def propose(self, data: bytes) -> int | None:
        if not data:
            raise ValueError("empty data is reserved for the leader's no-op entry")
        if self.role is not Role.LEADER or not self.committed_in_current_term():
            return None
        index = self.log.last_index + 1
        self.log.append(Entry(index, self.term, data))
        self.broadcast_append()
        return index

    def on_persisted(self) -> None:
        """The program persisted the log up to ``log.stable``: a leader now counts itself."""
        leader = self.role is Role.LEADER
        if leader and self.progress[self.id].update(self.log.stable) and self.maybe_commit():
            self.broadcast_append()
