"""FrameWriter: the write side of a RemotingChannel (channel.py), and the replies that need no
processor (overload, a processor's failure).

Writes never wait on the reader's path: a fast processor's reply is written at once and the
reader reads no more while replies wait for the socket. Writes are coalesced: the first frame
of a loop iteration goes out at once, the frames that follow it in the same iteration are
queued and written with one ``writelines`` (one writev).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from rocketq.errors import RemotingConnectError, RemotingError
from rocketq.remoting.channel_protocol import TransportWriter
from rocketq.remoting.codec import encode_head
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode

log = logging.getLogger("rocketq.remoting.channel")

#: The writers whose answers wait, on this thread, for their connection's other answers of
#: the same put flush (``hold_answers``); ``writers`` is None while no flush holds them.
_held = threading.local()

# an answer given on the reader with a body this large is written at once (with the answers
# queued before it), not at the read's end: its client can start on it meanwhile
EAGER_BODY = 4096


class FrameWriter:
    """The writing half of RemotingChannel (which sets these attributes and ``close``s)."""

    _writer: TransportWriter
    _closed: asyncio.Event
    _reading: bool  # dispatching a read: its end writes the queued answers
    _unwritten: list[bytes]
    _write_window_open: bool
    _deferred: int  # requests whose answer comes later (a send in a put flush)
    _joining: bool = False  # an answer waits in _unwritten for this connection's next answers
    remote_addr: str
    last_active_monotonic: float

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ replies

    def _write_reply(
        self, request: RemotingCommand, response: RemotingCommand, *, burst: bool = False
    ) -> None:
        """Write a response now, without waiting for the socket (the reader waits instead)."""
        if self.is_closed:
            return
        response.response_to(request)
        try:
            self._write(response, burst=burst)
        except RemotingError as exc:
            log.debug("response to %s not sent: %s", self.remote_addr, exc)

    def write_joined(self, request: RemotingCommand, response: RemotingCommand) -> None:
        """Write a response without waiting; while a put flush holds the answers
        (:func:`hold_answers`) and this connection has answers still to come (its sends in
        that flush), it waits for them and leaves in their write, one writev for both: the
        answer of a pull woken by a send's dispatch and that send's reply cost the client one
        read and the broker one ``write``, where they cost two. At the latest it leaves when
        the flush ends (:func:`release_answers`)."""
        if self.is_closed:
            return
        response.response_to(request)
        self.write_joined_frame(encode_head(response), response.body)

    def write_joined_frame(self, head: bytes, body: bytes) -> None:
        """``write_joined`` of a response already encoded: its frame's ``head`` (the length,
        the header word and the header, the opaque the request's) and ``body``."""
        if self.is_closed:
            return
        writers: list[FrameWriter] | None = getattr(_held, "writers", None)
        if writers is None or not self._deferred or self._write_window_open or self._reading:
            try:
                self._write_frame(head, body)
            except RemotingError as exc:
                log.debug("response to %s not sent: %s", self.remote_addr, exc)
            return
        self._unwritten.append(head)
        if body:
            self._unwritten.append(body)
        self._write_window_open = self._joining = True  # no loop callback: see _write_frames
        writers.append(self)
        self.last_active_monotonic = time.monotonic()

    async def _reply(self, request: RemotingCommand, response: RemotingCommand) -> None:
        response.response_to(request)
        try:
            await self.send(response)
        except RemotingError as exc:
            log.debug("response to %s not sent: %s", self.remote_addr, exc)

    def _processor_failed(self, request: RemotingCommand, exc: Exception) -> RemotingCommand:
        log.warning("processor of code %s from %s failed: %r", request.code, self.remote_addr, exc)
        remark = str(exc) or type(exc).__name__
        return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, remark)

    async def _reject_overload(self, request: RemotingCommand) -> None:
        """Too many requests of this connection are running: SYSTEM_BUSY, as Java's full pool."""
        if not request.is_oneway:
            busy = RemotingCommand.create_response(
                ResponseCode.SYSTEM_BUSY, "[OVERLOAD]system busy, start flow control for a while"
            )
            await self._reply(request, busy)

    # ------------------------------------------------------------------ writing

    async def send(self, cmd: RemotingCommand) -> None:
        """Write one command (request or response); wait while the socket buffer is full.

        The head and the body leave as two buffers (no copy of the body into a frame).
        Writes are coalesced: the first frame of a loop iteration goes out at once, frames
        that follow it in the same iteration (32 responses finishing together) are queued
        and written with one ``writelines`` (one writev) when the iteration's ready
        callbacks have run, so a busy connection pays one syscall per burst, not per frame.
        """
        self._write(cmd)
        if self._writer.transport.get_write_buffer_size():
            try:
                await self._writer.drain()
            except (OSError, RuntimeError) as exc:
                self.close()
                raise RemotingConnectError(f"write to {self.remote_addr} failed: {exc}") from exc

    def _write(self, cmd: RemotingCommand, *, burst: bool = False) -> None:
        """Write (or queue in this iteration's write window) one command, without waiting.
        ``burst``: more frames are coming in this iteration (the answers of a batch of
        puts), so even the first is queued and all leave in one writev. Also queued: an
        answer given while a read is dispatched (the read's end writes its answers in one
        writev, and a lone answer costs no loop callback), but one of ``EAGER_BODY`` bytes or
        more (a pop's or a pull's messages) leaves at once with the small answers queued
        before it (an ack and a pop read together are answered with one write, and the
        client starts on those messages while the rest of the read is served). A request
        is written as it comes: queueing a client's requests to the iteration's end (a
        consumer's ack and its next pop in one writev) made the client and the broker take
        turns on 2 cores, 28 % fewer sync sends a second at 32 in flight."""
        self._write_frame(encode_head(cmd), cmd.body, burst=burst)

    def _write_frame(self, head: bytes, body: bytes, *, burst: bool = False) -> None:
        """``_write`` of a command already encoded (its frame's head and body)."""
        if self.is_closed:
            raise RemotingConnectError(f"connection to {self.remote_addr} is closed")
        try:
            if self._write_window_open or burst or self._reading:
                self._unwritten.append(head)
                if body:
                    self._unwritten.append(body)
                if not self._write_window_open:
                    self._write_window_open = True
                    if not self._reading:  # else the end of the read writes them
                        asyncio.get_running_loop().call_soon(self._write_unwritten)
                if self._reading and len(body) >= EAGER_BODY and not burst:
                    frames, self._unwritten = self._unwritten, []
                    self._writer.writelines(frames)
            else:
                if body:
                    self._writer.writelines((head, body))
                else:
                    self._writer.write(head)
                self._write_window_open = True
                asyncio.get_running_loop().call_soon(self._write_unwritten)
        except (OSError, RuntimeError) as exc:
            self.close()
            raise RemotingConnectError(f"write to {self.remote_addr} failed: {exc}") from exc
        self.last_active_monotonic = time.monotonic()

    def _write_frames(self, frames: bytes) -> None:
        """Write encoded frames (a burst's answers, all of this connection's in one flush): at
        once when nothing else is being written in this iteration, else queued in its write
        window. Written at once, they open no window: the burst is already one write, and a
        window would cost a loop callback per connection per flush for frames that rarely
        follow in the same iteration (those are written as they come). An answer waiting
        for them (``write_joined``) leaves with them, in one writev."""
        if self._joining:
            self._unwritten.append(frames)
            self._write_unwritten()
        elif self._write_window_open or self._reading:
            self._unwritten.append(frames)
            if not self._write_window_open:
                self._write_window_open = True  # the end of the read writes them
        else:
            try:
                self._writer.transport.write(frames)  # not through the writer: one call less
            except (OSError, RuntimeError) as exc:
                log.debug("write to %s failed: %s", self.remote_addr, exc)
                self.close()
                return
        self.last_active_monotonic = time.monotonic()

    def _write_unwritten(self) -> None:
        """End the write window: the frames queued in it leave in one writelines."""
        self._write_window_open = self._joining = False
        if not self._unwritten or self.is_closed:
            return
        frames, self._unwritten = self._unwritten, []
        try:
            self._writer.writelines(frames)
        except (OSError, RuntimeError) as exc:
            log.debug("write to %s failed: %s", self.remote_addr, exc)
            self.close()


def hold_answers() -> bool:
    """From now until :func:`release_answers`, a ``write_joined`` answer on this thread waits
    for its connection's next answers (a put flush's: ``LoopDispatchScheduler.hold``); False
    (nothing changed) when already holding."""
    if getattr(_held, "writers", None) is not None:
        return False
    _held.writers = []
    return True


def release_answers() -> None:
    """Stop holding; the answers still waiting (their connection's answers did not come in
    the flush: a send waiting for its sync flush) leave now, one writev a connection."""
    writers: list[FrameWriter] | None = getattr(_held, "writers", None)
    _held.writers = None
    for writer in writers or ():
        if writer._joining and not writer.is_closed:
            writer._write_unwritten()
