"""The settling half of RemotingChannel: the answers a connection owes before it closes
(``_settle``: a malformed frame closes the connection after the requests read before it are
answered, bounded by ``SETTLE_TIMEOUT_S``), the deferred answers of a flush
(``answer_frames``) and the read pause they lift, and the tasks it runs (``_spawn``).
RemotingChannel (channel.py) sets the attributes below."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from rocketq.remoting.channel_protocol import PAUSED_FOR_ANSWERS, ChannelProtocol
from rocketq.remoting.channel_requests import RequestInvoker

# how long a connection that sent a malformed frame waits for the answers of the requests
# before it (a held PULL does not keep it open longer)
SETTLE_TIMEOUT_S = 3.0


class AnswerSettle(RequestInvoker):
    """What a connection owes its peer before it closes, and the deferred answers."""

    _tasks: set[asyncio.Task[None]]
    _settled: asyncio.Event | None  # set when the deferred replies are all sent
    _protocol: ChannelProtocol
    _max_deferred: int
    _open: bool
    local_addr: str

    def __repr__(self) -> str:
        return f"RemotingChannel({self.local_addr} <-> {self.remote_addr})"

    @property
    def pending_request_count(self) -> int:
        return len(self._responses)

    async def wait_closed(self) -> None:
        await self._closed.wait()
        current = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not current]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _settle_and_close(self) -> None:
        try:
            await self._settle()
        finally:
            self.close()

    async def _settle(self) -> None:
        """Wait (a bounded time) for the answers of the requests already read: their tasks
        and deferred replies; then let the queued answers leave."""
        deadline = asyncio.get_running_loop().time() + SETTLE_TIMEOUT_S
        current = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not current]
        if tasks:
            await asyncio.wait(tasks, timeout=SETTLE_TIMEOUT_S)
        if self._deferred:
            self._settled = asyncio.Event()
            remaining = max(0.0, deadline - asyncio.get_running_loop().time())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._settled.wait()
        if self._write_window_open:
            self._write_unwritten()
        if self._writer.transport.get_write_buffer_size():
            with contextlib.suppress(OSError, RuntimeError):
                async with asyncio.timeout(SETTLE_TIMEOUT_S):
                    await self._writer.drain()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def answer_frames(self, count: int, frames: bytes) -> None:
        """Answer ``count`` deferred requests of this connection with ``frames``, their
        replies encoded back to back; the caller tells the response listeners
        (``processors.tell_responses``), one call for a whole flush's connections."""
        # _answered_deferred's steps, inline (a flush answers each connection with this)
        deferred = self._deferred = self._deferred - count
        if not deferred and self._settled is not None:
            self._settled.set()
        if self._protocol.paused & PAUSED_FOR_ANSWERS and deferred <= self._max_deferred // 2:
            self._protocol.resume(PAUSED_FOR_ANSWERS)
        if self._open:
            self._write_frames(frames)

    def _answered_deferred(self) -> None:
        if not self._deferred and self._settled is not None:
            self._settled.set()
        if self._deferred <= self._max_deferred // 2:
            self._protocol.resume(PAUSED_FOR_ANSWERS)
