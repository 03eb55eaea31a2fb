"""CompletedFuture behaves as a concurrent Future that was completed with set_result."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from rocketq.store.completed_future import CompletedFuture


def test_a_completed_future_is_done_with_its_result() -> None:
    f = CompletedFuture("ok")
    assert f.done()
    assert not f.cancelled()
    assert not f.running()
    assert f.result(timeout=0) == "ok"
    assert f.exception(timeout=0) is None
    assert not f.cancel()  # a finished future cannot be cancelled
    assert f.result() == "ok"


def test_a_done_callback_runs_at_once_with_the_future() -> None:
    f = CompletedFuture(7)
    seen: list[int] = []
    f.add_done_callback(lambda done: seen.append(done.result()))
    assert seen == [7]


def test_wait_and_as_completed_see_completed_futures_among_pending_ones() -> None:
    pending: concurrent.futures.Future[int] = concurrent.futures.Future()
    done = [CompletedFuture(i) for i in range(3)]
    finished, not_done = concurrent.futures.wait([*done, pending], timeout=0.01)
    assert finished == set(done)
    assert not_done == {pending}
    completer = threading.Thread(target=pending.set_result, args=(9,))
    completer.start()
    results = sorted(f.result() for f in concurrent.futures.as_completed([*done, pending], 5))
    completer.join(5)
    assert results == [0, 1, 2, 9]


def test_many_threads_read_completed_futures_sharing_one_condition() -> None:
    futures = [CompletedFuture(i) for i in range(2000)]
    totals: list[int] = []

    def read() -> None:
        totals.append(sum(f.result(timeout=1) for f in futures))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert totals == [sum(range(2000))] * 8


async def test_asyncio_wraps_a_completed_future() -> None:
    assert await asyncio.wrap_future(CompletedFuture("wrapped")) == "wrapped"
