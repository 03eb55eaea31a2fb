"""eager_step: a coroutine's first step inside the call, the rest as a task, on the asyncio
loop and on uvloop: the step's task is the current one, a wait continues as that task, its
cancellation and errors reach the coroutine, and a task cancelled before its next step
closes the coroutine."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest

from rocketq.remoting import event_loop
from rocketq.remoting.eager_step import eager_task, start_eagerly

LOOPS = [
    pytest.param(False, id="asyncio"),
    pytest.param(
        True,
        id="uvloop",
        marks=pytest.mark.skipif(sys.platform != "linux", reason="uvloop is a Linux dependency"),
    ),
]


@pytest.fixture(params=LOOPS)
def loop(request: pytest.FixtureRequest) -> Iterator[asyncio.AbstractEventLoop]:
    lp = event_loop.new_event_loop(request.param)
    yield lp
    lp.close()


def test_the_first_step_runs_in_the_call_as_the_returned_task(
    loop: asyncio.AbstractEventLoop,
) -> None:
    seen: list[object] = []

    async def step() -> None:
        seen.append(asyncio.current_task())

    async def caller() -> None:
        me = asyncio.current_task()
        task = eager_task(asyncio.get_running_loop(), step())
        assert seen == [task]  # ran before eager_task returned, as its own task
        assert asyncio.current_task() is me
        await task
        assert task.done()
        assert task.exception() is None

    loop.run_until_complete(caller())


def test_a_wait_continues_as_the_task_and_a_timeout_cancels_it_not_the_caller(
    loop: asyncio.AbstractEventLoop,
) -> None:
    outcomes: list[str] = []

    async def listener(never: asyncio.Future[None]) -> None:
        try:
            async with asyncio.timeout(0.01):
                await never
        except TimeoutError:
            outcomes.append("timed out")
        await asyncio.sleep(0)
        outcomes.append("done")

    async def caller() -> None:
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = eager_task(asyncio.get_running_loop(), listener(never))
        assert outcomes == []
        await asyncio.wait_for(task, 5)
        assert outcomes == ["timed out", "done"]

    loop.run_until_complete(caller())


def test_errors_and_cancellation_reach_the_coroutine(loop: asyncio.AbstractEventLoop) -> None:
    closed: list[str] = []

    async def fails_at_once() -> None:
        raise ValueError("first step")

    async def waits(fut: asyncio.Future[None]) -> None:
        try:
            await fut
        except asyncio.CancelledError:
            closed.append("cancelled at its await")
            raise

    async def held(fut: asyncio.Future[None]) -> None:
        try:
            await fut
        finally:
            closed.append("closed")

    async def caller() -> None:
        lp = asyncio.get_running_loop()
        failed = eager_task(lp, fails_at_once())
        with pytest.raises(ValueError, match="first step"):
            await failed
        waiting = eager_task(lp, waits(lp.create_future()))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert closed == ["cancelled at its await"]
        early = eager_task(lp, held(lp.create_future()))
        early.cancel()  # before its next step ran
        with pytest.raises(asyncio.CancelledError):
            await early
        assert closed == ["cancelled at its await", "closed"]

    loop.run_until_complete(caller())


def test_start_eagerly_makes_no_task_for_a_step_that_finishes(
    loop: asyncio.AbstractEventLoop,
) -> None:
    async def quick() -> None:
        return None

    async def slow(fut: asyncio.Future[None]) -> None:
        await fut

    async def caller() -> None:
        lp = asyncio.get_running_loop()
        assert start_eagerly(lp, quick()) is None
        fut = lp.create_future()
        task = start_eagerly(lp, slow(fut))
        assert task is not None
        assert not task.done()
        fut.set_result(None)
        await asyncio.wait_for(task, 5)

    loop.run_until_complete(caller())
