"""The event loop rocketq's processes run on: uvloop where it is installed, asyncio's otherwise.

uvloop (libuv under asyncio's API) is a default dependency on Linux; on this machine kind it
gives 2.4-2.9x the round trips of asyncio's selector loop on small requests. The name server,
the broker, ``rocketq server``, the blocking client's loop thread and the benches start their
loops through :func:`run` / :func:`new_event_loop`. An application using the asyncio client
runs it on the loop it chose; ``rocketq.remoting.event_loop.run(main())`` picks the same loop
the servers do.

``ROCKETQ_UVLOOP=0`` (or ``false``/``no``/``off``) turns uvloop off for a process: asyncio's
standard loop is used, as it is when uvloop is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

UVLOOP_ENV = "ROCKETQ_UVLOOP"
_OFF_VALUES = frozenset({"0", "false", "no", "off"})

T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def uvloop_wanted() -> bool:
    """True unless ``ROCKETQ_UVLOOP`` turns uvloop off."""
    return os.environ.get(UVLOOP_ENV, "1").strip().lower() not in _OFF_VALUES


def loop_factory(use_uvloop: bool | None = None) -> LoopFactory:
    """A factory of uvloop loops when ``use_uvloop`` (default: :func:`uvloop_wanted`) and
    uvloop is installed, else of asyncio's standard loops."""
    if use_uvloop is None:
        use_uvloop = uvloop_wanted()
    if use_uvloop and uvloop_installed():
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop(use_uvloop: bool | None = None) -> asyncio.AbstractEventLoop:
    return loop_factory(use_uvloop)()


def run(main: Coroutine[Any, Any, T], *, use_uvloop: bool | None = None) -> T:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` chooses."""
    with asyncio.Runner(loop_factory=loop_factory(use_uvloop)) as runner:
        return runner.run(main)


def loop_kind(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: which implementation ``loop`` is (for logs and tests)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
