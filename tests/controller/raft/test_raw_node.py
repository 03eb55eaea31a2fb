"""The Ready contract: what a RawNode hands out to persist comes with the messages that depend
on it, a leader counts only persisted entries, and it serves only after its no-op commits."""

from __future__ import annotations

import random

import pytest

from rocketq.controller.raft import (
    Entry,
    HardState,
    Message,
    MessageType,
    RaftConfig,
    RawNode,
    Ready,
    RestoredState,
    Role,
)

PEERS = (1, 2, 3)


def node(node_id: int, peers: tuple[int, ...] = PEERS, **options: object) -> RawNode:
    config = RaftConfig(node_id=node_id, peers=peers, rng=random.Random(node_id), **options)  # type: ignore[arg-type]
    return RawNode(config)


def drain(raw: RawNode) -> Ready:
    ready = raw.ready()
    raw.advance(ready)
    return ready


def elect(raw: RawNode) -> list[Message]:
    """Make ``raw`` (with pre-vote) the leader of a 3-node group; return its append messages."""
    raw.campaign()
    drain(raw)
    raw.step(Message(MessageType.PRE_VOTE_RESPONSE, raw.id, 2, raw.term + 1))
    drain(raw)
    raw.step(Message(MessageType.VOTE_RESPONSE, raw.id, 2, raw.term))
    ready = drain(raw)
    assert raw.role is Role.LEADER
    return [m for m in ready.messages if m.type is MessageType.APPEND]


def test_a_candidate_hands_out_its_vote_to_persist_with_its_vote_requests() -> None:
    raw = node(1, pre_vote=False)
    raw.campaign()
    ready = raw.ready()
    assert ready.hard_state == HardState(term=1, vote=1, commit=0)
    assert {m.type for m in ready.messages} == {MessageType.VOTE}


def test_a_granted_vote_is_persisted_with_the_grant() -> None:
    raw = node(2)
    raw.step(Message(MessageType.VOTE, 2, 1, term=5, index=0, log_term=0))
    ready = raw.ready()
    assert ready.hard_state == HardState(term=5, vote=1, commit=0)
    assert [(m.type, m.reject) for m in ready.messages] == [(MessageType.VOTE_RESPONSE, False)]


def test_an_append_is_acknowledged_in_the_ready_that_persists_it() -> None:
    raw = node(2)
    entries = (Entry(1, 1, b""), Entry(2, 1, b"x"))
    raw.step(Message(MessageType.APPEND, 2, 1, term=1, index=0, log_term=0, entries=entries))
    ready = raw.ready()
    assert ready.entries == entries
    assert [(m.type, m.index) for m in ready.messages] == [(MessageType.APPEND_RESPONSE, 2)]


def test_a_single_node_commits_its_entry_only_after_persisting_it() -> None:
    raw = node(1, peers=(1,))
    raw.campaign()
    ready = raw.ready()
    assert raw.role is Role.LEADER
    assert ready.entries == (Entry(1, 1, b""),)
    assert ready.committed_entries == ()  # the no-op is not on disk yet
    raw.advance(ready)
    assert raw.ready().committed_entries == (Entry(1, 1, b""),)


def test_a_new_leader_serves_only_after_its_no_op_commits() -> None:
    raw = node(1)
    elect(raw)
    assert raw.propose(b"x") is None
    assert raw.read_index(b"r") is False
    raw.step(Message(MessageType.APPEND_RESPONSE, 1, 2, raw.term, index=1))
    drain(raw)
    assert raw.is_serving()
    assert raw.propose(b"x") == 2


def test_a_read_index_waits_for_a_quorum_heartbeat() -> None:
    raw = node(1)
    elect(raw)
    raw.step(Message(MessageType.APPEND_RESPONSE, 1, 2, raw.term, index=1))
    drain(raw)
    assert raw.read_index(b"r")
    ready = drain(raw)
    assert ready.read_states == ()
    assert any(m.type is MessageType.HEARTBEAT and m.context == b"r" for m in ready.messages)
    raw.step(Message(MessageType.HEARTBEAT_RESPONSE, 1, 3, raw.term, context=b"r"))
    assert [(s.index, s.context) for s in drain(raw).read_states] == [(1, b"r")]


def test_an_isolated_leader_steps_down_after_an_election_timeout() -> None:
    raw = node(1)
    elect(raw)
    for _ in range(10):
        raw.tick()
        drain(raw)
    assert raw.role is Role.FOLLOWER


def test_a_follower_that_heard_from_its_leader_ignores_a_vote_request() -> None:
    raw = node(2)
    raw.step(Message(MessageType.HEARTBEAT, 2, 1, term=1))
    drain(raw)
    raw.step(Message(MessageType.PRE_VOTE, 2, 3, term=2, index=5, log_term=1))
    raw.step(Message(MessageType.VOTE, 2, 3, term=2, index=5, log_term=1))
    assert raw.term == 1
    assert raw.ready().messages == ()


def test_a_restarted_node_applies_its_committed_entries_again() -> None:
    entries = [Entry(1, 1, b""), Entry(2, 1, b"a"), Entry(3, 1, b"b")]
    raw = RawNode(
        RaftConfig(node_id=1, peers=PEERS, rng=random.Random(0)),
        RestoredState(HardState(term=1, vote=1, commit=2), entries=entries),
    )
    ready = raw.ready()
    assert ready.committed_entries == tuple(entries[:2])
    assert ready.entries == ()


def test_feeding_the_node_between_ready_and_advance_is_refused() -> None:
    raw = node(1)
    raw.campaign()
    raw.ready()
    with pytest.raises(RuntimeError):
        raw.tick()
