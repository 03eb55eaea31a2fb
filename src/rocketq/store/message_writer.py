"""The write side of MessageStore (DefaultMessageStore's puts and CommitLog.handleDiskFlush/HA).

Puts encode outside the CommitLog lock; in SYNC_FLUSH mode a put's future completes only
after its bytes are msynced (``flush.py``), unless the put does not wait for the store
(WAIT=false): then it completes once appended. On a SYNC_MASTER the put also waits until a
slave holds its bytes (``ha``). ``async_put_each`` appends the broker's separate puts of one
loop iteration in one lock hold with one group-commit request; its ``SendPut``s (pass-through
single sends) are encoded and appended by C in one call per file (``CommitLog.append_each``),
or, with C off, built into messages and encoded here as every other put (the reference).
``async_put_sends`` is ``async_put_each`` for a run of SendPuts alone (the broker's single
sends, C on): the same checks and steps, C's figures as the results (``SendsPutResult``).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import lru_cache
from operator import attrgetter
from typing import NamedTuple

from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.common.message_id import bytes_to_host
from rocketq.common.properties import encode_properties
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX, topic_max_length, validate_topic
from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.store.commitlog_send import SEND_STATUSES, SendPut, SendsPutResult, with_refused
from rocketq.store.completed_future import CompletedFuture
from rocketq.store.config import BrokerRole, StoreConfig
from rocketq.store.flush import FlushRealTimeService, GroupCommitService
from rocketq.store.ha.ha_service import HAService
from rocketq.store.mapped_file import MappedFileCreateError
from rocketq.store.reput import ReputMessageService
from rocketq.store.results import (
    AppendMessageResult,
    PutMessageResult,
    PutMessageStatus,
)

log = logging.getLogger(__name__)

MAX_PROPERTIES_SIZE = 32_767


@lru_cache(maxsize=4096)
def legal_topic(topic: str) -> bool:
    """validate_topic's verdict, remembered: a put checks the same few topics again and again.
    The broker's own POP retry topic V2 (KeyBuilder: ``%RETRY%<group>+<topic>``) is legal too."""
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        topic = topic.replace("+", "_", 1)
    return validate_topic(topic, topic_max_length(topic)) is None


def _future(
    status: PutMessageStatus, append: AppendMessageResult | None = None
) -> Future[PutMessageResult]:
    return CompletedFuture(PutMessageResult(status, append))


_UNKNOWN = PutMessageResult(PutMessageStatus.UNKNOWN_ERROR)
_TOPIC, _QUEUE_ID, _BODY = attrgetter("topic"), attrgetter("queue_id"), attrgetter("body")
_WAIT = attrgetter("wait_store_msg_ok")
_SHORT_RUN = 8  # SendPuts checked one by one (the checks of a whole run cost more below)


class PutRequest(NamedTuple):
    """One put of :meth:`MessageStore.async_put_each`; ``properties`` is the record's
    properties string when the broker passes the producer's bytes through (else None:
    ``msg.properties`` is encoded)."""

    msg: MessageExt
    wait_store_msg_ok: bool = True
    properties: bytes | None = None


class EachPutResult(NamedTuple):
    """The results of :meth:`MessageStore.async_put_each`, one a put. The puts at the
    indexes ``waiting`` asked to wait for the store and were appended: their final status
    is ``durable``'s (the group commit's, then the replication's) once it completes."""

    results: list[PutMessageResult]
    waiting: list[int]
    durable: Future[PutMessageStatus] | None


def message_of(put: SendPut) -> MessageExt:
    """The message a SendPut stands for (the reference encode, with C off)."""
    return MessageExt(
        topic=put.topic,
        queue_id=put.queue_id,
        body=put.body,
        flag=put.flag,
        properties={},
        sys_flag=put.sys_flag,
        born_timestamp=put.born_timestamp,
        born_host=bytes_to_host(put.born_host),
        store_host=bytes_to_host(put.store_host),
        reconsume_times=put.reconsume_times,
    )


class MessageWriter:
    config: StoreConfig
    commit_log: CommitLog
    flush_service: FlushRealTimeService | GroupCommitService
    reput_service: ReputMessageService
    ha_service: HAService
    disk_full: bool
    _running: bool

    def _check(self, msg: MessageExt) -> PutMessageStatus | None:
        return self._check_put(msg.topic, msg.queue_id, msg.body)

    def _check_put(self, topic: str, queue_id: int, body: bytes | None) -> PutMessageStatus | None:
        status = self._check_state()
        if status is not None:
            return status
        if not legal_topic(topic) or queue_id < 0:
            return PutMessageStatus.MESSAGE_ILLEGAL
        if body is not None and len(body) > self.config.max_message_size:
            return PutMessageStatus.MESSAGE_ILLEGAL
        return None

    def _check_state(self) -> PutMessageStatus | None:
        """The checks of a put that are the store's, not the message's."""
        if not self._running:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if self.disk_full or self.config.broker_role is BrokerRole.SLAVE:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if (
            self.config.enable_controller_mode
            and self.config.broker_role is BrokerRole.SYNC_MASTER
            and not self.ha_service.in_sync_replicas_enough()
        ):
            return PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH
        return None

    def _encode(
        self, msg: MessageExt, properties: bytes | None = None
    ) -> EncodedMessage | PutMessageStatus:
        try:
            record = encode_message(msg, properties)
        except (ValueError, OverflowError, struct.error) as exc:
            log.debug("cannot encode message for %s: %s", msg.topic, exc)
            if properties is not None:
                if len(properties) > MAX_PROPERTIES_SIZE:
                    return PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
                return PutMessageStatus.MESSAGE_ILLEGAL
            return self._properties_or_illegal(msg) or PutMessageStatus.MESSAGE_ILLEGAL
        if len(record) > self.config.max_message_size + 65536:
            return PutMessageStatus.MESSAGE_ILLEGAL
        return EncodedMessage(record, msg.topic, msg.queue_id)

    def _properties_or_illegal(
        self, msg: MessageExt, default: PutMessageStatus | None = PutMessageStatus.MESSAGE_ILLEGAL
    ) -> PutMessageStatus | None:
        """PROPERTIES_SIZE_EXCEEDED when the encoded properties pass 32,767 bytes."""
        if len(encode_properties(msg.properties)) > MAX_PROPERTIES_SIZE:
            return PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
        return default

    def _append_one(self, msg: MessageExt) -> AppendMessageResult | PutMessageStatus:
        status = self._check(msg)
        if status is not None:
            return status
        encoded = self._encode(msg)
        if isinstance(encoded, PutMessageStatus):
            return encoded
        try:
            return self.commit_log.append(encoded)
        except MappedFileCreateError:
            log.exception("create mapped file failed")
            return PutMessageStatus.CREATE_MAPPED_FILE_FAILED

    def _append_batch(self, msgs: Sequence[MessageExt]) -> AppendMessageResult | PutMessageStatus:
        if not msgs:
            return PutMessageStatus.MESSAGE_ILLEGAL
        batch: list[EncodedMessage] = []
        for msg in msgs:
            status = self._check(msg)
            encoded = self._encode(msg) if status is None else status
            if isinstance(encoded, PutMessageStatus):
                return encoded
            batch.append(encoded)
        try:
            return self.commit_log.append_batch(batch)
        except MappedFileCreateError:
            log.exception("create mapped file failed")
            return PutMessageStatus.CREATE_MAPPED_FILE_FAILED

    def async_put_message(
        self, msg: MessageExt, *, wait_store_msg_ok: bool = True
    ) -> Future[PutMessageResult]:
        """Non-blocking put. In SYNC_FLUSH mode the future completes after the group commit
        msynced the record, unless ``wait_store_msg_ok`` is False (the message's WAIT=false):
        then it completes once the record is appended and the flush is only woken up."""
        result = self._append_one(msg)
        if isinstance(result, PutMessageStatus):
            return _future(result)
        return self._handle_disk_flush(result, wait_store_msg_ok)

    def async_put_messages(
        self, msgs: Sequence[MessageExt], *, wait_store_msg_ok: bool = True
    ) -> Future[PutMessageResult]:
        result = self._append_batch(msgs)
        if isinstance(result, PutMessageStatus):
            return _future(result)
        return self._handle_disk_flush(result, wait_store_msg_ok)

    def async_put_batch_sends(
        self, puts: list[SendPut], *, wait_store_msg_ok: bool = True
    ) -> Future[PutMessageResult]:
        """``async_put_messages`` for a batch C read into SendPuts (``batch_puts``, the C
        record module on): the same checks, then C encodes and appends them in one call. The
        messages share their topic and queue; ``batch_puts`` took none over the body limit."""
        if not puts:
            return _future(PutMessageStatus.MESSAGE_ILLEGAL)
        status = self._check_put(puts[0].topic, puts[0].queue_id, None)
        if status is not None:
            return _future(status)
        try:
            result = self.commit_log.append_batch_sends(puts)
        except MappedFileCreateError:
            log.exception("create mapped file failed")
            result = PutMessageStatus.CREATE_MAPPED_FILE_FAILED
        if isinstance(result, PutMessageStatus):
            return _future(result)
        return self._handle_disk_flush(result, wait_store_msg_ok)

    def async_put_each(self, puts: Sequence[PutRequest | SendPut]) -> EachPutResult:
        """Separate puts in one call (the broker's puts of one loop iteration): each is
        checked and encoded on its own, all are appended in one lock hold, then one reput
        wake-up and, for those that wait for the store, one group-commit (and SYNC_MASTER
        replication) request up to the last byte. A put that fails (illegal, no mapped file)
        has its own status; the others are unaffected."""
        results = [_UNKNOWN] * len(puts)  # every slot is set below
        encoded: list[EncodedMessage | SendPut] = []
        slots: list[int] = []
        native = native_record.RECORD is not None
        for i, put in enumerate(puts):
            enc: EncodedMessage | SendPut | PutMessageStatus | None
            if isinstance(put, SendPut):
                enc = self._check_put(put.topic, put.queue_id, put.body)
                if enc is None:  # C encodes it in the append; else encoded here
                    enc = put if native else self._encode(message_of(put), put.properties)
            else:
                status = self._check(put.msg)
                enc = self._encode(put.msg, put.properties) if status is None else status
            if isinstance(enc, PutMessageStatus):
                results[i] = PutMessageResult(enc)
            else:
                encoded.append(enc)
                slots.append(i)
        waiting: list[int] = []
        durable: Future[PutMessageStatus] | None = None
        if encoded:
            appended = self.commit_log.append_each(encoded)
            # after the append: the dispatch run must find the records
            self.reput_service.request_dispatch()
            end = -1
            woken = False
            for i, append in zip(slots, appended, strict=True):
                if append is None:
                    results[i] = PutMessageResult(PutMessageStatus.CREATE_MAPPED_FILE_FAILED)
                    continue
                if isinstance(append, PutMessageStatus):  # refused by C's encode
                    results[i] = PutMessageResult(append)
                    continue
                results[i] = PutMessageResult(PutMessageStatus.PUT_OK, append)
                if puts[i].wait_store_msg_ok:
                    waiting.append(i)
                    end = max(end, append.wrote_offset + append.wrote_bytes)
                elif not woken:
                    woken = True
                    self.flush_service.wakeup()
                    self.ha_service.wakeup_all()
            if waiting:
                durable = self._durable(end)
        return EachPutResult(results, waiting if durable is not None else [], durable)

    def async_put_sends(self, puts: list[SendPut]) -> SendsPutResult:
        """``async_put_each`` of SendPuts alone (the C record module on): the same checks, one
        append in one lock hold, one reput wake-up, one group-commit request for those that
        wait, and the same statuses; the results are C's figures, no object a put."""
        n = len(puts)
        prefix = self.commit_log.msg_id_prefix
        state = self._check_state()
        if not n:
            return SendsPutResult([], 0, prefix, [], None)
        if state is not None:
            return SendsPutResult([SEND_STATUSES.index(state), 0, 0, 0] * n, 0, prefix, [], None)
        limit = self.config.max_message_size
        refused: list[int] = []
        # _check_put's message checks: over a long run first (C-level loops), one by one
        # when it is short or one fails
        if (
            n < _SHORT_RUN
            or not all(map(legal_topic, set(map(_TOPIC, puts))))
            or min(map(_QUEUE_ID, puts)) < 0
            or max(map(len, map(_BODY, puts))) > limit
        ):
            for i, put in enumerate(puts):
                if not legal_topic(put.topic) or put.queue_id < 0 or len(put.body) > limit:
                    refused.append(i)
        appending = puts
        if refused:
            skip = set(refused)
            appending = [put for i, put in enumerate(puts) if i not in skip]
        values, now = self.commit_log.append_send_values(appending) if appending else ([], 0)
        if appending:  # after the append: the dispatch run must find the records
            self.reput_service.request_dispatch()
        if refused:  # the refused puts' figures in their places
            values = with_refused(values, n, skip)
        waiting: list[int] = []
        end = -1  # appended in order: the last appended ends last
        if not any(values[0::4]) and all(map(_WAIT, puts)):  # all appended, all wait
            waiting = list(range(n))
            end = values[-3] + values[-2]
        else:
            woken = False
            for i in range(n):
                k = 4 * i
                if values[k]:
                    continue
                if puts[i].wait_store_msg_ok:
                    waiting.append(i)
                    end = values[k + 1] + values[k + 2]
                elif not woken:
                    woken = True
                    self.flush_service.wakeup()
                    self.ha_service.wakeup_all()
        durable = self._durable(end) if waiting else None
        return SendsPutResult(values, now, prefix, waiting if durable is not None else [], durable)

    def _handle_disk_flush(
        self, result: AppendMessageResult, wait_store_msg_ok: bool
    ) -> Future[PutMessageResult]:
        """handleDiskFlushAndHA: the flush status, then the replication status (neither
        waited for when the message does not ask for it: WAIT=false)."""
        self.reput_service.request_dispatch()
        if not wait_store_msg_ok:
            self.flush_service.wakeup()
            self.ha_service.wakeup_all()
            return _future(PutMessageStatus.PUT_OK, result)
        durable = self._durable(result.wrote_offset + result.wrote_bytes)
        if durable is None:
            return _future(PutMessageStatus.PUT_OK, result)
        out: Future[PutMessageResult] = Future()

        def complete(f: Future[PutMessageStatus]) -> None:
            if not out.done():
                out.set_result(PutMessageResult(f.result(), result))

        durable.add_done_callback(complete)
        return out

    def _durable(self, end: int) -> Future[PutMessageStatus] | None:
        """The flush status, then the replication status, of the bytes up to ``end``: None
        when neither is waited for (ASYNC_FLUSH, not a SYNC_MASTER)."""
        service = self.flush_service
        replicated = self._handle_ha(end)
        if not isinstance(service, GroupCommitService):
            if replicated is None:
                return None
            flushed: Future[PutMessageStatus] = CompletedFuture(PutMessageStatus.PUT_OK)
        else:
            flushed = service.put_request(end)
        if replicated is None:
            return flushed
        out: Future[PutMessageStatus] = Future()

        def combine(_: object) -> None:
            if not flushed.done() or (replicated is not None and not replicated.done()):
                return
            status = flushed.result()
            if status is PutMessageStatus.PUT_OK and replicated is not None:
                status = replicated.result()
            if not out.done():
                out.set_result(status)

        flushed.add_done_callback(combine)
        replicated.add_done_callback(combine)
        return out

    def _handle_ha(self, end: int) -> Future[PutMessageStatus] | None:
        """SYNC_MASTER: a future completed once a slave holds ``end`` (CommitLog.handleHA)."""
        ha = self.ha_service
        if self.config.broker_role is not BrokerRole.SYNC_MASTER:
            if ha.connections:
                ha.wakeup_all()
            return None
        if not ha.is_slave_ok(end):
            f: Future[PutMessageStatus] = Future()
            f.set_result(PutMessageStatus.SLAVE_NOT_AVAILABLE)
            return f
        return ha.put_request(end)

    def append_to_commit_log(self, start_offset: int, data: bytes) -> bool:
        """A slave appends replicated bytes (DefaultMessageStore.appendToCommitLog)."""
        if not self._running:
            return False
        if not self.commit_log.append_data(start_offset, data):
            return False
        self.reput_service.wakeup()
        service = self.flush_service
        if isinstance(service, GroupCommitService):
            service.put_request(start_offset + len(data))
        return True

    def put_message(self, msg: MessageExt) -> PutMessageResult:
        """Blocking put: in SYNC_FLUSH mode returns once the record is msynced."""
        return self._put_blocking(lambda: self._append_one(msg))

    def put_messages(self, msgs: Sequence[MessageExt]) -> PutMessageResult:
        return self._put_blocking(lambda: self._append_batch(msgs))

    def _put_blocking(
        self, append: Callable[[], AppendMessageResult | PutMessageStatus]
    ) -> PutMessageResult:
        result = append()
        if isinstance(result, PutMessageStatus):
            return PutMessageResult(result)
        self.reput_service.wakeup()
        end = result.wrote_offset + result.wrote_bytes
        service = self.flush_service
        replicated = self._handle_ha(end)
        status = PutMessageStatus.PUT_OK
        if isinstance(service, GroupCommitService):
            status = service.flush_and_wait(end)
        if status is PutMessageStatus.PUT_OK and replicated is not None:
            status = replicated.result()
        return PutMessageResult(status, result)
