"""RequestInvoker: the requests a RemotingChannel sends (channel.py) and their responses.

A response completes the future registered under its ``opaque`` (never by arrival order), so
a cancelled or timed-out request cannot desynchronise the connection. A request past its
deadline fails with RemotingTimeoutError (its own timer for ``invoke`` and
``invoke_callback``, the periodic ``scan_response_table`` for ``invoke_async``, as
NettyRemotingAbstract.scanResponseTable).

``invoke_callback`` registers a :class:`ResponseCallback` instead of a future: the response
runs the caller's callback on the reader, inside the read's dispatch (no task wakes up for
it), as NettyRemotingAbstract.processResponseCommand runs an InvokeCallback; a timeout or the
connection's close runs it with the error. The channel treats both kinds of entry alike
(``done``, ``set_result``, ``set_exception``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from rocketq.errors import RemotingConnectError, RemotingTimeoutError
from rocketq.remoting.channel_writer import FrameWriter
from rocketq.remoting.protocol.command import RemotingCommand

ResponseHandler = Callable[[RemotingCommand | BaseException], None]


class ResponseCallback:
    """A response table entry that runs ``handler`` once: with the response, or with the
    error that ended the wait (its timer's RemotingTimeoutError, the close's
    RemotingConnectError). ``cancel`` takes it out of the table without a call (the caller
    stopped waiting: a late response is then an unknown opaque, as for ``invoke``)."""

    __slots__ = ("_done", "_handler", "_opaque", "_table", "_timer")

    def __init__(
        self, handler: ResponseHandler, table: dict[int, ResponseSlot], opaque: int
    ) -> None:
        self._handler = handler
        self._table = table
        self._opaque = opaque
        self._done = False
        self._timer: asyncio.TimerHandle | None = None

    def done(self) -> bool:
        return self._done

    def set_result(self, response: RemotingCommand) -> None:
        self._finish(response)

    def set_exception(self, error: BaseException) -> None:
        self._finish(error)

    def cancel(self) -> None:
        if not self._done:
            self._done = True
            if self._timer is not None:
                self._timer.cancel()
            if self._table.get(self._opaque) is self:
                del self._table[self._opaque]

    def _finish(self, outcome: RemotingCommand | BaseException) -> None:
        # the table's entry is already gone (the channel pops it before either call)
        if self._done:
            return
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
        self._handler(outcome)


ResponseSlot = asyncio.Future[RemotingCommand] | ResponseCallback


class RequestInvoker(FrameWriter):
    """The request side of RemotingChannel: its response table (``opaque`` -> future or
    callback)."""

    _responses: dict[int, ResponseSlot]
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

    def invoke_callback(
        self, request: RemotingCommand, timeout_s: float, handler: ResponseHandler
    ) -> ResponseCallback:
        """Write ``request`` now (no wait for the socket buffer: a caller with one request in
        flight, as a queue's pull); ``handler`` runs on the reader with the response, or
        with the error after ``timeout_s`` (the same RemotingTimeoutError as ``invoke``) or
        at the close. A failed write raises here and never runs ``handler``."""
        if self.is_closed:  # before the entry: a close may be walking the table
            raise RemotingConnectError(f"connection to {self.remote_addr} is closed")
        opaque = request.opaque
        responses = self._responses
        slot = ResponseCallback(handler, responses, opaque)
        responses[opaque] = slot
        try:
            self._write(request)
        except BaseException:
            slot.cancel()
            raise
        slot._timer = asyncio.get_running_loop().call_later(
            timeout_s, self._expire, slot, request, timeout_s
        )
        return slot

    def _expire(self, future: ResponseSlot, request: RemotingCommand, timeout_s: float) -> None:
        if self._responses.get(request.opaque) is future:
            del self._responses[request.opaque]
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
