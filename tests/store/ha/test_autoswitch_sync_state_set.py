"""The controller-mode master's SyncStateSet over a live link: expand and shrink proposals
(to be forwarded to the controller), the union while a change is pending, the ack rule of
SYNC sends, minInSyncReplicas, and the torn tail cut before a broker becomes master."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.store.ha.epoch_file import EpochEntry, read_epoch_file
from rocketq.store.results import PutMessageStatus
from rocketq.testing.autoswitch import (
    HandDrivenSlave,
    autoswitch,
    open_controller_mode_store,
    transferred_up_to,
)
from rocketq.testing.store import new_msg
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(60)

NOT_CATCHUP_MS = 300


class Master:
    """A controller-mode master on a hand-moved clock, its proposals in a queue."""

    def __init__(self, root: Path, **overrides: Any) -> None:
        self.now_ms = 1_700_000_000_000
        self.store = open_controller_mode_store(
            root,
            1,
            ha_max_time_slave_not_catchup_ms=NOT_CATCHUP_MS,
            clock_ms=lambda: self.now_ms,
            **overrides,
        )
        self.service = autoswitch(self.store)
        self.proposals: queue.Queue[frozenset[int]] = queue.Queue()
        self.service.register_sync_state_set_changed_listener(self.proposals.put)
        assert self.service.change_to_master(1)

    def proposal(self) -> frozenset[int]:
        return self.proposals.get(timeout=10)

    def slave(self, broker_id: int = 2, **kwargs: Any) -> HandDrivenSlave:
        slave = HandDrivenSlave(self.store, broker_id, **kwargs)
        slave.read_until(lambda frames: len(frames) >= 1)  # the master's handshake
        return slave


@pytest.fixture
def master(tmp_path: Path) -> Iterator[Master]:
    m = Master(tmp_path / "m")
    yield m
    m.store.shutdown()


def test_caught_up_slave_is_proposed_for_expansion_and_a_lagging_one_for_shrink(
    master: Master,
) -> None:
    slave = master.slave()
    try:
        master.store.put_message(new_msg())
        slave.ack(master.store.get_max_phy_offset())  # caught up with everything
        assert master.proposal() == frozenset({1, 2})
        master.service.set_sync_state_set(frozenset({1, 2}))  # the controller committed it
        assert master.service.maybe_shrink_sync_state_set() is None  # in time
        master.store.put_message(new_msg())  # the slave does not ack this one ...
        slave.read_until(transferred_up_to(master.store.get_max_phy_offset()))
        master.now_ms += NOT_CATCHUP_MS + 1  # ... for longer than haMaxTimeSlaveNotCatchup
        assert master.service.maybe_shrink_sync_state_set() == frozenset({1})
        assert master.proposal() == frozenset({1})
        assert master.service.sync_state_set() == frozenset({1, 2})  # union until committed
        master.service.set_sync_state_set(frozenset({1}))
        assert master.service.sync_state_set() == frozenset({1})
    finally:
        slave.close()


def test_closed_link_proposes_dropping_its_slave(master: Master) -> None:
    slave = master.slave()
    slave.ack(master.store.get_max_phy_offset())
    assert master.proposal() == frozenset({1, 2})
    master.service.set_sync_state_set(frozenset({1, 2}))
    slave.close()
    assert master.proposal() == frozenset({1})


def test_async_learner_is_never_proposed(master: Master) -> None:
    learner = master.slave(3, async_learner=True)
    try:
        learner.ack(master.store.get_max_phy_offset())
        assert until_sync(lambda: master.service.connections[0].slave_ack_offset >= 0, 10)
        assert master.service.maybe_shrink_sync_state_set() is None
        assert master.proposals.empty()
    finally:
        learner.close()


def test_all_ack_waits_for_every_member_in_force_until_the_shrink_commits(
    tmp_path: Path,
) -> None:
    m = Master(tmp_path / "m", all_ack_in_sync_state_set=True)
    slave = m.slave()
    try:
        slave.ack(0)
        m.service.set_sync_state_set(frozenset({1, 2}))
        sent = m.store.async_put_message(new_msg())
        end = m.store.get_max_phy_offset()
        slave.read_until(transferred_up_to(end))
        slave.ack(end - 1)
        m.now_ms += NOT_CATCHUP_MS + 1
        assert m.service.maybe_shrink_sync_state_set() == frozenset({1})
        assert not sent.done()  # pending shrink: the leaving slave still counts
        m.service.set_sync_state_set(frozenset({1}))
        assert sent.result(10).status is PutMessageStatus.PUT_OK  # committed: master alone
        assert m.store.put_message(new_msg()).status is PutMessageStatus.PUT_OK
    finally:
        slave.close()
        m.store.shutdown()


def test_in_sync_replicas_counts_copies_without_all_ack(tmp_path: Path) -> None:
    m = Master(tmp_path / "m", in_sync_replicas=2)
    slave = m.slave()
    try:
        slave.ack(0)
        sent = m.store.async_put_message(new_msg())
        assert not sent.done()
        slave.ack(m.store.get_max_phy_offset())
        assert sent.result(10).status is PutMessageStatus.PUT_OK
    finally:
        slave.close()
        m.store.shutdown()


def test_puts_are_refused_below_min_in_sync_replicas(tmp_path: Path) -> None:
    m = Master(tmp_path / "m", min_in_sync_replicas=2)
    try:
        refused = m.store.put_message(new_msg())
        assert refused.status is PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH
        assert m.store.get_max_phy_offset() == 0  # refused before the append
        slave = m.slave()
        try:
            slave.ack(0)
            assert m.proposal() == frozenset({1, 2})  # expanding: the larger set counts
            assert m.store.put_message(new_msg()).status is PutMessageStatus.PUT_OK
        finally:
            slave.close()
    finally:
        m.store.shutdown()


def test_store_without_a_role_refuses_puts(tmp_path: Path) -> None:
    store = open_controller_mode_store(tmp_path / "s", 1)
    try:
        status = store.put_message(new_msg()).status
        assert status is PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH
    finally:
        store.shutdown()


def test_becoming_master_cuts_a_torn_tail_and_keeps_every_valid_byte(
    tmp_path: Path,
) -> None:
    store = open_controller_mode_store(tmp_path / "s", 1)
    try:
        service = autoswitch(store)
        assert service.change_to_master(1)
        for i in range(5):
            store.put_message(new_msg(body=b"%d" % i))
        valid = store.get_max_phy_offset()
        head = (400).to_bytes(4, "big") + bytes.fromhex("daa320a7")  # a record cut mid-way
        assert store.commit_log.append_data(valid, head + b"x" * 50)
        assert not service.change_to_master(0)  # below the last epoch: refused
        assert service.change_to_master(2)
        assert store.get_max_phy_offset() == valid
        assert read_epoch_file(store.config.epoch_file_path) == [
            EpochEntry(1, 0),
            EpochEntry(2, valid),
        ]
        assert store.get_max_offset_in_queue("TopicTest", 0) == 5
    finally:
        store.shutdown()


def test_no_subtraction_overflow_in_the_consistent_point() -> None:
    from rocketq.store.ha.epoch_file import find_consistent_point

    far = 1 << 62
    local = [EpochEntry(1, 0), EpochEntry(2, far)]
    master = [EpochEntry(1, 0), EpochEntry(3, 3)]
    assert find_consistent_point(local, far + (1 << 40), master, far * 2) == 3
