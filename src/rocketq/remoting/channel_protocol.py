"""ChannelProtocol: the asyncio Protocol under a RemotingChannel (channel.py), and its writer.

Theory of operation (issue 22, lever 1: a read is one call): the event loop hands the bytes of
each socket read to ``data_received``, which gives them to the channel at once; the channel
splits the frames (in C when built) and runs every fast processor inline, so a read costs no
StreamReader buffer, no await and no task wake-up. Requests without a fast processor still get
their own task. Reading pauses (``transport.pause_reading``) for any of three reasons, each
held separately so that one's end does not resume another's pause: the transport's write
buffer is above its high-water mark (``pause_writing``: the peer reads no replies, so we read
no requests), the connection has too many deferred answers waiting on the store
(``RemotingChannel`` asks through :meth:`ChannelProtocol.pause`), and a malformed frame was
read (the connection answers what came before it, then closes).

``TransportWriter`` is the part of ``asyncio.StreamWriter`` that the channel's writing half
(channel_writer.py) uses, over the transport: ``write``, ``writelines``, ``drain`` (waits while
writing is paused), ``close`` and ``get_extra_info``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

log = logging.getLogger("rocketq.remoting.channel")

# why reading is paused; each is set and cleared on its own
PAUSED_FOR_WRITES = 1  # the peer does not read our replies
PAUSED_FOR_ANSWERS = 2  # too many deferred answers wait on the store
PAUSED_FOR_CLOSE = 4  # a malformed frame: read nothing more


class ReadSink(Protocol):
    """What the protocol feeds: RemotingChannel (channel.py)."""

    def on_read(self, data: bytes) -> None: ...
    def close(self) -> None: ...


class TransportWriter:
    """What a RemotingChannel writes through: the StreamWriter calls it uses, on a transport."""

    __slots__ = ("protocol", "transport")

    def __init__(self, transport: asyncio.Transport, protocol: ChannelProtocol) -> None:
        self.transport = transport
        self.protocol = protocol

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.transport.write(data)

    def writelines(self, frames: Iterable[bytes | bytearray | memoryview]) -> None:
        self.transport.writelines(frames)

    def close(self) -> None:
        self.transport.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    async def drain(self) -> None:
        """Wait while the transport's write buffer is above its high-water mark."""
        await self.protocol.writable()


class ChannelProtocol(asyncio.Protocol):
    """One connection's protocol: reads go straight to its RemotingChannel."""

    def __init__(self, make_channel: Callable[[TransportWriter], ReadSink | None]) -> None:
        self._make_channel = make_channel
        self.channel: ReadSink | None = None
        self._transport: asyncio.Transport | None = None
        self.paused = 0  # PAUSED_FOR_* bits (read by the channel; set by pause and resume)
        self._write_waiters: list[asyncio.Future[None]] = []
        self._write_paused = False
        self._lost = False

    # ------------------------------------------------------------------ connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)  # uvloop's is not asyncio's subclass
        self._transport = stream
        self.channel = self._make_channel(TransportWriter(stream, self))
        if self.channel is None:  # the server stopped meanwhile
            stream.close()

    def data_received(self, data: bytes) -> None:
        channel = self.channel
        if channel is not None:
            channel.on_read(data)

    def eof_received(self) -> bool:
        return False  # the peer closed its side: close ours (connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if exc is not None:
            log.debug("connection lost: %s", exc)
        self._wake_writers(exc)
        if self.channel is not None:
            self.channel.close()

    # ------------------------------------------------------------------ flow control

    def pause(self, reason: int) -> None:
        """Read no more for ``reason`` (a PAUSED_FOR_* bit) until :meth:`resume` of it."""
        if not self.paused and self._transport is not None and not self._lost:
            self._transport.pause_reading()
        self.paused |= reason

    def resume(self, reason: int) -> None:
        if not self.paused & reason:
            return
        self.paused &= ~reason
        if not self.paused and self._transport is not None and not self._lost:
            self._transport.resume_reading()

    def pause_writing(self) -> None:
        self._write_paused = True
        self.pause(PAUSED_FOR_WRITES)

    def resume_writing(self) -> None:
        self._write_paused = False
        self._wake_writers(None)
        self.resume(PAUSED_FOR_WRITES)

    async def writable(self) -> None:
        if self._lost:
            raise ConnectionResetError("connection lost")
        if not self._write_paused:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._write_waiters.append(waiter)
        await waiter

    def _wake_writers(self, exc: Exception | None) -> None:
        waiters, self._write_waiters = self._write_waiters, []
        for waiter in waiters:
            if waiter.done():
                continue
            if self._lost:
                waiter.set_exception(exc or ConnectionResetError("connection lost"))
            else:
                waiter.set_result(None)


def format_addr(sockname: object) -> str:
    """``ip:port`` of a socket address tuple ('' when unknown)."""
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return f"{sockname[0]}:{sockname[1]}"
    return ""
