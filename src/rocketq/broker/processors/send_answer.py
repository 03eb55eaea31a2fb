"""The answers of a burst of stored single sends in one native call (issue 22, lever 1).

A checked single send whose properties passed through (``send_properties.pass_through``: no
delay or timer property, no transaction flag, not a retry topic) is submitted to the
``PutBatcher`` with a ``FastSendDone``. When a flush (or its group commit) ends, the batcher
hands the results of all of them together to ``SendAnswers.answer_group``: for each put the
store accepted (PUT_OK, one message, a JSON request that wants an answer) it records the
BrokerStatsManager figures exactly as ``send_results.record_put`` does and tells the response
listeners (the rpc latency histogram reads the codes), and the reply heads of the whole burst
are written by ``rocketq._native._remoting.send_reply_heads`` into one buffer per connection,
byte for byte what ``send_results.put_response`` and ``codec.encode_head`` give (the JSON
pieces around the values are cut from the Python encoder's output for a sample reply). Every
other put, and every put when the C module is off (``ROCKETQ_NATIVE=0``), is answered one by
one by the Python path, the reference.

A send C read (the batcher's sends lane) comes without a done callback: ``answer_sends``
takes a flush's ``SendsPutResult`` (C's four ints a put) and the sends' ``DeferredReply``s and
does the same per put, with no result object; the rpc latency histogram and the put latency
figures are told of a connection's replies in one call each. What it does not answer in C it
hands to the Python path with the put's ``PutMessageResult`` (``SendsPutResult.put_result``).
The walk over a flush's sends is itself one C call, ``send_answer_flush`` (send_flush.c): the
sends the Python path answers, one reply buffer a connection and the figures' lists; when it
declines a value, ``_answer_runs`` (the same walk in Python, with ``send_reply_runs``) answers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.processors.send_results import put_response
from rocketq.broker.put_batcher import GroupedDone
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.remoting import native_frames
from rocketq.remoting.codec import encode_json_header
from rocketq.remoting.protocol.codes import SerializeType
from rocketq.remoting.protocol.command import RPC_ONEWAY, RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.store.commitlog_send import SendPut, SendsPutResult
from rocketq.store.results import (
    AppendMessageResult,
    AppendMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)
from rocketq.store.timer.timer_hook import TIMER_TOPIC

if TYPE_CHECKING:
    from rocketq.remoting.channel import DeferredReply, RemotingChannel

log = logging.getLogger(__name__)

_SAMPLE_ID = "@ID@"
_SAMPLE_QUEUE, _SAMPLE_OFFSET, _SAMPLE_OPAQUE = -7771, -7772, -7773


def reply_pieces(broker: BrokerContext) -> tuple[bytes, ...] | None:
    """The JSON text of a send's reply around its msgId, queueId, queueOffset and opaque, cut
    from the Python encoder's header for a sample reply; None if its shape is not the one
    ``send_reply_heads`` fills in."""
    sample = put_response(
        broker,
        PutMessageResult(PutMessageStatus.PUT_OK, _sample_append()),
        queue_id=_SAMPLE_QUEUE,
    )
    sample.opaque = _SAMPLE_OPAQUE
    text = encode_json_header(sample)
    pieces: list[bytes] = []
    for marker in (
        _SAMPLE_ID.encode(),
        str(_SAMPLE_QUEUE).encode(),
        str(_SAMPLE_OFFSET).encode(),
        str(_SAMPLE_OPAQUE).encode(),
    ):
        head, sep, text = text.partition(marker)
        if not sep or marker in text:
            return None
        pieces.append(head)
    pieces.append(text)
    return tuple(pieces)


def _sample_append() -> AppendMessageResult:
    return AppendMessageResult(
        AppendMessageStatus.PUT_OK, msg_id=_SAMPLE_ID, queue_offset=_SAMPLE_OFFSET
    )


class FastSendDone(GroupedDone):
    """A pass-through single send's put callback: alone (``alone``) it answers through the
    Python path; a flush hands it to ``SendAnswers.answer_group`` with the others."""

    __slots__ = ("deferred", "queue_id", "topic")

    def __init__(
        self,
        alone: Callable[[PutMessageResult], None],
        deferred: DeferredReply,
        topic: str,
        queue_id: int,
    ) -> None:
        super().__init__(alone)
        self.deferred = deferred
        self.topic = topic
        self.queue_id = queue_id


#: a lane send answered by the Python path (the send processor's ``_answer_alone``)
AnswerAlone = Callable[["DeferredReply", SendPut, PutMessageResult], None]
_Group = list[tuple[GroupedDone, PutMessageResult]]
#: a connection's answerable puts of a flush: their dones, results and send_reply_heads items
_Run = tuple[list[FastSendDone], list[PutMessageResult], list[tuple[int, str, int, int]]]
_TOPIC = attrgetter("topic")
#: the system topics whose puts the Python path answers (their stats differ)
_SYSTEM_TOPICS = frozenset((SCHEDULE_TOPIC, TIMER_TOPIC))


class SendAnswers:
    """The answers of the pass-through sends of one flush (the module's docstring)."""

    def __init__(self, broker: BrokerContext, alone: AnswerAlone) -> None:
        self.broker = broker
        self._alone = alone
        self._pieces: tuple[bytes, ...] | None = None
        self._success = RemotingCommand.create_response(ResponseCode.SUCCESS)
        self.native_answers = 0  # sends answered by send_reply_heads, for tests and benches
        self._prefix = ""  # the commit log's msgId prefix, and its bytes (answer_now)
        self._prefix_bytes = b""

    # ------------------------------------------------------------------ the sends lane

    def grouped(self, deferred: DeferredReply, put: SendPut) -> GroupedDone:
        """A lane send's done callback, for a flush that goes the general way."""
        alone = self._alone
        return FastSendDone(
            lambda result: alone(deferred, put, result), deferred, put.topic, put.queue_id
        )

    def answer_failed(self, deferreds: list[DeferredReply], puts: list[SendPut]) -> None:
        """Every lane send of a flush whose store call raised: UNKNOWN_ERROR."""
        for deferred, put in zip(deferreds, puts, strict=True):
            self._answer_alone(deferred, put, PutMessageResult(PutMessageStatus.UNKNOWN_ERROR))

    def _answer_alone(
        self, deferred: DeferredReply, put: SendPut, result: PutMessageResult
    ) -> None:
        try:
            self._alone(deferred, put, result)
        except Exception:  # one send's answer must not stop the others'; logged
            log.exception("answering a send to %s failed", put.topic)

    def answer_sends(
        self,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        result: SendsPutResult,
        indexes: Sequence[int],
        status: PutMessageStatus,
    ) -> None:
        """Answer the lane sends at ``indexes`` of a flush (each exactly once): as
        ``answer_group`` does, from C's figures (``status``: the appended ones' final)."""
        native = native_frames.FRAMES
        if native is not None and self._pieces is None:
            self._pieces = reply_pieces(self.broker)
        pieces = self._pieces
        if native is None or pieces is None or status is not PutMessageStatus.PUT_OK:
            for i in indexes:
                self._answer_alone(deferreds[i], puts[i], result.put_result(i, status))
            return
        now = time.perf_counter()
        prefix = result.msg_id_prefix.encode()
        # every send's answer in one C call: which the Python path answers, one reply buffer
        # a connection, the figures' lists
        plan = native.send_answer_flush(
            pieces,
            prefix,
            deferreds,
            puts,
            result.values,
            indexes,
            _SYSTEM_TOPICS,
            SerializeType.JSON,
            now,
        )
        if plan is None:  # a value C does not read: the loop below, send_reply_runs' way
            self._answer_runs(native, pieces, deferreds, puts, result, indexes)
            return
        alone, channels, frames, counts, requests, elapsed_s, sizes = plan
        for i in alone:
            self._answer_alone(deferreds[i], puts[i], result.put_result(i))
        if not channels:
            return
        for channel, count, heads in zip(channels, counts, frames, strict=True):
            channel.answer_frames(count, heads)
        self.native_answers += len(requests)
        self._figures(channels[0], requests, elapsed_s, sizes)

    def answer_now(
        self,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        values: list[int],
        now_ms: int,
        prefix: str,
    ) -> None:
        """``answer_sends`` of every send of a flush ``store.sends_now.put_sends_now`` stored
        (four ints a put, ``now_ms`` their store timestamp, ``prefix`` their msgIds' start;
        none waits: an appended put's status is PUT_OK), the figures in the same step
        (``_figures``' calls, inline)."""
        native = native_frames.FRAMES
        pieces = self._pieces
        if native is not None and pieces is None:
            pieces = self._pieces = reply_pieces(self.broker)
        if native is None or pieces is None:
            result = SendsPutResult(values, now_ms, prefix, [], None)
            for i in range(len(puts)):
                self._answer_alone(deferreds[i], puts[i], result.put_result(i))
            return
        if prefix is not self._prefix:
            self._prefix, self._prefix_bytes = prefix, prefix.encode()
        indexes = range(len(puts))
        plan = native.send_answer_flush(
            pieces,
            self._prefix_bytes,
            deferreds,
            puts,
            values,
            indexes,
            _SYSTEM_TOPICS,
            SerializeType.JSON,
            time.perf_counter(),
        )
        if plan is None:  # a value C does not read: the loop below, send_reply_runs' way
            result = SendsPutResult(values, now_ms, prefix, [], None)
            self._answer_runs(native, pieces, deferreds, puts, result, indexes)
            return
        alone, channels, frames, counts, requests, elapsed_s, sizes = plan
        if alone:
            result = SendsPutResult(values, now_ms, prefix, [], None)
            for i in alone:
                self._answer_alone(deferreds[i], puts[i], result.put_result(i))
        if not channels:
            return
        for channel, count, heads in zip(channels, counts, frames, strict=True):
            channel.answer_frames(count, heads)
        self.native_answers += len(requests)
        stats = self.broker.broker_stats_manager
        try:
            stats.record_flush(elapsed_s, sizes, "Normal")  # latencies and puts, one call
            table = channels[0].processors  # one server's table: the module docstring
            if table.responses_listeners:
                table.tell_responses(requests, self._success, elapsed_s)
        except Exception:  # logged, as a done callback's failure
            log.exception("recording the figures of %d puts failed", len(requests))

    def _figures(
        self,
        channel: RemotingChannel,
        requests: list[RemotingCommand],
        elapsed_s: list[float],
        sizes: dict[str, list[int]],
    ) -> None:
        """The figures of a flush's sends answered in C: the put latencies and the topics' put
        figures (one call for the flush), the rpc latencies (one call)."""
        stats = self.broker.broker_stats_manager
        try:
            stats.record_flush(elapsed_s, sizes, "Normal")  # the burst's figures, one call
            # the sends of the lane come from the one server the processor reads for: one
            # table (and its listeners) for all their connections
            table = channel.processors
            if table.responses_listeners:
                table.tell_responses(requests, self._success, elapsed_s)
        except Exception:  # logged, as a done callback's failure
            log.exception("recording the figures of %d puts failed", len(requests))

    def _answer_runs(
        self,
        native: native_frames.FramePaths,
        pieces: tuple[bytes, ...],
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        result: SendsPutResult,
        indexes: Sequence[int],
    ) -> None:
        """``answer_sends`` a send at a time (``send_answer_flush``'s reference, and the way
        when it declines): each answerable put to its connection's run, the runs' replies by
        ``send_reply_runs``."""
        values = result.values
        json = SerializeType.JSON
        # one pass: each answerable put goes to its connection's run (its index and its
        # send_reply_runs item); the rest answer alone
        # the items name a put's msgId by its offset: C writes it after the prefix
        runs: dict[RemotingChannel, tuple[list[int], list[tuple[int, int, int, int]]]] = {}
        for i in indexes:
            deferred = deferreds[i]
            put = puts[i]
            request = deferred.request
            k = 4 * i
            if (
                values[k]
                or put.topic in _SYSTEM_TOPICS
                or request.serialize_type is not json
                or request.flag & RPC_ONEWAY
            ):
                self._answer_alone(deferred, put, result.put_result(i))
                continue
            run = runs.get(deferred.channel)
            if run is None:
                run = runs[deferred.channel] = ([], [])
            run[0].append(i)
            run[1].append((request.opaque, values[k + 1], put.queue_id, values[k + 3]))
        if not runs:
            return
        # every connection's replies in one C call: one buffer a connection
        items: list[tuple[int, int, int, int]] = []
        ends: list[int] = []
        for _, run_items in runs.values():
            items += run_items
            ends.append(len(items))
        now = time.perf_counter()
        frames = native.send_reply_runs(pieces, items, result.msg_id_prefix.encode(), ends)
        if frames is None:  # a value C does not write: the Python path answers these
            for answered, _ in runs.values():
                for i in answered:
                    self._answer_alone(deferreds[i], puts[i], result.put_result(i))
            return
        answered_all: list[int] = []  # of every connection, for the figures
        for (channel, (answered, _)), heads in zip(runs.items(), frames, strict=True):
            answered_all += answered
            channel.answer_frames(len(answered), heads)
        self.native_answers += len(answered_all)
        self._record(answered_all, now, deferreds, puts, values)

    def _record(
        self,
        answered: list[int],
        now: float,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        values: list[int],
    ) -> None:
        """``_figures`` of a flush's sends answered by ``send_reply_runs`` (the indexes
        ``answered``)."""
        answered_deferreds = [deferreds[i] for i in answered]
        elapsed_s = [now - d.started for d in answered_deferreds]
        sizes: dict[str, list[int]] = {}  # the answered sends' sizes by topic
        for i in answered:
            topic = puts[i].topic
            topic_sizes = sizes.get(topic)
            if topic_sizes is None:
                topic_sizes = sizes[topic] = []
            topic_sizes.append(values[4 * i + 2])
        requests = [d.request for d in answered_deferreds]
        self._figures(answered_deferreds[0].channel, requests, elapsed_s, sizes)

    # ------------------------------------------------------------------ done callbacks

    def answer_group(self, group: _Group) -> None:
        """Answer every put of ``group`` (each exactly once)."""
        native = native_frames.FRAMES
        if native is not None and self._pieces is None:
            self._pieces = reply_pieces(self.broker)
        pieces = self._pieces
        if native is None or pieces is None:
            for done, result in group:
                done.alone(result)
            return
        # one pass: each answerable put goes to its connection's run (its dones, results and
        # send_reply_heads items) and its size to its topic's; the rest answer alone
        runs: dict[RemotingChannel, _Run] = {}
        by_topic: dict[str, list[int]] = {}  # the answered sends' sizes, for their stats
        ok = PutMessageStatus.PUT_OK
        json = SerializeType.JSON
        for done, result in group:
            append = result.append_result
            if (
                type(done) is not FastSendDone
                or result.status is not ok
                or append is None
                or not append.msg_id
                or append.msg_num != 1
                or done.topic in _SYSTEM_TOPICS
            ):
                done.alone(result)
                continue
            deferred = done.deferred
            request = deferred.request
            if request.serialize_type is not json or request.flag & RPC_ONEWAY:
                done.alone(result)
                continue
            run = runs.get(deferred.channel)
            if run is None:
                run = runs[deferred.channel] = ([], [], [])
            run[0].append(done)
            run[1].append(result)
            run[2].append((request.opaque, append.msg_id, done.queue_id, append.queue_offset))
        stats = self.broker.broker_stats_manager
        now = time.perf_counter()
        for channel, (dones, results, items) in runs.items():
            frames = native.send_reply_heads(pieces, items)
            if frames is None:  # a value C does not write: the Python path answers these
                for done, result in zip(dones, results, strict=True):
                    done.alone(result)
                continue
            deferreds = [done.deferred for done in dones]
            channel.answer_frames(len(deferreds), frames)
            self.native_answers += len(dones)
            elapsed_s = [now - d.started for d in deferreds]
            try:
                stats.record_put_latencies(elapsed_s)
                table = channel.processors
                if table.responses_listeners:
                    requests = [d.request for d in deferreds]
                    table.tell_responses(requests, self._success, elapsed_s)
                for done, result in zip(dones, results, strict=True):
                    sizes = by_topic.get(done.topic)
                    if sizes is None:
                        sizes = by_topic[done.topic] = []
                    sizes.append(result.append_result.wrote_bytes)  # type: ignore[union-attr]
            except Exception:  # logged, as a done callback's failure
                log.exception("recording %d puts failed", len(dones))
        try:
            stats.record_puts_by_topic(by_topic, "Normal")  # the burst's figures, one call
        except Exception:  # logged, as a done callback's failure
            log.exception("recording the stats of %d puts failed", len(group))
