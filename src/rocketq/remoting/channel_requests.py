"""RequestInvoker: the requests a RemotingChannel sends (channel.py) and their responses.

A response completes the future registered under its ``opaque`` (never by arrival order), so
a cancelled or timed-out request cannot desynchronise the connection. A request past its
deadline fails with RemotingTimeoutError (its own timer for ``invoke``, the periodic
``scan_response_table`` for ``invoke_async``, as NettyRemotingAbstract.scanResponseTable).
"""

from __future__ import annotations

import asyncio
import time

from rocketq.errors import RemotingTimeoutError
from rocketq.remoting.channel_writer import FrameWriter
from rocketq.remoting.protocol.command import RemotingCommand


class RequestInvoker(FrameWriter):
    """The request side of RemotingChannel: its response table (``opaque`` -> future)."""

    _responses: dict[int, asyncio.Future[RemotingCommand]]
    _deadlines: dict[int, float]

    async def invoke_async(
        self, request: RemotingCommand, timeout_s: float
    ) -> asyncio.Future[RemotingCommand]:
        """Send a request; the returned future gets the response, or RemotingTimeoutError
        from :meth:`scan_response_table` once ``timeout_s`` has passed."""
        future: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        opaque = request.opaque
        self._responses[opaque] = future
        self._deadlines[opaque] = time.monotonic() + timeout_s
        future.add_done_callback(lambda f: self._forget(opaque, f))
        try:
            await self.send(request)
        except BaseException:
            self._forget(opaque, future)
            raise
        return future

    def _forget(self, opaque: int, future: asyncio.Future[RemotingCommand]) -> None:
        if self._responses.get(opaque) is future:
            del self._responses[opaque]
            self._deadlines.pop(opaque, None)

    def scan_response_table(self, now_monotonic: float) -> int:
        """Fail every request past its deadline (NettyRemotingAbstract.scanResponseTable)."""
        expired = [o for o, deadline in self._deadlines.items() if deadline <= now_monotonic]
        for opaque in expired:
            self._deadlines.pop(opaque, None)
            future = self._responses.pop(opaque, None)
            if future is not None and not future.done():
                future.set_exception(
                    RemotingTimeoutError(
                        f"request {opaque} to {self.remote_addr} expired without a response"
                    )
                )
        return len(expired)

    async def invoke(self, request: RemotingCommand, timeout_s: float) -> RemotingCommand:
        """Send a request and wait for the response with the same opaque.

        The per-request path of every sync call: one future in the response table and one
        timer that fails it after ``timeout_s`` (no ``asyncio.timeout`` scope, no deadline
        entry for the periodic scan, no done callback); the table entry and the timer are
        removed however the wait ends."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RemotingCommand] = loop.create_future()
        opaque = request.opaque
        responses = self._responses
        responses[opaque] = future
        timer = loop.call_later(timeout_s, self._expire, future, request, timeout_s)
        try:
            await self.send(request)
            return await future
        finally:
            timer.cancel()
            if responses.get(opaque) is future:
                del responses[opaque]
            if not future.done():
                future.cancel()

    def _expire(
        self, future: asyncio.Future[RemotingCommand], request: RemotingCommand, timeout_s: float
    ) -> None:
        if not future.done():
            future.set_exception(
                RemotingTimeoutError(
                    f"wait response on {self.remote_addr} timeout {timeout_s}s, "
                    f"code {request.code}, opaque {request.opaque}"
                )
            )

    async def invoke_oneway(self, request: RemotingCommand) -> None:
        """Send a request marked oneway; no response is expected."""
        request.mark_oneway_rpc()
        await self.send(request)
