"""A coroutine's first step run at once, its rest as a task: Python 3.12's eager tasks for one
coroutine, on 3.11.

Two forms. :func:`start_eagerly` (rocketq's own coroutines, which never ask for their task)
steps ``coro`` inside the call; one that finishes without waiting (a held pull answered from
memory) costs no task and no loop iteration; one that waits becomes a task that takes the wait
over (:func:`_resume`) and behaves as if it had been a task from the start: its cancellation
and the awaited future's error are thrown into ``coro`` at the same await. An exception raised
inside the first step reaches the caller.

:func:`eager_task` (code we do not own: a consumer's listener) makes the task first and runs
the first step with that task as the current one, as ``asyncio.Task(..., eager_start=True)``
does on 3.12 (``asyncio.timeout`` and ``TaskGroup`` inside the step find their own task, not
the caller's). The step's end (or its exception) is the task's; what the task is left to do
is one short step on the next iteration.
"""

from __future__ import annotations

import asyncio
from asyncio.tasks import _enter_task, _leave_task
from collections.abc import Coroutine
from typing import Any


def start_eagerly(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]
) -> asyncio.Task[None] | None:
    """Run ``coro`` up to its first wait; None when it finished, else the task driving it."""
    try:
        awaited = coro.send(None)
    except StopIteration:
        return None
    return loop.create_task(_resume(coro, awaited))


class _FirstStep:
    __slots__ = ("awaited", "error", "finished")

    def __init__(self) -> None:
        self.awaited: object = None
        self.error: BaseException | None = None
        self.finished = False


def eager_task(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]
) -> asyncio.Task[None]:
    """The task of ``coro``, whose first step has run inside this call as that task."""
    step = _FirstStep()
    task = loop.create_task(_after_first_step(coro, step))
    caller = asyncio.current_task(loop)
    if caller is not None:
        _leave_task(loop, caller)
    _enter_task(loop, task)
    try:
        step.awaited = coro.send(None)
    except StopIteration:
        step.finished = True
    except BaseException as exc:  # noqa: BLE001 -- the task's outcome, raised by the task
        step.finished = True
        step.error = exc
    finally:
        _leave_task(loop, task)
        if caller is not None:
            _enter_task(loop, caller)
    if not step.finished:  # cancelled before its next step ran: the coroutine is closed
        task.add_done_callback(lambda t: None if step.finished else coro.close())
    return task


async def _after_first_step(coro: Coroutine[Any, Any, None], step: _FirstStep) -> None:
    if step.error is not None:
        raise step.error
    if not step.finished:
        try:
            await _resume(coro, step.awaited)
        finally:
            step.finished = True


async def _resume(coro: Coroutine[Any, Any, None], awaited: object) -> None:
    """Drive ``coro``, started by hand and now waiting on ``awaited`` (what its ``send``
    yielded: an asyncio future, or None for a bare yield), to its end as this task: wait for
    what it waits for, then resume it; what this task gets thrown (its cancellation, the
    future's error) is thrown into ``coro`` at the same await."""
    while True:
        try:
            if awaited is None:
                await asyncio.sleep(0)
            elif isinstance(awaited, asyncio.Future):
                # the hand-made step left the future marked as yielded to a task (what
                # Task.__step clears before it waits); this task takes the wait over
                awaited._asyncio_future_blocking = False
                await awaited
            else:
                raise TypeError(f"a coroutine stepped by hand yielded {awaited!r}, not a future")  # noqa: TRY301 -- the coroutine it steps receives it
        except BaseException as exc:  # noqa: BLE001 -- forwarded into the coroutine it steps, which decides
            try:
                awaited = coro.throw(exc)
            except StopIteration:
                return
            continue
        try:
            awaited = coro.send(None)
        except StopIteration:
            return
