"""Awaiting the threaded store's futures on the event loop, one loop wake-up per burst.

The store is synchronous (``concurrent.futures.Future`` results); the broker is asyncio. A put
that is already complete (ASYNC_FLUSH, or a send that does not wait for the store) is
returned without a loop hop. The futures the SYNC_FLUSH group commit completes from its
thread are collected by a per-loop :class:`BurstWaker`, which schedules one
``call_soon_threadsafe`` per burst of completions instead of one per message.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


class BurstWaker:
    """Completes loop futures for store-thread futures, one ``call_soon_threadsafe`` a burst."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._done: collections.deque[tuple[asyncio.Future[object], Future[object]]] = (
            collections.deque()
        )
        self._lock = threading.Lock()
        self._scheduled = False

    def wrap(self, source: Future[T]) -> asyncio.Future[T]:
        target: asyncio.Future[T] = self.loop.create_future()
        source.add_done_callback(lambda f: self._completed(target, f))  # type: ignore[arg-type]
        return target

    def _completed(self, target: asyncio.Future[object], source: Future[object]) -> None:
        self._done.append((target, source))
        with self._lock:
            wake, self._scheduled = not self._scheduled, True
        if wake:
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        while self._done:
            target, source = self._done.popleft()
            if target.done():
                continue
            exc = source.exception()
            if exc is not None:
                target.set_exception(exc)
            else:
                target.set_result(source.result())


_wakers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BurstWaker] = (
    weakref.WeakKeyDictionary()
)


async def await_store_future(future: Future[T]) -> T:
    """The result of a store future, awaited on the running loop."""
    if future.done():
        return future.result()
    loop = asyncio.get_running_loop()
    waker = _wakers.get(loop)
    if waker is None:
        waker = _wakers[loop] = BurstWaker(loop)
    return await waker.wrap(future)


def when_store_future_done(future: Future[T], callback: Callable[[Future[T]], object]) -> None:
    """Call ``callback(future)`` on the running loop once the store completed ``future``
    (from its thread), without a task: one loop wake-up per burst of completions."""
    loop = asyncio.get_running_loop()
    waker = _wakers.get(loop)
    if waker is None:
        waker = _wakers[loop] = BurstWaker(loop)
    waker.wrap(future).add_done_callback(lambda _: callback(future))
