"""RemotingClient: asyncio connections by address, for producers, consumers, brokers and admin.

One ``RemotingChannel`` per ``ip:port``, created on first use and re-created after it closes.
``addr=None`` means "a name server": the client keeps the one it last reached and moves to the
next address of the list when connecting fails. Requests the server starts (e.g.
NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE) go to the processors registered here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from functools import partial

from rocketq.errors import RemotingConnectError
from rocketq.remoting.channel import (
    SCAN_RESPONSE_TABLE_INTERVAL_S,
    ProcessorTable,
    RemotingChannel,
    RequestProcessor,
)
from rocketq.remoting.channel_protocol import ChannelProtocol, TransportWriter
from rocketq.remoting.codec import MAX_FRAME_SIZE
from rocketq.remoting.protocol.command import RemotingCommand

log = logging.getLogger(__name__)

# Edits each request before it is sent, e.g. acl.AclClientRPCHook adds the signature.
RpcHook = Callable[[RemotingCommand], None]


def parse_addr(addr: str) -> tuple[str, int]:
    """``"host:port"`` -> (host, port); raises RemotingConnectError when malformed."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise RemotingConnectError(f"bad address {addr!r}")
    return host, int(port)


class RemotingClient:
    def __init__(
        self,
        *,
        namesrv_addrs: list[str] | None = None,
        connect_timeout_s: float = 3.0,
        max_frame_size: int = MAX_FRAME_SIZE,
        rpc_hook: RpcHook | None = None,
    ) -> None:
        self._rpc_hook = rpc_hook
        self._processors = ProcessorTable()
        self._channels: dict[str, RemotingChannel] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._namesrv_addrs: list[str] = list(namesrv_addrs or [])
        self._namesrv_index = 0
        self._namesrv_chosen: str | None = None
        self._connect_timeout_s = connect_timeout_s
        self._max_frame_size = max_frame_size
        self._closed = False
        self._scan_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ setup

    def register_processor(self, code: int, processor: RequestProcessor) -> None:
        self._processors.register(code, processor)

    def register_default_processor(self, processor: RequestProcessor) -> None:
        self._processors.default = processor

    def update_namesrv_addr_list(self, addrs: list[str]) -> None:
        if addrs != self._namesrv_addrs:
            self._namesrv_addrs = list(addrs)
            if self._namesrv_chosen not in self._namesrv_addrs:
                self._namesrv_chosen = None

    def get_namesrv_addr_list(self) -> list[str]:
        return list(self._namesrv_addrs)

    # ------------------------------------------------------------------ invoking

    async def invoke(
        self, addr: str | None, request: RemotingCommand, timeout_s: float = 3.0
    ) -> RemotingCommand:
        """Send ``request`` to ``addr`` (None: a name server) and return its response."""
        channel = self._channels.get(addr) if addr is not None else None
        if channel is None or channel.is_closed or self._scan_task is None:
            channel = await self.get_channel(addr)
        if self._rpc_hook is not None:
            self._rpc_hook(request)
        return await channel.invoke(request, timeout_s)

    async def invoke_oneway(self, addr: str | None, request: RemotingCommand) -> None:
        channel = await self.get_channel(addr)
        if self._rpc_hook is not None:
            self._rpc_hook(request)
        await channel.invoke_oneway(request)

    async def get_channel(self, addr: str | None) -> RemotingChannel:
        if self._closed:
            raise RemotingConnectError("client is shut down")
        if self._scan_task is None:
            self._scan_task = asyncio.get_running_loop().create_task(self._scan_responses())
        if addr is None:
            return await self._namesrv_channel()
        channel = self._channels.get(addr)
        if channel is not None and not channel.is_closed:
            return channel
        lock = self._locks.setdefault(addr, asyncio.Lock())
        async with lock:
            channel = self._channels.get(addr)
            if channel is None or channel.is_closed:
                channel = await self._connect(addr)
                self._channels[addr] = channel
            return channel

    async def _namesrv_channel(self) -> RemotingChannel:
        if self._namesrv_chosen is not None:
            try:
                return await self.get_channel(self._namesrv_chosen)
            except RemotingConnectError:
                self._namesrv_chosen = None
        if not self._namesrv_addrs:
            raise RemotingConnectError("no name server address")
        last_error: RemotingConnectError | None = None
        for _ in range(len(self._namesrv_addrs)):
            addr = self._namesrv_addrs[self._namesrv_index % len(self._namesrv_addrs)]
            self._namesrv_index += 1
            try:
                channel = await self.get_channel(addr)
            except RemotingConnectError as exc:
                last_error = exc
                continue
            self._namesrv_chosen = addr
            return channel
        assert last_error is not None
        raise last_error

    async def _connect(self, addr: str) -> RemotingChannel:
        host, port = parse_addr(addr)
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                _, protocol = await asyncio.get_running_loop().create_connection(
                    partial(ChannelProtocol, self._new_channel), host, port
                )
        except (OSError, TimeoutError) as exc:
            raise RemotingConnectError(f"connect to {addr} failed: {_reason(exc)}") from exc
        channel = protocol.channel
        assert isinstance(channel, RemotingChannel)
        log.debug("connected to %s", addr)
        return channel

    def _new_channel(self, writer: TransportWriter) -> RemotingChannel:
        return RemotingChannel(
            writer, writer.protocol, self._processors, max_frame_size=self._max_frame_size
        )

    # ------------------------------------------------------------------ lifecycle

    def close_channel(self, addr: str) -> None:
        channel = self._channels.pop(addr, None)
        if channel is not None:
            channel.close()

    async def _scan_responses(self) -> None:
        """Fail expired requests once a second (NettyRemotingClient's scanResponseTable)."""
        while True:
            await asyncio.sleep(SCAN_RESPONSE_TABLE_INTERVAL_S)
            now = time.monotonic()
            for channel in list(self._channels.values()):
                channel.scan_response_table(now)

    async def invoke_async(
        self, addr: str | None, request: RemotingCommand, timeout_s: float = 3.0
    ) -> asyncio.Future[RemotingCommand]:
        """Send ``request``; the future completes with the response or a timeout error."""
        channel = await self.get_channel(addr)
        if self._rpc_hook is not None:
            self._rpc_hook(request)
        return await channel.invoke_async(request, timeout_s)

    async def shutdown(self) -> None:
        self._closed = True
        if self._scan_task is not None:
            self._scan_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._scan_task
            self._scan_task = None
        channels = list(self._channels.values())
        self._channels.clear()
        for channel in channels:
            channel.close()
        for channel in channels:
            await channel.wait_closed()

    async def __aenter__(self) -> RemotingClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()


def _reason(exc: OSError | TimeoutError) -> str:
    """A failed connect in words ("connection refused"), not a Python class."""
    if isinstance(exc, TimeoutError) and not exc.errno:
        return "timed out"
    if exc.errno:
        return os.strerror(exc.errno).lower()
    return str(exc) or "failed"
