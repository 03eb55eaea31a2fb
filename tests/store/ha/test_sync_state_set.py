"""The master's SyncStateSet: shrink and expand proposals, the union while a change is
pending (issue #5663), the confirm offset and the all-ack rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.store.ha.sync_state_set import SyncStateSetTracker


def tracker(members: set[int]) -> SyncStateSetTracker:
    return SyncStateSetTracker(1, frozenset(members), max_not_catchup_ms=5_000)


def test_a_lagging_or_unconnected_slave_is_proposed_out() -> None:
    t = tracker({1, 2, 3})
    t.update_caught_up_time(2, 10_000)
    t.update_caught_up_time(3, 4_000)
    assert t.maybe_shrink(10_000) == {1, 2}
    t.set_sync_state_set(frozenset({1, 2}))
    t.remove_connection(2)
    assert t.maybe_shrink(10_001) == {1}
    t.set_sync_state_set(frozenset({1}))
    assert t.maybe_shrink(99_999) is None


def test_while_a_shrink_is_pending_the_leaving_slave_must_still_ack() -> None:
    t = tracker({1, 2})
    assert t.maybe_shrink(60_000) == {1}
    assert t.sync_state_set() == {1, 2}
    assert not t.all_acked(500, {})
    assert t.all_acked(500, {2: 500})
    t.set_sync_state_set(frozenset({1}))
    assert t.all_acked(500, {})


def test_a_slave_joins_once_it_reached_the_confirm_offset_and_the_epoch_start() -> None:
    t = tracker({1})
    assert t.maybe_expand(2, 90, confirm_offset=100, epoch_start_offset=0) is None
    assert t.maybe_expand(2, 100, confirm_offset=100, epoch_start_offset=150) is None
    assert (
        t.maybe_expand(3, 900, confirm_offset=100, epoch_start_offset=0, is_async_learner=True)
        is None
    )
    assert t.maybe_expand(2, 200, confirm_offset=100, epoch_start_offset=150) == {1, 2}
    assert t.is_synchronizing
    assert not t.all_acked(300, {})  # the joining slave counts before the commit
    t.set_sync_state_set(frozenset({1, 2}))
    assert not t.is_synchronizing
    assert t.maybe_expand(2, 999, confirm_offset=0, epoch_start_offset=0) is None


def test_confirm_offset_is_the_lowest_member_ack_and_waits_for_a_lost_member() -> None:
    t = tracker({1, 2, 3})
    assert t.compute_confirm_offset(1_000, {2: 700, 3: 900}, 500) == 700
    assert t.compute_confirm_offset(600, {2: 700, 3: 900}, 500) == 600
    assert t.compute_confirm_offset(1_000, {2: 700}, 500) == 500  # 3 lost its connection
    assert tracker({1}).compute_confirm_offset(1_000, {}, 0) == 1_000


def test_confirm_offset_never_passes_a_member_that_holds_nothing() -> None:
    t = tracker({1, 2, 3})
    assert t.compute_confirm_offset(1_000, {2: 0, 3: 900}, 500) == 0  # RocketMQ would say 900
    assert t.compute_confirm_offset(1_000, {2: -1, 3: 900}, 500) == 500  # not acked yet


def test_ack_rule_all_members_in_force_or_a_count_of_copies() -> None:
    t = tracker({1, 2, 3})
    acks = {2: 700, 3: 900, 4: 950}
    assert t.ack_offset(1_000, acks, all_ack=True, in_sync_replicas=1) == 700
    assert t.ack_offset(1_000, acks, all_ack=False, in_sync_replicas=1) == 1_000
    assert t.ack_offset(1_000, acks, all_ack=False, in_sync_replicas=3) == 900
    assert t.ack_offset(1_000, acks, all_ack=False, in_sync_replicas=5) == -1
    assert tracker({1}).ack_offset(1_000, {}, all_ack=True, in_sync_replicas=2) == 1_000


@given(
    st.frozensets(st.integers(2, 6)),
    st.lists(st.tuples(st.booleans(), st.integers(2, 6), st.integers(0, 20_000)), max_size=12),
)
def test_the_set_in_force_always_holds_committed_and_proposed_members(
    committed: frozenset[int], steps: list[tuple[bool, int, int]]
) -> None:
    t = tracker(set(committed))
    for shrink, slave, value in steps:
        proposal = (
            t.maybe_shrink(value)
            if shrink
            else t.maybe_expand(slave, value, confirm_offset=5_000, epoch_start_offset=0)
        )
        t.update_caught_up_time(slave, value)
        in_force = t.sync_state_set()
        assert t.local <= in_force
        assert 1 in in_force
        if proposal is not None:
            assert proposal <= in_force


def test_a_proposal_made_while_another_is_pending_keeps_the_other_in_force() -> None:
    """An expansion the controller committed with its answer lost (a partition beginning),
    then a shrink computed from the committed set: the joining slave, which the controller
    may elect, must still ack every send until the controller's set is adopted."""
    t = tracker({1, 3})
    t.update_caught_up_time(3, 1_000)
    assert t.maybe_expand(2, 500, confirm_offset=400, epoch_start_offset=0) == {1, 2, 3}
    assert t.maybe_shrink(60_000) == {1}  # 3 lags; computed from the committed {1, 3}
    assert t.sync_state_set() == {1, 2, 3}
    assert not t.all_acked(500, {3: 500})  # 2 has not acked
    assert t.ack_offset(500, {3: 500}, all_ack=True, in_sync_replicas=1) < 500
    assert t.all_acked(500, {2: 500, 3: 500})
    t.set_sync_state_set(frozenset({1, 2, 3}))  # the controller's set, adopted
    assert not t.is_synchronizing
    assert t.sync_state_set() == {1, 2, 3}
