"""Controller-mode replication between stores in one process over loopback sockets: epochs,
truncation to the consistent point on rejoin, the confirm offset bounding consume queues."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.store.config import BrokerRole
from rocketq.store.ha.autoswitch_frames import MasterHandshake, MasterTransfer
from rocketq.store.ha.epoch_file import EpochEntry, read_epoch_file
from rocketq.store.message_store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.testing.autoswitch import (
    HandDrivenSlave,
    autoswitch,
    ha_address,
    open_controller_mode_store,
    transferred_up_to,
)
from rocketq.testing.store import commitlog_bytes, new_msg, open_ha_store
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[list[MessageStore]]:
    opened: list[MessageStore] = []
    yield opened
    for store in opened:
        store.shutdown()


def put(store: MessageStore, count: int, prefix: str, queue_id: int = 0) -> int:
    for i in range(count):
        msg = new_msg(queue_id=queue_id, body=b"b" * 300, properties={"KEYS": f"{prefix}-{i}"})
        result = store.put_message(msg)
        assert result.status is PutMessageStatus.PUT_OK, result.status
    return store.get_max_phy_offset()


def caught_up(slave: MessageStore, master: MessageStore) -> bool:
    return slave.get_max_phy_offset() == master.get_max_phy_offset()


def epochs(store: MessageStore) -> list[EpochEntry]:
    return read_epoch_file(store.config.epoch_file_path)


def queue_units(store: MessageStore, queue_id: int = 0) -> list[tuple[int, int, int]]:
    cq = store.find_consume_queue("TopicTest", queue_id, create=False)
    if cq is None:
        return []
    low, high = cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue()
    return [u for i in range(low, high) if (u := cq.get_unit(i)) is not None]


def test_slave_copies_the_log_and_the_epochs_and_serves_only_what_is_confirmed(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    master = open_controller_mode_store(tmp_path / "a", 1)
    slave = open_controller_mode_store(tmp_path / "b", 2)
    stores += [slave, master]
    assert autoswitch(master).change_to_master(1)
    put(master, 20, "e1")
    assert autoswitch(slave).change_to_slave(ha_address(master), 1, 2)
    assert until_sync(lambda: caught_up(slave, master), 10)
    assert autoswitch(master).change_to_master(2)  # re-elected: the link is re-made
    end = put(master, 150, "e2")  # rolls over 64 KiB files
    assert until_sync(lambda: slave.get_max_phy_offset() == end, 10)
    assert commitlog_bytes(slave) == commitlog_bytes(master)
    assert (
        epochs(slave)
        == epochs(master)
        == [EpochEntry(1, 0), EpochEntry(2, epochs(master)[1].start_offset)]
    )
    assert until_sync(lambda: autoswitch(slave).get_confirm_offset() == end, 10)
    assert slave.wait_for_dispatch(10)
    assert len(queue_units(slave)) == 170
    assert all(o + s <= autoswitch(slave).get_confirm_offset() for o, s, _ in queue_units(slave))


def test_master_batches_never_span_two_epochs(tmp_path: Path, stores: list[MessageStore]) -> None:
    master = open_controller_mode_store(tmp_path / "a", 1, ha_transfer_batch_size=64 * 1024)
    stores.append(master)
    service = autoswitch(master)
    assert service.change_to_master(1)
    first_end = put(master, 10, "e1")
    assert service.change_to_master(2)
    second_end = put(master, 10, "e2")
    assert service.change_to_master(3)
    end = put(master, 10, "e3")
    slave = HandDrivenSlave(master, 2)
    try:
        (hello,) = slave.read_until(lambda f: len(f) >= 1)
        assert hello == MasterHandshake(end, 3, tuple(service.epoch_cache.all_entries()))
        slave.ack(0)
        frames = slave.read_until(transferred_up_to(end))
    finally:
        slave.close()
    bounds = {1: (0, first_end), 2: (first_end, second_end), 3: (second_end, end)}
    data = [f for f in frames if isinstance(f, MasterTransfer) and f.data]
    assert {f.epoch for f in data} == {1, 2, 3}
    for f in data:
        low, high = bounds[f.epoch]
        assert f.epoch_start_offset == low
        assert low <= f.offset
        assert f.offset + len(f.data) <= high
    assert b"".join(f.data for f in data) == commitlog_bytes(master)


def test_old_master_rejoining_cuts_its_diverged_tail_to_the_consistent_point(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    a = open_controller_mode_store(tmp_path / "a", 1)
    b = open_controller_mode_store(tmp_path / "b", 2)
    stores += [a, b]
    assert autoswitch(a).change_to_master(1)
    shared = put(a, 30, "shared")
    assert autoswitch(b).change_to_slave(ha_address(a), 1, 2)
    assert until_sync(lambda: caught_up(b, a), 10)
    assert autoswitch(b).change_to_master(3)  # b elected at 3 while a is cut off ...
    assert autoswitch(a).change_to_master(2)  # ... and a wrote on at 2, which b never had
    diverged = put(a, 25, "diverged")
    assert diverged > shared
    put(b, 40, "b3")
    assert epochs(a) == [EpochEntry(1, 0), EpochEntry(2, shared)]
    assert autoswitch(a).change_to_slave(ha_address(b), 3, 1)
    assert until_sync(lambda: caught_up(a, b) and epochs(a) == epochs(b), 10)
    assert epochs(a) == [EpochEntry(1, 0), EpochEntry(3, shared)]
    assert commitlog_bytes(a) == commitlog_bytes(b)
    assert os.listdir(tmp_path / "a" / "truncated")  # the cut bytes are kept aside
    assert a.wait_for_dispatch(10)
    assert [u[0] for u in queue_units(a)] == [u[0] for u in queue_units(b)]
    assert found(a, "diverged-3") == 0
    assert found(a, "shared-3") == found(a, "b3-3") == 1


def test_slave_without_a_consistent_point_refuses_and_keeps_its_log(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    a = open_controller_mode_store(tmp_path / "a", 1)
    b = open_controller_mode_store(tmp_path / "b", 2)
    stores += [a, b]
    assert autoswitch(a).change_to_master(5)
    mine = put(a, 5, "a5")
    assert autoswitch(b).change_to_master(6)
    put(b, 5, "b6")
    assert autoswitch(a).change_to_slave(ha_address(b), 6, 1)
    client = autoswitch(a).ha_client
    assert client is not None
    assert client.no_consistent_point.wait(10)
    assert a.get_max_phy_offset() == mine
    assert epochs(a) == [EpochEntry(5, 0)]


def test_master_consume_queues_stop_at_the_confirm_offset_of_the_in_sync_set(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    master = open_controller_mode_store(tmp_path / "a", 1, all_ack_in_sync_state_set=True)
    stores.append(master)
    service = autoswitch(master)
    assert service.change_to_master(1)
    service.set_sync_state_set(frozenset({1, 2}))
    slave = HandDrivenSlave(master, 2)
    try:
        slave.read_until(lambda f: len(f) >= 1)
        slave.ack(0)
        assert until_sync(lambda: service.connection_count == 1, 10)
        futures = [master.async_put_message(new_msg(body=b"%d" % i)) for i in range(6)]
        ends = [f.result(0) if f.done() else None for f in futures]
        assert ends == [None] * 6  # nobody acked yet: no send is answered
        slave.read_until(transferred_up_to(master.get_max_phy_offset()))
        third = queue_end(master, 3)
        slave.ack(third)
        assert until_sync(lambda: all(f.done() for f in futures[:3]), 10)
        assert not any(f.done() for f in futures[3:])
        master.reput_service.do_reput()
        assert len(queue_units(master)) == 3  # consumers see only what the slave has
        slave.ack(master.get_max_phy_offset())
        assert until_sync(lambda: all(f.done() for f in futures), 10)
        assert {f.result().status for f in futures} == {PutMessageStatus.PUT_OK}
        assert until_sync(lambda: len(queue_units(master)) == 6, 10)
    finally:
        slave.close()


def found(store: MessageStore, key: str) -> int:
    return len(store.query_messages("TopicTest", key, 10, 0, 2**62))


def queue_end(store: MessageStore, count: int) -> int:
    """The commitlog end of the first ``count`` records (read off the records themselves)."""
    requests, _, _ = store.commit_log.read_dispatch_requests(0, check_crc=False)
    last = requests[count - 1]
    return last.commit_log_offset + last.msg_size


def test_store_written_in_classic_mode_loses_nothing_in_controller_mode(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    classic = open_ha_store(tmp_path / "a", BrokerRole.SYNC_MASTER, sync_flush_timeout_ms=1)
    for i in range(40):
        classic.put_message(new_msg(queue_id=i % 2, body=b"c%d" % i))
    end = classic.get_max_phy_offset()
    before = commitlog_bytes(classic)
    classic.shutdown()
    a = open_controller_mode_store(tmp_path / "a", 1)
    b = open_controller_mode_store(tmp_path / "b", 2)
    stores += [a, b]
    assert autoswitch(a).change_to_master(1)
    assert epochs(a) == [EpochEntry(1, 0)]  # the classic bytes belong to the first epoch
    assert commitlog_bytes(a) == before
    assert a.get_max_phy_offset() == end
    for qid in (0, 1):
        assert a.get_max_offset_in_queue("TopicTest", qid) == 20
        assert a.get_message("g", "TopicTest", qid, 19, 1).message_buffers
    assert autoswitch(b).change_to_slave(ha_address(a), 1, 2)
    assert until_sync(lambda: caught_up(b, a), 10)
    assert commitlog_bytes(b) == before
    assert epochs(b) == epochs(a)


def test_slave_consume_queues_wait_for_the_confirm_offset_of_the_whole_set(
    tmp_path: Path, stores: list[MessageStore]
) -> None:
    master = open_controller_mode_store(tmp_path / "a", 1, all_ack_in_sync_state_set=True)
    slave = open_controller_mode_store(tmp_path / "b", 2)
    stores += [slave, master]
    service = autoswitch(master)
    assert service.change_to_master(1)
    assert autoswitch(slave).change_to_slave(ha_address(master), 1, 2)
    laggard = HandDrivenSlave(master, 3)
    try:
        laggard.read_until(lambda f: len(f) >= 1)
        laggard.ack(0)
        assert until_sync(lambda: service.connection_count == 2, 10)
        service.set_sync_state_set(frozenset({1, 2, 3}))
        sends = [master.async_put_message(new_msg(body=b"%d" % i)) for i in range(5)]
        assert until_sync(lambda: caught_up(slave, master), 10)
        first = queue_end(master, 1)
        laggard.ack(first)  # the set holds only the first record everywhere
        assert until_sync(lambda: autoswitch(slave).get_confirm_offset() == first, 10)
        assert slave.wait_for_dispatch(10)
        assert [u[0] + u[1] for u in queue_units(slave)] == [first]
        assert not sends[1].done()
        laggard.ack(master.get_max_phy_offset())
        assert until_sync(lambda: len(queue_units(slave)) == 5, 10)
        assert {s.result(10).status for s in sends} == {PutMessageStatus.PUT_OK}
    finally:
        laggard.close()
