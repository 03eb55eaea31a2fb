"""The reput thread as a safety net: with a dispatch scheduler attached it sleeps long, and
every path that leaves records to it wakes it (a slave's appends, a busy dispatch lock, a
moved confirm offset in controller mode)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rocketq.store import FlushDiskType, MessageStore
from rocketq.store.reput import ReputMessageService
from rocketq.testing.autoswitch import HandDrivenSlave, autoswitch, open_controller_mode_store
from rocketq.testing.store import new_msg, open_store
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(60)

LONG_MS = 60_000  # only a wake-up dispatches within a test's deadline


def run_now(fn: Callable[[], None]) -> bool:
    """A scheduler that runs the dispatch inside the put (the loop's, with a pull held)."""
    fn()
    return True


def refuse(fn: Callable[[], None]) -> bool:
    return True  # accepted and never run: the records wait for the reput thread


def attach(store: MessageStore, scheduler: Callable[[Callable[[], None]], bool]) -> None:
    reput = store.reput_service
    reput.scheduled_wait_ms = LONG_MS
    reput.set_dispatch_scheduler(scheduler)


def voluntary_switches(thread_id: int) -> int:
    with open(f"/proc/self/task/{thread_id}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def reput_native_id(reput: ReputMessageService) -> int:
    thread = next(t for t in threading.enumerate() if t.name == reput.name)
    assert thread.native_id is not None
    return thread.native_id


def reaches(store: MessageStore, queue_id: int, count: int) -> bool:
    """The queue holds ``count`` units within the deadline; the reput thread is not woken
    (``wait_for_dispatch`` would wake it)."""
    return until_sync(lambda: store.get_max_offset_in_queue("TopicTest", queue_id) >= count, 10)


def test_an_idle_reput_thread_sleeps_the_safety_nets_wait_once_a_scheduler_is_attached(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        reput = store.reput_service
        assert reput.idle_wait_ms() == reput.fallback_wait_ms  # no scheduler: the 10 ms poll
        store.reput_service.set_dispatch_scheduler(run_now)
        assert reput.idle_wait_ms() == reput.scheduled_wait_ms >= 1000
        tid = reput_native_id(reput)
        before = voluntary_switches(tid)
        time.sleep(0.5)  # a measuring window: the thread's wake-ups in it
        # the 10 ms poll: ~50 in the window; the 1 s wait: at most one, plus a few GIL hand-offs
        # under load (CI saw 3: each wait for the GIL is a voluntary switch too)
        assert voluntary_switches(tid) - before <= 10
        store.reput_service.set_dispatch_scheduler(None)
        assert reput.idle_wait_ms() == reput.fallback_wait_ms
    finally:
        store.shutdown()


def test_a_slaves_appends_wake_the_reput_thread(tmp_path: Path) -> None:
    source = open_store(tmp_path / "source", flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    replica = open_store(tmp_path / "replica", flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        attach(replica, refuse)
        for _ in range(3):
            source.put_message(new_msg(queue_id=2))
        data = source.commit_log.select_data(0, source.get_max_phy_offset())
        assert data is not None
        assert replica.append_to_commit_log(0, data)
        assert reaches(replica, 2, 3)
    finally:
        replica.shutdown()
        source.shutdown()


def test_a_put_finding_the_dispatch_lock_taken_wakes_the_reput_thread(tmp_path: Path) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        attach(store, run_now)
        with store.reput_service.paused():  # another run holds the lock
            store.put_message(new_msg(queue_id=1))  # its run finds the lock taken
            assert store.get_max_offset_in_queue("TopicTest", 1) == 0
        assert reaches(store, 1, 1)
    finally:
        store.shutdown()


def test_a_confirm_offset_moved_by_an_ack_or_a_committed_sync_state_set_wakes_the_reput_thread(
    tmp_path: Path,
) -> None:
    store = open_controller_mode_store(tmp_path, 1, all_ack_in_sync_state_set=True)
    service = autoswitch(store)
    assert service.change_to_master(1)
    slave = HandDrivenSlave(store, 2)
    try:
        slave.read_until(lambda frames: len(frames) >= 1)
        slave.ack(store.get_max_phy_offset())
        service.set_sync_state_set(frozenset({1, 2}))
        attach(store, run_now)
        store.async_put_message(new_msg(queue_id=3))  # answered once the slave acks
        end = store.get_max_phy_offset()
        assert store.get_max_offset_in_queue("TopicTest", 3) == 0  # beyond the confirm offset
        slave.ack(end)  # the ack moves the confirm offset
        assert reaches(store, 3, 1)
        store.async_put_message(new_msg(queue_id=3))  # the slave never acks this one
        assert store.get_max_offset_in_queue("TopicTest", 3) == 1
        service.set_sync_state_set(frozenset({1}))  # the controller dropped the slave
        assert reaches(store, 3, 2)
    finally:
        slave.close()
        store.shutdown()
