"""Master and slave stores in one process, linked by the real HA service and client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.store.config import BrokerRole, FlushDiskType
from rocketq.store.message_store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.testing.store import commitlog_bytes, new_msg, open_ha_store, slave_linked
from rocketq.testing.wait import until_sync


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[MessageStore, MessageStore]]:
    master = open_ha_store(tmp_path / "master", BrokerRole.SYNC_MASTER)
    slave = open_ha_store(
        tmp_path / "slave",
        BrokerRole.SLAVE,
        ha_master_address=f"127.0.0.1:{master.ha_service.listen_port}",
    )
    try:
        assert until_sync(lambda: slave_linked(master), 10)
        yield master, slave
    finally:
        slave.shutdown()
        master.shutdown()


def test_sync_master_answers_put_ok_only_once_the_slave_has_the_bytes(
    pair: tuple[MessageStore, MessageStore],
) -> None:
    master, slave = pair
    for i in range(300):  # 64 KiB files: the copy rolls over several files
        result = master.put_message(new_msg(queue_id=i % 4, body=b"x" * 500 + str(i).encode()))
        assert result.status is PutMessageStatus.PUT_OK
        assert result.append_result is not None
        end = result.append_result.wrote_offset + result.append_result.wrote_bytes
        assert slave.get_max_phy_offset() >= end
    assert commitlog_bytes(slave) == commitlog_bytes(master)
    assert slave.wait_for_dispatch(10)
    for qid in range(4):
        assert slave.get_max_offset_in_queue("TopicTest", qid) == 75
        got = slave.get_message("g", "TopicTest", qid, 74, 1)
        assert got.message_buffers


def test_slave_refuses_puts_with_service_not_available(
    pair: tuple[MessageStore, MessageStore],
) -> None:
    _, slave = pair
    assert slave.put_message(new_msg()).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert slave.get_max_phy_offset() == 0


def test_sync_master_without_a_slave_answers_slave_not_available(tmp_path: Path) -> None:
    master = open_ha_store(tmp_path / "m", BrokerRole.SYNC_MASTER)
    try:
        result = master.put_message(new_msg())
        assert result.status is PutMessageStatus.SLAVE_NOT_AVAILABLE
        assert master.get_max_phy_offset() > 0  # stored all the same, as RocketMQ does
    finally:
        master.shutdown()


def test_sync_master_whose_slave_stopped_answering_times_out_with_flush_slave_timeout(
    tmp_path: Path,
) -> None:
    import socket

    master = open_ha_store(tmp_path / "m", BrokerRole.SYNC_MASTER, sync_flush_timeout_ms=300)
    # a "slave" that connects and reports once, then never again
    sock = socket.create_connection(("127.0.0.1", master.ha_service.listen_port), timeout=5)
    try:
        sock.sendall((0).to_bytes(8, "big"))
        assert until_sync(lambda: master.ha_service.connection_count == 1, 10)
        result = master.put_message(new_msg())
        assert result.status is PutMessageStatus.FLUSH_SLAVE_TIMEOUT
    finally:
        sock.close()
        master.shutdown()


def test_async_master_replicates_without_waiting(tmp_path: Path) -> None:
    import socket
    import time

    wait_ms = 5000  # how long a put that waited for the slave would take at least
    master = open_ha_store(
        tmp_path / "m",
        BrokerRole.ASYNC_MASTER,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
        sync_flush_timeout_ms=wait_ms,
    )
    try:
        # a held slave: it connects and reports offset 0 once, then acknowledges nothing
        held = socket.create_connection(("127.0.0.1", master.ha_service.listen_port), timeout=5)
        try:
            held.sendall((0).to_bytes(8, "big"))
            assert until_sync(lambda: master.ha_service.connection_count == 1, 10)
            # a SYNC_MASTER would wait for it and answer FLUSH_SLAVE_TIMEOUT
            for i in range(50):
                began = time.monotonic()
                result = master.put_message(new_msg(body=b"%d" % i))
                assert result.status is PutMessageStatus.PUT_OK
                assert time.monotonic() - began < wait_ms / 1000
            assert master.ha_service.push2slave_max_offset == 0  # no slave holds any of it
        finally:
            held.close()
        slave = open_ha_store(
            tmp_path / "s",
            BrokerRole.SLAVE,
            ha_master_address=f"127.0.0.1:{master.ha_service.listen_port}",
        )
        try:  # then a real slave catches up
            assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
            assert commitlog_bytes(slave) == commitlog_bytes(master)
        finally:
            slave.shutdown()
    finally:
        master.shutdown()


def test_frames_cut_inside_a_record_are_dispatched_once_the_rest_arrives(tmp_path: Path) -> None:
    master = open_ha_store(tmp_path / "m", BrokerRole.ASYNC_MASTER, ha_transfer_batch_size=100)
    slave = open_ha_store(
        tmp_path / "s",
        BrokerRole.SLAVE,
        ha_master_address=f"127.0.0.1:{master.ha_service.listen_port}",
    )
    try:
        for i in range(20):
            master.put_message(new_msg(body=b"b" * 333 + b"%d" % i))
        assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
        assert slave.wait_for_dispatch(10)
        assert slave.get_max_offset_in_queue("TopicTest", 0) == 20
    finally:
        slave.shutdown()
        master.shutdown()


def test_a_silent_slave_link_is_closed_after_the_housekeeping_interval(tmp_path: Path) -> None:
    import socket
    import time

    master = open_ha_store(tmp_path / "m", BrokerRole.ASYNC_MASTER, ha_housekeeping_interval_ms=500)
    sock = socket.create_connection(("127.0.0.1", master.ha_service.listen_port), timeout=5)
    try:
        sock.sendall((0).to_bytes(8, "big"))  # one report, then silence
        assert until_sync(lambda: master.ha_service.connection_count == 1, 10)
        silent_from = time.monotonic()
        assert until_sync(lambda: master.ha_service.connection_count == 0, 15)
        assert time.monotonic() - silent_from >= 0.4
    finally:
        sock.close()
        master.shutdown()


def test_a_slave_checkpoint_takes_the_store_time_of_what_it_dispatched(
    pair: tuple[MessageStore, MessageStore],
) -> None:
    master, slave = pair
    for i in range(10):
        master.put_message(new_msg(body=b"%d" % i))
    assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
    assert slave.wait_for_dispatch(10)
    assert slave.checkpoint is not None
    assert slave.checkpoint.physic_msg_timestamp == master.commit_log.store_timestamp


def test_an_idle_accept_thread_sleeps_until_a_link_or_the_shutdown(tmp_path: Path) -> None:
    master = open_ha_store(tmp_path / "master", BrokerRole.ASYNC_MASTER)
    accept = master.ha_service.accept_service
    try:
        thread = next(t for t in threading.enumerate() if t.name == accept.name)
        status = f"/proc/self/task/{thread.native_id}/status"

        def switches() -> int:
            with open(status) as f:
                line = next(x for x in f if x.startswith("voluntary_ctxt_switches:"))
            return int(line.split()[1])

        before = switches()
        time.sleep(1.0)  # a measuring window: the thread's wake-ups in it
        assert switches() - before <= 1  # a 200 ms accept timeout: 5
        slave = open_ha_store(
            tmp_path / "slave",
            BrokerRole.SLAVE,
            ha_master_address=f"127.0.0.1:{master.ha_service.listen_port}",
        )
        try:
            assert until_sync(lambda: slave_linked(master), 10)  # a link still wakes it
        finally:
            slave.shutdown()
    finally:
        started = time.monotonic()
        master.shutdown()
    assert not accept.is_alive
    assert time.monotonic() - started < 5  # the shutdown woke the select
