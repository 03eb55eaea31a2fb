"""The private event loop that the blocking facade runs the asyncio core on.

One daemon thread per process runs one loop, shared by every blocking client (so clients of one
client id share one MQClientInstance). It starts with the first client and stops, joined, when
the last one shuts down. Calling a blocking method from the loop thread itself (for example
from an async listener) would deadlock and raises IllegalStateError instead.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, ClassVar, Generic, TypeVar

from rocketq.errors import IllegalStateError
from rocketq.remoting import event_loop

T = TypeVar("T")


class LoopThread:
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _shared: ClassVar[LoopThread | None] = None
    _users: ClassVar[int] = 0

    def __init__(self) -> None:
        self.loop = event_loop.new_event_loop()
        self._pending: collections.deque[_Call[Any]] = collections.deque()
        self._wake_lock = threading.Lock()
        self._wake_scheduled = False
        self._thread = threading.Thread(target=self._run, name="rocketq-client-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @classmethod
    def acquire(cls) -> LoopThread:
        with cls._lock:
            if cls._shared is None:
                cls._shared = LoopThread()
            cls._users += 1
            return cls._shared

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            cls._users -= 1
            if cls._users > 0 or cls._shared is None:
                return
            shared, cls._shared = cls._shared, None
        shared._stop()

    def _stop(self) -> None:
        async def drain() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(drain(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        if threading.current_thread() is self._thread:
            coro.close()
            raise IllegalStateError("a blocking client method was called on its own loop thread")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for it (the blocking facade's hot path).

        Cheaper than ``run_coroutine_threadsafe(...).result()``: calls queue up in a deque
        and one ``call_soon_threadsafe`` wake-up starts every call queued meanwhile; the
        caller waits on a bare lock that the task's done-callback releases.
        """
        if threading.current_thread() is self._thread:
            coro.close()
            raise IllegalStateError("a blocking client method was called on its own loop thread")
        call = _Call(coro)
        self._pending.append(call)
        with self._wake_lock:
            wake, self._wake_scheduled = not self._wake_scheduled, True
        if wake:
            self.loop.call_soon_threadsafe(self._start_pending)
        if not call.done.acquire(timeout=-1 if timeout_s is None else timeout_s):
            self.loop.call_soon_threadsafe(call.cancel)
            raise TimeoutError(f"the client call did not finish in {timeout_s}s")
        return call.outcome()

    def _start_pending(self) -> None:
        with self._wake_lock:
            self._wake_scheduled = False
        while self._pending:
            self._pending.popleft().start(self.loop)


class _Call(Generic[T]):
    """One blocking call: its coroutine, its task once started, its outcome."""

    def __init__(self, coro: Coroutine[Any, Any, T]) -> None:
        self.coro = coro
        self.done = threading.Lock()
        self.done.acquire()
        self.task: asyncio.Task[T] | None = None
        self.cancelled = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.cancelled:
            return
        self.task = loop.create_task(self.coro)
        self.task.add_done_callback(lambda _task: self.done.release())

    def cancel(self) -> None:
        """On the loop thread, after the caller gave up waiting."""
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()
        else:
            self.coro.close()

    def outcome(self) -> T:
        assert self.task is not None
        return self.task.result()  # raises the task's exception (or CancelledError)
