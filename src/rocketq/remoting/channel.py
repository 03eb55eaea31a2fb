"""RemotingChannel: one TCP connection carrying requests and responses both ways.

Theory of operation (NettyRemotingAbstract): the connection's ``ChannelProtocol``
(channel_protocol.py) hands the bytes of each socket read to ``on_read``, which feeds the
sans-IO ``FrameDecoder`` and dispatches the read's commands in the same call (no reader task,
no await per read). Where the table has ``sends`` (the broker's send processor) and no rpc
hook, the split also reads the read's fast-path sends into their puts (C ``split_sends``) and
each (request, put) goes to ``ReadSends.take`` (C's ``take_sends`` for the read's leading
ones, in one call); the request's extFields stay unread unless it leaves that path
(``native_frames.full_request``). A response completes the future registered under its
``opaque`` (``RequestInvoker`` in channel_requests.py: the requests this side sends). A
request runs in its own task (a held PULL must not block the reader), unless its code has a
fast processor: that runs on the reader and answers at once, later (``DeferredReply``, e.g.
the broker's puts of one loop iteration stored together) or, when it must wait, in a task
after all; the connection reads no more while replies wait for the socket or while too many
of its answers wait on the store (``MAX_DEFERRED_ANSWERS``). A processor is
looked up by code; an unknown code answers REQUEST_CODE_NOT_SUPPORTED, a processor that raises
answers SYSTEM_ERROR with the reason in ``remark``, and a oneway request gets no response. A
malformed or oversized frame closes this connection only, after the requests read before it in
the same burst are answered (``_settle``, bounded). Closing fails every pending request,
cancels running processors and calls the close listeners. Writing, coalesced per loop
iteration, is channel_writer.py's ``FrameWriter``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeAlias

from rocketq.common import native_record
from rocketq.errors import RemotingConnectError, RemotingError
from rocketq.remoting import native_frames
from rocketq.remoting.channel_protocol import (
    PAUSED_FOR_ANSWERS,
    PAUSED_FOR_CLOSE,
    ChannelProtocol,
    TransportWriter,
    format_addr,
)
from rocketq.remoting.channel_requests import ResponseSlot
from rocketq.remoting.channel_settle import AnswerSettle
from rocketq.remoting.codec import MAX_FRAME_SIZE, FrameDecoder
from rocketq.remoting.native_frames import SendSpec, SendTaker, full_request
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

MAX_REQUESTS_IN_FLIGHT = 10_000  # per connection; more answer SYSTEM_BUSY [OVERLOAD]
# deferred answers (puts waiting on the store) of one connection at which it reads no more,
# until half of them are answered
MAX_DEFERRED_ANSWERS = 4096

RequestProcessor = Callable[["RemotingChannel", RemotingCommand], Awaitable[RemotingCommand | None]]
CloseListener = Callable[["RemotingChannel"], None]
# A fast processor runs on the connection's reader, without a task: it returns the response
# (None for none) when it can answer at once, a coroutine (run as the request's own task,
# so an ``asyncio.timeout`` it enters binds to that task) when it must wait, or the
# DeferredReply of ``channel.defer(request)`` when something else answers it later
FastResult: TypeAlias = (
    "RemotingCommand | Coroutine[Any, Any, RemotingCommand | None] | DeferredReply | None"
)
FastProcessor = Callable[["RemotingChannel", RemotingCommand], FastResult]
# Runs before a request's processor (RocketMQ's server RPCHook.doBeforeRequest, e.g. the
# broker's ACL check): None lets the request through, a response refuses it.
ServerRpcHook = Callable[["RemotingChannel", RemotingCommand], RemotingCommand | None]
# Told of every answered request with its response and how long it took (seconds): the
# rocketmq_rpc_latency histogram of RemotingMetricsManager reads it
ResponseListener = Callable[[RemotingCommand, RemotingCommand, float], None]
# The same for several requests answered together with one response code (the broker's sends
# of one flush on one connection): the requests, the response, the seconds each took
ResponsesListener = Callable[[list[RemotingCommand], RemotingCommand, list[float]], None]


class ReadSends(Protocol):
    """The sends a read's C split reads into their puts (the broker's send processor):
    ``spec_for`` the ``split_sends`` spec for a connection's read (None: split as any other
    read), ``spec_state`` the same with the object it was made from (a read's ``split_take``
    checks the broker's config is still that one), ``take`` a request and its put as its
    fast processor would, or None to leave it to that processor (the reference); C's
    ``take_sends`` takes as ``take``, in one call."""

    taker: SendTaker | None  # C take_sends' state (None: each send through take)

    def spec_for(self, channel: RemotingChannel) -> SendSpec | None: ...
    def spec_state(self, channel: RemotingChannel) -> tuple[SendSpec, object] | None: ...
    def take(
        self, channel: RemotingChannel, request: RemotingCommand, put: Any
    ) -> DeferredReply | None: ...


SCAN_RESPONSE_TABLE_INTERVAL_S = 1.0


class ProcessorTable:
    """Request processors by code, with an optional default (RocketMQ's processorTable)."""

    def __init__(self) -> None:
        self._processors: dict[int, RequestProcessor] = {}
        self.fast: dict[int, FastProcessor] = {}
        # run after the requests of one read are dispatched (the broker stores their puts)
        self.read_end_hooks: list[Callable[[], None]] = []
        self.default: RequestProcessor | None = None
        self.rpc_hooks: list[ServerRpcHook] = []
        self.response_listeners: list[ResponseListener] = []
        self.responses_listeners: list[ResponsesListener] = []  # the same listeners, by burst
        # the broker's fast-path sends, read into their puts by the read's split (on_read)
        self.sends: ReadSends | None = None

    def register(self, code: int, processor: RequestProcessor) -> None:
        self._processors[int(code)] = processor
        self.fast.pop(int(code), None)  # the last registration of a code wins

    def register_fast(self, code: int, processor: FastProcessor) -> None:
        """Serve ``code`` with a fast processor (instead of a task per request)."""
        self.fast[int(code)] = processor
        self._processors.pop(int(code), None)

    def add_response_listener(
        self, listener: ResponseListener, many: ResponsesListener | None = None
    ) -> None:
        """``listener`` for each answered request; ``many`` (the same figures in one call)
        for requests answered together, else ``listener`` for each of them."""
        self.response_listeners.append(listener)
        if many is None:

            def many(
                requests: list[RemotingCommand], response: RemotingCommand, elapsed: list[float]
            ) -> None:
                for request, elapsed_s in zip(requests, elapsed, strict=True):
                    listener(request, response, elapsed_s)

        self.responses_listeners.append(many)

    def tell_responses(
        self, requests: list[RemotingCommand], response: RemotingCommand, elapsed_s: list[float]
    ) -> None:
        """Tell the response listeners of ``requests`` answered together with ``response``'s
        code, ``elapsed_s`` the seconds each took (a listener's failure is the caller's)."""
        for listener in self.responses_listeners:
            listener(requests, response, elapsed_s)

    def lookup(self, code: int) -> RequestProcessor | None:
        return self._processors.get(code, self.default)

    def refusal_of(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        """The first hook's refusal of ``request``, or None when every hook lets it through."""
        for hook in self.rpc_hooks:
            refusal = hook(channel, request)
            if refusal is not None:
                return refusal
        return None


class DeferredReply:
    """A request a fast processor answers later (``answer``), without a task of its own."""

    __slots__ = ("channel", "request", "started")

    def __init__(self, channel: RemotingChannel, request: RemotingCommand) -> None:
        self.channel = channel
        self.request = request
        self.started = time.perf_counter()

    def answer(self, response: RemotingCommand | None) -> None:
        self.channel._answer_deferred(self, response)


class RemotingChannel(AnswerSettle):
    """A connection; also the ``ctx`` passed to request processors."""

    def __init__(
        self,
        writer: TransportWriter,
        protocol: ChannelProtocol,
        processors: ProcessorTable,
        *,
        max_frame_size: int = MAX_FRAME_SIZE,
        max_requests_in_flight: int = MAX_REQUESTS_IN_FLIGHT,
        max_deferred_answers: int = MAX_DEFERRED_ANSWERS,
    ) -> None:
        self._max_requests_in_flight = max_requests_in_flight
        self._max_deferred = max_deferred_answers
        self._protocol = protocol
        self._writer = writer
        self._processors = processors
        self._decoder = FrameDecoder(max_frame_size)
        self._max_frame_size = max_frame_size
        self._partial = self._decoder.partial  # a partial frame waits: on_read's general path
        # what on_read's one C call (split_take) needs, kept by _read: (the C frames, the C
        # record module, the sends, their taker, the spec, the config it was made from)
        self._taking: (
            tuple[native_frames.FramePaths, object, ReadSends, SendTaker, SendSpec, object] | None
        ) = None
        self._responses: dict[int, ResponseSlot] = {}
        self._deadlines: dict[int, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._deferred = 0  # DeferredReply not yet answered
        self._reading = False  # dispatching a read: its end writes the queued answers
        self._settled: asyncio.Event | None = None  # set when the deferred replies are all sent
        self._close_listeners: list[CloseListener] = []
        self._closed = asyncio.Event()
        self._open = True  # not self._closed.is_set(), without a call (set together)
        self._unwritten: list[bytes] = []
        self._write_window_open = False
        self.remote_addr = format_addr(writer.get_extra_info("peername"))
        self.local_addr = format_addr(writer.get_extra_info("sockname"))
        self.last_active_monotonic = time.monotonic()
        self.attributes: dict[str, object] = {}

    # ------------------------------------------------------------------ lifecycle

    def add_close_listener(self, listener: CloseListener) -> None:
        if self.is_closed:
            listener(self)
        else:
            self._close_listeners.append(listener)

    def close(self) -> None:
        """Close now; pending requests fail with RemotingConnectError."""
        if self.is_closed:
            return
        self._open = False
        self._closed.set()
        if self._unwritten:  # queued in this loop iteration: the transport sends them on close
            frames, self._unwritten = self._unwritten, []
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.writelines(frames)
        self._writer.close()
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        error = RemotingConnectError(f"connection to {self.remote_addr} closed")
        for future in self._responses.values():
            if not future.done():
                future.set_exception(error)
        self._responses.clear()
        self._deadlines.clear()
        for listener in self._close_listeners:
            try:
                listener(self)
            except Exception:  # one close listener's error must not stop the others; logged
                log.exception("close listener of %s failed", self.remote_addr)

    # ------------------------------------------------------------------ reading

    def on_read(self, data: bytes) -> None:
        """The bytes of one socket read (ChannelProtocol.data_received): split the frames,
        run their processors (fast ones inline), store the read's puts, write its answers.
        With ``_taking`` (kept by ``_read``) current: one C call first (``split_take``)."""
        taking = self._taking
        if taking is not None and self._open and not self._protocol.paused:
            frames, record, sends, taker, spec, config = taking
            processors = self._processors
            if (
                frames is native_frames.FRAMES
                and record is native_record.RECORD
                and sends is processors.sends
                and taker is sends.taker
                and not processors.rpc_hooks
                and not self._partial
            ):
                self.last_active_monotonic = time.monotonic()
                room = self._max_requests_in_flight - len(self._tasks) - self._deferred
                try:
                    taken = frames.split_take(
                        data, self._max_frame_size, spec, self, room, taker, config
                    )
                except Exception:  # a bug must close this connection only; logged
                    log.exception("reading from %s failed", self.remote_addr)
                    self.close()
                    return
                if isinstance(taken, int):  # the read was sends, every one taken
                    self._deferred += taken
                    self._reading = True
                    for hook in processors.read_end_hooks:
                        try:
                            hook()
                        except Exception:  # a hook's error must not kill the reader; logged
                            log.exception("read-end hook failed on %s", self.remote_addr)
                    self._reading = False
                    if self._write_window_open:  # the read's answers leave now, in one writev
                        self._write_unwritten()
                    if self._deferred >= self._max_deferred:
                        self._protocol.pause(PAUSED_FOR_ANSWERS)  # the store is behind
                    return
                if taken is not None:  # more than taken sends: the rest the general way
                    self._read(data, taken)
                    return
            self._taking = None  # made again by _read while it holds (the config changed)
        self._read(data, None)

    def _read(self, data: bytes, split: tuple[list[Any], int, str | None, int] | None) -> None:
        """``on_read``'s general path; ``split`` is ``split_take``'s answer when it split
        this read and took its leading sends (the rest are dispatched here)."""
        if not self._open or self._protocol.paused & PAUSED_FOR_CLOSE:
            return
        self.last_active_monotonic = time.monotonic()
        self._reading = True
        processors = self._processors
        sends = processors.sends
        try:
            # the read's sends come split and read into their puts, in one C call, when no
            # rpc hook (ACL, fencing) must see them first (split: _taking is still current)
            skip = split is not None or sends is None or processors.rpc_hooks
            state = None if skip else sends.spec_state(self)  # type: ignore[union-attr]
            if state is None and split is None:
                commands, malformed = self._decoder.feed_until_error(data)
                for cmd in commands:
                    self._dispatch(cmd)
            else:
                assert sends is not None  # split_take split it: the same sends
                limit = self._max_requests_in_flight
                taker, frames = sends.taker, native_frames.FRAMES
                if split is not None:  # split_take split it and took its leading sends
                    items, consumed, reason, taken = split
                    self._deferred += taken
                    items, malformed = self._decoder.after_split(data, items, consumed, reason)
                else:
                    assert state is not None
                    items, malformed = self._decoder.feed_sends(data, state[0])
                    if taker is not None and frames is not None and items:  # the leading
                        room = limit - len(self._tasks) - self._deferred  # sends, one C call
                        taken = frames.take_sends(items, self, room, taker)
                        if taken:
                            self._deferred += taken
                            items = items[taken:]
                if state is not None and taker is not None and frames is not None:
                    self._taking = (frames, native_record.RECORD, sends, taker, *state)
                take = sends.take
                for item in items:
                    if type(item) is not tuple:
                        self._dispatch(item)  # type: ignore[arg-type]
                    elif len(self._tasks) + self._deferred >= limit:
                        self._dispatch(full_request(item))  # over the in-flight limit
                    else:  # a send the split read into its put: queued at once by take
                        try:
                            deferred = take(self, item[0], item[1])
                        except Exception as exc:  # noqa: BLE001 -- as a fast processor's: SYSTEM_ERROR with the reason
                            request = full_request(item)
                            failed = self._processor_failed(request, exc)
                            self._answer(request, failed, time.perf_counter())
                            continue
                        if deferred is None:  # the Python path reads the request again
                            self._dispatch(full_request(item))
                        else:
                            self._deferred += 1
            for hook in processors.read_end_hooks:
                try:
                    hook()
                except Exception:  # a hook's error must not kill the reader; logged
                    log.exception("read-end hook failed on %s", self.remote_addr)
        except RemotingError as exc:
            log.warning("closing connection from %s: %s", self.remote_addr, exc)
            self.close()
            return
        except Exception:  # a bug must close this connection only; logged
            log.exception("reading from %s failed", self.remote_addr)
            self.close()
            return
        finally:
            self._reading = False
        if self._write_window_open:  # this read's answers leave now, in one writev
            self._write_unwritten()
        if malformed is not None:  # the frames before it are answered, then close
            log.warning("closing connection from %s: %s", self.remote_addr, malformed)
            self._protocol.pause(PAUSED_FOR_CLOSE)
            self._spawn(self._settle_and_close())
        elif self._deferred >= self._max_deferred:
            self._protocol.pause(PAUSED_FOR_ANSWERS)  # the store is behind: read no more

    def _dispatch(self, cmd: RemotingCommand) -> None:
        if cmd.is_response:
            self._deadlines.pop(cmd.opaque, None)
            future = self._responses.pop(cmd.opaque, None)
            if future is None or future.done():
                log.debug("response with unknown opaque %s from %s", cmd.opaque, self.remote_addr)
            else:
                future.set_result(cmd)
            return
        coro: Coroutine[Any, Any, None]
        if len(self._tasks) + self._deferred >= self._max_requests_in_flight:
            coro = self._reject_overload(cmd)
        else:
            fast = self._processors.fast.get(cmd.code)
            if fast is not None:
                self._process_fast(fast, cmd)
                return
            coro = self._process_request(cmd)
        self._spawn(coro)

    def _process_fast(self, fast: FastProcessor, request: RemotingCommand) -> None:
        """Run a fast processor on the reader: answer now, later, or in a task."""
        if self._processors.rpc_hooks:
            refusal = self._refusal(request)
            if refusal is not None:
                if not request.is_oneway:
                    self._write_reply(request, refusal)
                return
        started = time.perf_counter()
        result: FastResult
        try:
            result = fast(self, request)
        except Exception as exc:  # noqa: BLE001 -- a processor that raises answers SYSTEM_ERROR with the reason
            result = self._processor_failed(request, exc)
        if isinstance(result, DeferredReply):
            self._deferred += 1
        elif result is None or isinstance(result, RemotingCommand):
            self._answer(request, result, started)
        else:
            self._spawn(self._finish(request, result, started))

    async def _finish(
        self,
        request: RemotingCommand,
        pending: Coroutine[Any, Any, RemotingCommand | None],
        started: float,
    ) -> None:
        try:
            response = await pending
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a processor that raises answers SYSTEM_ERROR with the reason
            response = self._processor_failed(request, exc)
        self._answer(request, response, started)

    def _answer_deferred(self, deferred: DeferredReply, response: RemotingCommand | None) -> None:
        self._deferred -= 1
        self._answered_deferred()
        self._answer(deferred.request, response, deferred.started, burst=True)

    def _answer(
        self,
        request: RemotingCommand,
        response: RemotingCommand | None,
        started: float,
        *,
        burst: bool = False,
    ) -> None:
        if response is None:
            return
        for listener in self._processors.response_listeners:
            listener(request, response, time.perf_counter() - started)
        if not request.is_oneway:
            self._write_reply(request, response, burst=burst)

    @property
    def processors(self) -> ProcessorTable:
        """The table this connection's requests are served by (its server's, shared)."""
        return self._processors

    def defer(self, request: RemotingCommand) -> DeferredReply:
        """For a fast processor whose answer comes later: return this, then ``answer`` it."""
        return DeferredReply(self, request)

    def _refusal(self, request: RemotingCommand) -> RemotingCommand | None:
        try:
            return self._processors.refusal_of(self, request)
        except Exception as exc:  # noqa: BLE001 -- an rpc hook that raises refuses the request with the reason
            log.warning(
                "rpc hook failed on code %s from %s: %r", request.code, self.remote_addr, exc
            )
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__
            )

    async def _process_request(self, request: RemotingCommand) -> None:
        refusal = self._refusal(request)
        if refusal is not None:
            if not request.is_oneway:
                await self._reply(request, refusal)
            return
        processor = self._processors.lookup(request.code)
        if processor is None:
            remark = f" request type {request.code} not supported"
            unsupported = RemotingCommand.create_response(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, remark
            )
            await self._reply(request, unsupported)
            return
        response: RemotingCommand | None
        started = time.perf_counter()
        try:
            response = await processor(self, request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a processor that raises answers SYSTEM_ERROR with the reason
            response = self._processor_failed(request, exc)
        if response is not None:
            for listener in self._processors.response_listeners:
                listener(request, response, time.perf_counter() - started)
        if response is not None and not request.is_oneway:
            await self._reply(request, response)
