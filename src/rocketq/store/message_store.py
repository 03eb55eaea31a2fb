"""MessageStore: RocketMQ's DefaultMessageStore, the store's public face.

``load`` takes the process lock (store.md §7.1), maps the files and recovers
(``recovery.py``); ``start`` starts the flush, reput and clean services and creates ``abort``;
``shutdown`` stops them, waits for dispatch to catch up and removes ``abort`` only then (§7.2).
Puts encode outside the CommitLog lock; in SYNC_FLUSH mode a put's future completes only
after its bytes are msynced (``flush.py``), unless the put does not wait for the store
(WAIT=false): then it completes once appended. Reads go through the consume queues, so a
message is served only once dispatched. The queues live in ``consume_queue_table``, the index
in ``index_service``; the read side (``get_message`` and lookups) is ``message_reader``.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import struct
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import lru_cache
from typing import NamedTuple

from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import encode_message
from rocketq.common.properties import encode_properties
from rocketq.common.topic import topic_max_length, validate_topic
from rocketq.errors import IllegalStateError, StoreLockedError
from rocketq.store import paths
from rocketq.store.checkpoint import StoreCheckpoint
from rocketq.store.clean import CleanCommitLogService, CleanConsumeQueueService
from rocketq.store.commitlog import CommitLog, DispatchRequest, EncodedMessage
from rocketq.store.completed_future import CompletedFuture
from rocketq.store.config import BrokerRole, FlushDiskType, StoreConfig
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.consume_queue_table import ConsumeQueueTable
from rocketq.store.flush import (
    FlushConsumeQueueService,
    FlushRealTimeService,
    GroupCommitService,
)
from rocketq.store.ha.ha_service import HAService
from rocketq.store.index_service import IndexService
from rocketq.store.mapped_file import MappedFileCreateError
from rocketq.store.message_reader import MessageReader
from rocketq.store.recovery import load_and_recover
from rocketq.store.reput import MessageArrivingListener, ReputMessageService
from rocketq.store.results import (
    AppendMessageResult,
    PutMessageResult,
    PutMessageStatus,
)

log = logging.getLogger(__name__)

MAX_PROPERTIES_SIZE = 32_767
CQ_UNIT_SIZE = 20
LOCK_WAIT_S = 60.0


@lru_cache(maxsize=4096)
def _legal_topic(topic: str) -> bool:
    """validate_topic's verdict, remembered: a put checks the same few topics again and again."""
    return validate_topic(topic, topic_max_length(topic)) is None


def _future(
    status: PutMessageStatus, append: AppendMessageResult | None = None
) -> Future[PutMessageResult]:
    return CompletedFuture(PutMessageResult(status, append))


_UNKNOWN = PutMessageResult(PutMessageStatus.UNKNOWN_ERROR)


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


class MessageStore(MessageReader):
    def __init__(
        self,
        config: StoreConfig,
        *,
        message_arriving_listener: MessageArrivingListener | None = None,
    ) -> None:
        self.config = config
        self.root = config.store_path_root_dir
        self.commit_log = CommitLog(config, free_space_check=self._check_free_space)
        self.consume_queues = ConsumeQueueTable(
            paths.consume_queue_dir(self.root), config.mapped_file_size_consume_queue
        )
        self.index_service: IndexService | None = None
        self.checkpoint: StoreCheckpoint | None = None
        mfq = self.commit_log.mapped_file_queue
        ts = self._flushed_store_timestamp
        self.flush_service: FlushRealTimeService | GroupCommitService
        if config.flush_disk_type is FlushDiskType.SYNC_FLUSH:
            self.flush_service = GroupCommitService(config, mfq, ts, self._on_commit_log_flushed)
        else:
            self.flush_service = FlushRealTimeService(config, mfq, ts, self._on_commit_log_flushed)
        self.flush_consume_queue_service = FlushConsumeQueueService(
            config, self.flush_consume_queues
        )
        self.reput_service = ReputMessageService(
            self.commit_log, self, config.reput_fallback_wait_ms
        )
        self.reput_service.message_arriving_listener = message_arriving_listener
        self.clean_commit_log_service = CleanCommitLogService(self)
        self.clean_consume_queue_service = CleanConsumeQueueService(self)
        self.ha_service = HAService(self)
        self.disk_full = False
        self.recovered_abnormally = False
        self.recovery_cut_reason = ""
        self._lock_fd: int | None = None
        self._loaded = False
        self._running = False

    @property
    def message_arriving_listener(self) -> MessageArrivingListener | None:
        return self.reput_service.message_arriving_listener

    @message_arriving_listener.setter
    def message_arriving_listener(self, listener: MessageArrivingListener | None) -> None:
        self.reput_service.message_arriving_listener = listener

    def _flushed_store_timestamp(self) -> int:
        return self.commit_log.store_timestamp

    def _on_commit_log_flushed(self, store_timestamp: int) -> None:
        cp = self.checkpoint
        if cp is not None:
            cp.physic_msg_timestamp = store_timestamp

    # ------------------------------------------------------------------ lifecycle

    def load(self) -> bool:
        os.makedirs(self.root, exist_ok=True)
        self._lock()
        try:
            load_and_recover(self)
        except BaseException:
            self._unlock()
            raise
        self._loaded = True
        return True

    def start(self) -> None:
        if not self._loaded:
            raise IllegalStateError("MessageStore.start() before load()")
        self.reput_service.start()  # from where recovery's dispatch stopped
        self.flush_service.start()
        self.flush_consume_queue_service.start()
        self.clean_commit_log_service.start()
        self.clean_consume_queue_service.start()
        with open(paths.abort_path(self.root), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
            f.flush()
            os.fsync(f.fileno())
        paths.fsync_dir(self.root)
        self._running = True

    def start_ha(self) -> int:
        """Start replication (listen on ha_listen_port; a slave connects to its master).

        The broker calls this after ``start``; a bare store (tools, tests) does not listen.
        Returns the bound HA port.
        """
        if not self._running:
            raise IllegalStateError("MessageStore.start_ha() before start()")
        self.ha_service.start()
        return self.ha_service.listen_port

    def reput_start_offset(self) -> int:
        """4.x rule (store.md §7.6): the max physical end over all consume queues."""
        return max(self.consume_queues.max_physic_end(), max(0, self.commit_log.get_min_offset()))

    def shutdown(self) -> None:
        if not self._loaded:
            return
        was_running = self._running
        self._running = False
        if was_running:
            self.ha_service.shutdown()
            self.clean_commit_log_service.shutdown()
            self.clean_consume_queue_service.shutdown()
            self.reput_service.shutdown()  # runs a final do_reput
            self.flush_service.shutdown()
            self.flush_consume_queue_service.shutdown()
        self.flush_consume_queues(0)
        caught_up = self.reput_service.dispatch_behind_bytes() == 0
        if self.checkpoint is not None:
            self.checkpoint.shutdown()
        if self.index_service is not None:
            self.index_service.shutdown()
        self.consume_queues.shutdown()
        self.commit_log.shutdown()
        abort = paths.abort_path(self.root)
        if was_running and caught_up and os.path.exists(abort):
            os.unlink(abort)
            paths.fsync_dir(self.root)
        self._loaded = False
        self._unlock()

    def destroy(self) -> None:
        self.shutdown()
        shutil.rmtree(self.root, ignore_errors=True)

    def _lock(self) -> None:
        fd = os.open(paths.lock_path(self.root), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError as exc:
            os.close(fd)
            raise StoreLockedError(
                exc.errno, f"Lock failed, MQ already started: {paths.lock_path(self.root)}"
            ) from exc
        os.pwrite(fd, b"lock", 0)
        os.fsync(fd)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.lockf(self._lock_fd, fcntl.LOCK_UN, 1, 0)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _check_free_space(self, directory: str, size: int) -> None:
        st = os.statvfs(directory)
        if st.f_bavail * st.f_frsize < size:
            raise MappedFileCreateError(
                errno.ENOSPC, f"no space for a {size}-byte file in {directory}"
            )

    # ------------------------------------------------------------------ put

    def _check(self, msg: MessageExt) -> PutMessageStatus | None:
        if not self._running:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if self.disk_full or self.config.broker_role is BrokerRole.SLAVE:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if not _legal_topic(msg.topic) or msg.queue_id < 0:
            return PutMessageStatus.MESSAGE_ILLEGAL
        if msg.body is not None and len(msg.body) > self.config.max_message_size:
            return PutMessageStatus.MESSAGE_ILLEGAL
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
        except MappedFileCreateError as exc:
            log.error("create mapped file failed: %s", exc)
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
        except MappedFileCreateError as exc:
            log.error("create mapped file failed: %s", exc)
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

    def async_put_each(self, puts: Sequence[PutRequest]) -> EachPutResult:
        """Separate puts in one call (the broker's puts of one loop iteration): each is
        checked and encoded on its own, all are appended in one lock hold, then one reput
        wake-up and, for those that wait for the store, one group-commit (and SYNC_MASTER
        replication) request up to the last byte. A put that fails (illegal, no mapped file)
        has its own status; the others are unaffected."""
        results = [_UNKNOWN] * len(puts)  # every slot is set below
        encoded: list[EncodedMessage] = []
        slots: list[int] = []
        for i, put in enumerate(puts):
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

    # ------------------------------------------------------------------ consume queues

    def find_consume_queue(
        self, topic: str, queue_id: int, create: bool = True
    ) -> ConsumeQueue | None:
        if create:
            return self.consume_queues.find_or_create(topic, queue_id)
        return self.consume_queues.find(topic, queue_id)

    def flush_consume_queues(self, least_pages: int = 0) -> None:
        """Flush CQs (and on a full flush the index and the checkpoint, store.md §6)."""
        logics_ts = self._last_dispatched_ts
        self.consume_queues.flush(least_pages)
        if least_pages == 0 and self.checkpoint is not None:
            if logics_ts > 0:
                self.checkpoint.logics_msg_timestamp = logics_ts
            self.checkpoint.flush()

    _last_dispatched_ts = 0

    def dispatch_batch(self, requests: list[DispatchRequest]) -> None:
        """CommitLogDispatcherBuildConsumeQueue + BuildIndex for a run of records."""
        index = self.index_service if self.config.message_index_enable else None
        runs: dict[tuple[str, int], list[DispatchRequest]] = {}  # a queue's units in one copy
        for req in requests:
            if MessageSysFlag.has_consume_queue_unit(req.sys_flag):
                run = runs.get((req.topic, req.queue_id))
                if run is None:
                    runs[(req.topic, req.queue_id)] = [req]
                else:
                    run.append(req)
            if index is not None:
                index.build_index(req)
        for (topic, queue_id), run in runs.items():
            self.consume_queues.find_or_create(topic, queue_id).put_message_position_infos(run)
        if requests:
            self._last_dispatched_ts = requests[-1].store_timestamp
            if self.config.broker_role is BrokerRole.SLAVE and self.checkpoint is not None:
                # a slave's appends carry no local store time: take it at dispatch (4.x)
                self.checkpoint.physic_msg_timestamp = requests[-1].store_timestamp

    def dispatch_behind_bytes(self) -> int:
        return self.reput_service.dispatch_behind_bytes()

    def get_max_phy_offset(self) -> int:
        return self.commit_log.get_max_offset()

    def get_min_phy_offset(self) -> int:
        return self.commit_log.get_min_offset()

    def now_ms(self) -> int:
        return self.config.clock_ms()

    def get_runtime_info(self) -> dict[str, str]:
        return {
            "commitLogMaxOffset": str(self.get_max_phy_offset()),
            "commitLogMinOffset": str(self.get_min_phy_offset()),
            "dispatchBehindBytes": str(self.dispatch_behind_bytes()),
            "putMessageDistributeTime": "",
        }

    def wait_for_dispatch(self, timeout_s: float = 10.0) -> bool:
        """Test and shutdown helper: wait until every committed byte is dispatched."""
        deadline = time.monotonic() + timeout_s
        while self.dispatch_behind_bytes() > 0:
            if time.monotonic() > deadline:
                return False
            self.reput_service.wakeup()
            time.sleep(0.001)
        return True
