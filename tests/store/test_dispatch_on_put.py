"""A put's records dispatched on the putting thread through the owner's dispatch scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from rocketq.store import FlushDiskType, MessageStore, PutMessageStatus
from rocketq.testing.store import new_msg, open_store

Arrival = tuple[str, int, int, int]


def store_without_reput_thread(root: Path) -> tuple[MessageStore, list[tuple[Arrival, int]]]:
    """An ASYNC_FLUSH store whose reput thread is stopped: only scheduled runs dispatch."""
    store = open_store(root, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    arrivals: list[tuple[Arrival, int]] = []
    store.message_arriving_listener = lambda t, q, o, tags, ts, props: arrivals.append(
        ((t, q, o, tags), threading.get_ident())
    )
    store.reput_service.shutdown()
    return store, arrivals


class Scheduled(list[Callable[[], None]]):
    """A dispatch scheduler that keeps the runs for the test to call."""

    def __call__(self, fn: Callable[[], None]) -> bool:
        self.append(fn)
        return True


def test_the_puts_before_a_scheduled_run_share_it_and_it_dispatches_on_the_callers_thread(
    tmp_path: Path,
) -> None:
    store, arrivals = store_without_reput_thread(tmp_path)
    scheduled = Scheduled()
    store.reput_service.set_dispatch_scheduler(scheduled)
    try:
        for _ in range(3):
            put = store.async_put_message(new_msg(queue_id=1)).result(5.0)
            assert put.status is PutMessageStatus.PUT_OK
        assert len(scheduled) == 1  # one run for the three puts
        assert store.get_max_offset_in_queue("TopicTest", 1) == 0  # nothing dispatched yet
        scheduled.pop()()
        assert store.get_max_offset_in_queue("TopicTest", 1) == 3
        assert store.dispatch_behind_bytes() == 0
        me = threading.get_ident()
        assert [(a[2], who) for a, who in arrivals] == [(0, me), (1, me), (2, me)]
        store.async_put_message(new_msg(queue_id=1)).result(5.0)
        assert len(scheduled) == 1  # the next put asks for a new run
        scheduled.pop()()
        assert store.get_max_offset_in_queue("TopicTest", 1) == 4
    finally:
        store.shutdown()


def test_a_scheduler_that_cannot_run_the_dispatch_falls_back_to_the_reput_thread(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    refused: list[Callable[[], None]] = []

    def closed_loop(fn: Callable[[], None]) -> bool:
        refused.append(fn)
        return False

    store.reput_service.set_dispatch_scheduler(closed_loop)
    store.reput_service.fallback_wait_ms = 60_000  # only a wake-up can make it dispatch soon
    try:
        store.async_put_message(new_msg()).result(5.0)
        store.async_put_message(new_msg()).result(5.0)
        assert len(refused) == 2  # a refused run is not counted as pending
        assert store.wait_for_dispatch(10.0)
        assert store.get_max_offset_in_queue("TopicTest", 0) == 2
    finally:
        store.shutdown()


def test_a_run_finding_another_run_dispatching_leaves_the_records_to_the_reput_thread(
    tmp_path: Path,
) -> None:
    store, arrivals = store_without_reput_thread(tmp_path)
    scheduled = Scheduled()
    store.reput_service.set_dispatch_scheduler(scheduled)
    entered, release = threading.Event(), threading.Event()

    def slow_listener(*_: object) -> None:
        entered.set()
        release.wait(10.0)

    store.message_arriving_listener = slow_listener
    try:
        store.async_put_message(new_msg()).result(5.0)
        first = threading.Thread(target=scheduled.pop())
        first.start()  # holds the dispatch lock inside the listener
        assert entered.wait(10.0)
        store.async_put_message(new_msg()).result(5.0)
        assert store.reput_service.dispatch_now() is False  # the lock is taken
        release.set()
        first.join(10.0)
        scheduled.pop()()  # the second put's run
        assert store.get_max_offset_in_queue("TopicTest", 0) == 2
        assert arrivals == []  # the slow listener replaced the recording one
    finally:
        release.set()
        store.shutdown()
