"""The blocking facade's loop thread: results, exceptions, timeouts, many caller threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from rocketq.client.loop_thread import LoopThread
from rocketq.errors import IllegalStateError


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread.acquire()
    yield lt
    LoopThread.release()


def test_run_returns_the_result_and_raises_the_exception(loop_thread: LoopThread) -> None:
    async def value() -> int:
        await asyncio.sleep(0)
        return 42

    async def boom() -> None:
        raise ValueError("boom")

    assert loop_thread.run(value()) == 42
    with pytest.raises(ValueError, match="boom"):
        loop_thread.run(boom())


def test_a_call_past_its_timeout_raises_and_its_task_is_cancelled(loop_thread: LoopThread) -> None:
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError):
        loop_thread.run(forever(), timeout_s=0.1)
    assert cancelled.wait(5)


def test_many_threads_each_get_their_own_result(loop_thread: LoopThread) -> None:
    results: dict[int, list[int]] = {}

    async def echo(x: int) -> int:
        await asyncio.sleep(0)
        return x

    def worker(t: int) -> None:
        results[t] = [loop_thread.run(echo(t * 1000 + i)) for i in range(200)]

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    assert all(results[t] == [t * 1000 + i for i in range(200)] for t in range(16))


def test_a_call_from_the_loop_thread_itself_is_refused(loop_thread: LoopThread) -> None:
    async def inner() -> None:
        return None

    async def outer() -> str:
        try:
            loop_thread.run(inner())
        except IllegalStateError as exc:
            return str(exc)
        return "no error"

    assert "own loop thread" in loop_thread.run(outer())
