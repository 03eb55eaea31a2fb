"""The event loop rocketq's processes run on: uvloop where it is installed, asyncio's otherwise.

uvloop (libuv under asyncio's API) is a default dependency on Linux; on this machine kind it
gives 2.4-2.9x the round trips of asyncio's selector loop on small requests. The name server,
the broker, ``rocketq server``, the blocking client's loop thread and the benches start their
loops through :func:`run` / :func:`new_event_loop`. An application using the asyncio client
runs it on the loop it chose; ``rocketq.remoting.event_loop.run(main())`` picks the same loop
the servers do.

``ROCKETQ_UVLOOP=0`` (or ``false``/``no``/``off``) turns uvloop off for a process: asyncio's
standard loop is used, as it is when uvloop is not installed.

Eager tasks (issue 22, lever 3): on Python 3.12 and later the loops made here get
``asyncio.eager_task_factory``, so a task runs its first step inside ``create_task`` and one
that finishes without waiting (a request answered from memory, a callback's coroutine) is
never scheduled at all. ``ROCKETQ_EAGER_TASKS=0`` turns it off; on 3.11 it does not exist and
tasks start on the loop's next iteration, as they always did. The factory is
:func:`eager_task_factory`, not asyncio's own: uvloop on 3.13 hands a task factory an
``eager_start`` keyword that asyncio's (3.13.0) does not take.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib.util
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

UVLOOP_ENV = "ROCKETQ_UVLOOP"
EAGER_TASKS_ENV = "ROCKETQ_EAGER_TASKS"
_OFF_VALUES = frozenset({"0", "false", "no", "off"})

T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def uvloop_wanted() -> bool:
    """True unless ``ROCKETQ_UVLOOP`` turns uvloop off."""
    return os.environ.get(UVLOOP_ENV, "1").strip().lower() not in _OFF_VALUES


def eager_tasks_available() -> bool:
    """True where the interpreter has eager tasks (``Task(eager_start=True)``, 3.12 and later)."""
    return hasattr(asyncio, "eager_task_factory")


def eager_task_factory(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, Any],
    *,
    name: str | None = None,
    context: contextvars.Context | None = None,
    eager_start: bool | None = None,
) -> asyncio.Task[Any]:
    """``asyncio.eager_task_factory`` that also takes the ``eager_start`` keyword uvloop
    passes on 3.13 (an explicit False still gives a lazy task)."""
    return asyncio.Task(  # type: ignore[call-arg,unused-ignore]
        coro, loop=loop, name=name, context=context, eager_start=eager_start is not False
    )


def eager_tasks_wanted() -> bool:
    """True unless ``ROCKETQ_EAGER_TASKS`` turns eager tasks off."""
    return os.environ.get(EAGER_TASKS_ENV, "1").strip().lower() not in _OFF_VALUES


def loop_factory(use_uvloop: bool | None = None, *, eager_tasks: bool | None = None) -> LoopFactory:
    """A factory of uvloop loops when ``use_uvloop`` (default: :func:`uvloop_wanted`) and
    uvloop is installed, else of asyncio's standard loops; their tasks start eagerly when
    ``eager_tasks`` (default: :func:`eager_tasks_wanted`) and the interpreter has them."""
    if use_uvloop is None:
        use_uvloop = uvloop_wanted()
    factory: LoopFactory = asyncio.new_event_loop
    if use_uvloop and uvloop_installed():
        import uvloop

        factory = uvloop.new_event_loop
    if eager_tasks is None:
        eager_tasks = eager_tasks_wanted()
    if not (eager_tasks and eager_tasks_available()):
        return factory

    def eager_loop() -> asyncio.AbstractEventLoop:
        loop = factory()
        loop.set_task_factory(eager_task_factory)  # type: ignore[arg-type]
        return loop

    return eager_loop


def new_event_loop(
    use_uvloop: bool | None = None, *, eager_tasks: bool | None = None
) -> asyncio.AbstractEventLoop:
    return loop_factory(use_uvloop, eager_tasks=eager_tasks)()


def run(
    main: Coroutine[Any, Any, T],
    *,
    use_uvloop: bool | None = None,
    eager_tasks: bool | None = None,
) -> T:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` chooses."""
    with asyncio.Runner(loop_factory=loop_factory(use_uvloop, eager_tasks=eager_tasks)) as runner:
        return runner.run(main)


def tasks_are_eager(loop: asyncio.AbstractEventLoop) -> bool:
    """True when ``loop`` starts its tasks eagerly (for logs and tests)."""
    return loop.get_task_factory() is eager_task_factory


def loop_kind(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: which implementation ``loop`` is (for logs and tests)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
