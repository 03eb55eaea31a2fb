"""RemotingServer: the asyncio TCP server of the name server and the broker.

Processors are registered by request code (``register_processor``) with an optional default
(``register_default_processor``); a processor is ``async handler(channel, request)`` returning
the response, or None for no response. Each accepted connection is a ``RemotingChannel``; the
server keeps them, tells close listeners when one closes (the broker drops that client), and a
housekeeping task closes connections idle longer than ``channel_idle_timeout_s`` (Java's
``serverChannelMaxIdleTimeSeconds``, 120 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from functools import partial

from rocketq.errors import IllegalStateError
from rocketq.remoting.channel import (
    MAX_DEFERRED_ANSWERS,
    MAX_REQUESTS_IN_FLIGHT,
    SCAN_RESPONSE_TABLE_INTERVAL_S,
    CloseListener,
    FastProcessor,
    ProcessorTable,
    ReadSends,
    RemotingChannel,
    RequestProcessor,
    ResponseListener,
    ResponsesListener,
    ServerRpcHook,
)
from rocketq.remoting.channel_protocol import ChannelProtocol, TransportWriter
from rocketq.remoting.codec import MAX_FRAME_SIZE
from rocketq.remoting.event_loop import loop_kind
from rocketq.remoting.protocol.command import RemotingCommand

log = logging.getLogger(__name__)


class RemotingServer:
    def __init__(
        self,
        *,
        max_frame_size: int = MAX_FRAME_SIZE,
        max_requests_in_flight: int = MAX_REQUESTS_IN_FLIGHT,
        max_deferred_answers: int = MAX_DEFERRED_ANSWERS,
        channel_idle_timeout_s: float = 120.0,
        housekeeping_interval_s: float = 1.0,
    ) -> None:
        self._processors = ProcessorTable()
        self._max_frame_size = max_frame_size
        self._max_requests_in_flight = max_requests_in_flight
        self._max_deferred_answers = max_deferred_answers
        self._idle_timeout_s = channel_idle_timeout_s
        self._housekeeping_interval_s = housekeeping_interval_s
        self._channels: set[RemotingChannel] = set()
        self._close_listeners: list[CloseListener] = []
        self._server: asyncio.Server | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        self.host = ""
        self.port = 0

    # ------------------------------------------------------------------ setup

    def register_processor(self, code: int, processor: RequestProcessor) -> None:
        self._processors.register(code, processor)

    def register_fast_processor(self, code: int, processor: FastProcessor) -> None:
        """Serve ``code`` on the connection's reader without a task per request (channel.py)."""
        self._processors.register_fast(code, processor)

    def fast_processor(self, code: int) -> FastProcessor | None:
        """The fast processor registered for ``code``, if any."""
        return self._processors.fast.get(int(code))

    def set_read_sends(self, sends: ReadSends | None) -> None:
        """Have each read's split read these sends into their puts (channel.py's on_read)."""
        self._processors.sends = sends

    def add_read_end_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` after the requests of each read on any connection are dispatched
        (the broker stores the puts of one read together and answers them at once)."""
        self._processors.read_end_hooks.append(hook)

    def register_default_processor(self, processor: RequestProcessor) -> None:
        self._processors.default = processor

    def register_rpc_hook(self, hook: ServerRpcHook) -> None:
        """Run ``hook`` before every request's processor; a response it returns refuses."""
        self._processors.rpc_hooks.append(hook)

    def add_response_listener(
        self, listener: ResponseListener, many: ResponsesListener | None = None
    ) -> None:
        """Called with each request a processor answered, its response and the seconds taken;
        ``many`` with requests answered together (else ``listener`` for each of them)."""
        self._processors.add_response_listener(listener, many)

    def add_channel_close_listener(self, listener: CloseListener) -> None:
        """Called with each connection that closes (peer close, error, idle or stop)."""
        self._close_listeners.append(listener)

    @property
    def channels(self) -> frozenset[RemotingChannel]:
        return frozenset(self._channels)

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port}"

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0, *, serve: bool = True) -> int:
        """Bind and return the port; with ``serve=False`` connections wait in the listen
        backlog until :meth:`start_serving` (a broker binds before its store is open)."""
        if self._server is not None:
            raise IllegalStateError("server already started")
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            partial(ChannelProtocol, self._on_connect), host, port, start_serving=serve
        )
        sockname = self._server.sockets[0].getsockname()
        self.host, self.port = str(sockname[0]), int(sockname[1])
        self._housekeeping = loop.create_task(self._housekeep())
        log.info("remoting server listening on %s (%s loop)", self.addr, loop_kind(loop))
        return self.port

    async def start_serving(self) -> None:
        if self._server is None:
            raise IllegalStateError("server not started")
        await self._server.start_serving()

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._housekeeping
        channels = list(self._channels)
        for channel in channels:
            channel.close()
        for channel in channels:
            await channel.wait_closed()
        await server.wait_closed()
        log.info("remoting server on %s stopped", self.addr)

    def _on_connect(self, writer: TransportWriter) -> RemotingChannel | None:
        if self._server is None:
            return None
        channel = RemotingChannel(
            writer,
            writer.protocol,
            self._processors,
            max_frame_size=self._max_frame_size,
            max_requests_in_flight=self._max_requests_in_flight,
            max_deferred_answers=self._max_deferred_answers,
        )
        self._channels.add(channel)
        channel.add_close_listener(self._on_channel_close)
        log.debug("connection from %s", channel.remote_addr)
        return channel

    def _on_channel_close(self, channel: RemotingChannel) -> None:
        self._channels.discard(channel)
        for listener in self._close_listeners:
            try:
                listener(channel)
            except Exception:  # one close listener's error must not stop the others; logged
                log.exception("channel close listener failed for %s", channel.remote_addr)

    async def _housekeep(self) -> None:
        last_idle_check = time.monotonic()
        while True:
            await asyncio.sleep(min(SCAN_RESPONSE_TABLE_INTERVAL_S, self._housekeeping_interval_s))
            now = time.monotonic()
            for channel in list(self._channels):
                channel.scan_response_table(now)
            if now - last_idle_check >= self._housekeeping_interval_s:
                last_idle_check = now
                self.close_idle_channels(now)

    def close_idle_channels(self, now_monotonic: float) -> int:
        """Close connections with no traffic for longer than the idle timeout."""
        closed = 0
        for channel in list(self._channels):
            if now_monotonic - channel.last_active_monotonic > self._idle_timeout_s:
                log.info("closing idle connection %s", channel.remote_addr)
                channel.close()
                closed += 1
        return closed

    # ------------------------------------------------------------------ server -> client

    async def invoke(
        self, channel: RemotingChannel, request: RemotingCommand, timeout_s: float
    ) -> RemotingCommand:
        return await channel.invoke(request, timeout_s)

    async def invoke_oneway(self, channel: RemotingChannel, request: RemotingCommand) -> None:
        await channel.invoke_oneway(request)
