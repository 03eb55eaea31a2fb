"""CommitLog flush services: FlushRealTimeService (ASYNC_FLUSH) and GroupCommitService (SYNC_FLUSH).

Theory of operation
-------------------
ASYNC_FLUSH: every ``flush_interval_commit_log_ms`` the flusher msyncs the commitlog when at
least ``flush_commit_log_least_pages`` pages are dirty, and everything every
``flush_commit_log_thorough_interval_ms``; after a flush it reports the store timestamp read
*before* the flush (that record is certainly on disk) to ``on_flushed`` (the checkpoint's
physicMsgTimestamp).

SYNC_FLUSH (group commit): a writer appends under the put lock, then submits a
:class:`GroupCommitRequest` (the offset its record ends at) and waits on the request's
``concurrent.futures.Future``. The service thread takes every pending request at once, does
one flush that covers all bytes written so far, and completes each request whose offset is
now flushed with PUT_OK. Concurrent writers therefore share one msync. A request not
flushed by its deadline completes with FLUSH_DISK_TIMEOUT. Futures are plain
``concurrent.futures.Future`` so the asyncio side can ``asyncio.wrap_future`` them; the
store never touches an event loop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from rocketq.store.config import StoreConfig
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.results import PutMessageStatus
from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)

RETRY_TIMES_OVER = 10


class FlushRealTimeService(ServiceThread):
    def __init__(
        self,
        config: StoreConfig,
        queue: MappedFileQueue,
        store_timestamp: Callable[[], int],
        on_flushed: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__("FlushRealTimeService")
        self.config = config
        self.queue = queue
        self._store_timestamp = store_timestamp
        self._on_flushed = on_flushed
        self._last_thorough_s = time.monotonic()

    def flush_once(self, least_pages: int) -> bool:
        ts = self._store_timestamp()
        moved = self.queue.flush(least_pages)
        if ts > 0 and self._on_flushed is not None:
            self._on_flushed(ts)
        return moved

    def run(self) -> None:
        cfg = self.config
        while not self.is_stopped():
            now = time.monotonic()
            least = cfg.flush_commit_log_least_pages
            if (now - self._last_thorough_s) * 1000 >= cfg.flush_commit_log_thorough_interval_ms:
                self._last_thorough_s = now
                least = 0
            try:
                self.flush_once(least)
            except OSError:
                log.exception("commitlog flush failed")
            self.wait_for_running(cfg.flush_interval_commit_log_ms)
        for _ in range(RETRY_TIMES_OVER):  # flush everything on shutdown
            if not self.queue.flush(0):
                break
        self.flush_once(0)


class GroupCommitRequest:
    __slots__ = ("deadline_s", "future", "next_offset")

    def __init__(self, next_offset: int, timeout_ms: int) -> None:
        self.next_offset = next_offset
        self.deadline_s = time.monotonic() + timeout_ms / 1000.0
        self.future: Future[PutMessageStatus] = Future()


class GroupCommitService(ServiceThread):
    idle_wait_ms = 10

    def __init__(
        self,
        config: StoreConfig,
        queue: MappedFileQueue,
        store_timestamp: Callable[[], int],
        on_flushed: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__("GroupCommitService")
        self.config = config
        self.queue = queue
        self._store_timestamp = store_timestamp
        self._on_flushed = on_flushed
        self._lock = threading.Lock()
        self._requests_write: list[GroupCommitRequest] = []
        self._requests_read: list[GroupCommitRequest] = []
        self.flush_count = 0
        self._flush_lock = threading.Lock()  # one msync at a time, thread or leader
        self._cond = threading.Condition()
        self._leader_active = False

    def _flush(self) -> None:
        with self._flush_lock:
            self.queue.flush(0)
            self.flush_count += 1
            if self.queue.flushed_where < self.queue.get_max_offset():
                self.queue.flush(0)  # the data may have rolled into a new file

    def flush_and_wait(self, next_offset: int) -> PutMessageStatus:
        """Blocking group commit for writer threads (leader/follower, no thread hand-off).

        The first waiter whose bytes are not yet flushed becomes the leader and msyncs
        everything written so far; the others wait for it. One msync serves every writer
        whose record ended before the leader read the write position.
        """
        deadline = time.monotonic() + self.config.sync_flush_timeout_ms / 1000.0
        with self._cond:
            while self.queue.flushed_where < next_offset:
                if not self._leader_active:
                    self._leader_active = True
                    break
                left = deadline - time.monotonic()
                if left <= 0 or not self._cond.wait(left):
                    if self.queue.flushed_where >= next_offset:
                        break
                    return PutMessageStatus.FLUSH_DISK_TIMEOUT
            else:
                return PutMessageStatus.PUT_OK
        try:
            ts = self._store_timestamp()
            self._flush()
            if ts > 0 and self._on_flushed is not None:
                self._on_flushed(ts)
        finally:
            with self._cond:
                self._leader_active = False
                self._cond.notify_all()
        if self.queue.flushed_where >= next_offset:
            return PutMessageStatus.PUT_OK
        return self.flush_and_wait(next_offset)

    def put_request(self, next_offset: int) -> Future[PutMessageStatus]:
        request = GroupCommitRequest(next_offset, self.config.sync_flush_timeout_ms)
        with self._lock:
            self._requests_write.append(request)
        self.wakeup()
        return request.future

    def _swap(self) -> None:
        with self._lock:
            self._requests_read.extend(self._requests_write)
            self._requests_write = []

    def do_commit(self) -> None:
        """Flush for the waiting requests; with none, flush what puts that did not wait
        (WAIT=false) appended, as RocketMQ's GroupCommitService does."""
        self._swap()
        pending = self._requests_read
        ts = self._store_timestamp()
        if not pending:
            if self.queue.flushed_where < self.queue.get_max_offset():
                self._flush()
                if ts > 0 and self._on_flushed is not None:
                    self._on_flushed(ts)
            return
        if self.queue.flushed_where < max(r.next_offset for r in pending):
            self._flush()
            with self._cond:
                self._cond.notify_all()
        flushed = self.queue.flushed_where
        if ts > 0 and self._on_flushed is not None:
            self._on_flushed(ts)
        now = time.monotonic()
        keep: list[GroupCommitRequest] = []
        for r in pending:
            if r.next_offset <= flushed:
                r.future.set_result(PutMessageStatus.PUT_OK)
            elif now >= r.deadline_s:
                r.future.set_result(PutMessageStatus.FLUSH_DISK_TIMEOUT)
            else:
                keep.append(r)
        self._requests_read = keep

    def run(self) -> None:
        while not self.is_stopped():
            self.wait_for_running(self.idle_wait_ms)
            try:
                self.do_commit()
            except OSError:
                log.exception("group commit flush failed")
        self.do_commit()
        for r in self._requests_read + self._requests_write:
            if not r.future.done():
                r.future.set_result(PutMessageStatus.FLUSH_DISK_TIMEOUT)

    def wait_for_running(self, interval_ms: float) -> None:
        with self._lock:
            has_work = bool(self._requests_write)
        if not has_work:
            super().wait_for_running(interval_ms)
        else:
            self._wakeup.clear()


class FlushConsumeQueueService(ServiceThread):
    """Flush consume queues every ``flush_interval_consume_queue_ms`` (at least N pages), all
    of them plus the checkpoint every ``flush_consume_queue_thorough_interval_ms``; the
    dispatch checkpoint (``dispatch_checkpoint.py``) every ``dispatch_checkpoint_interval_ms``.
    A round that writes the dispatch checkpoint flushes every queue in it (its syncs in one
    call, ``sync_batch.py``), so that round's own flush is skipped."""

    def __init__(
        self,
        config: StoreConfig,
        flush: Callable[[int], None],
        checkpoint_dispatch: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__("FlushConsumeQueueService")
        self.config = config
        self._flush = flush
        self._checkpoint_dispatch = checkpoint_dispatch
        self._last_thorough_s = time.monotonic()
        self._last_dispatch_checkpoint_s = time.monotonic()

    def run(self) -> None:
        cfg = self.config
        while not self.is_stopped():
            self.wait_for_running(cfg.flush_interval_consume_queue_ms)
            least = cfg.flush_consume_queue_least_pages
            now = time.monotonic()
            if (now - self._last_thorough_s) * 1000 >= cfg.flush_consume_queue_thorough_interval_ms:
                self._last_thorough_s = now
                least = 0
            checkpointed = False
            if self._checkpoint_dispatch is not None and (
                (now - self._last_dispatch_checkpoint_s) * 1000
                >= cfg.dispatch_checkpoint_interval_ms
            ):
                self._last_dispatch_checkpoint_s = now
                try:
                    checkpointed = self._checkpoint_dispatch()
                except OSError:
                    log.exception("dispatch checkpoint failed")
            if checkpointed and least > 0:
                continue  # every queue was flushed in the checkpoint's one call
            try:
                self._flush(least)  # a thorough one also writes the store checkpoint
            except OSError:
                log.exception("consume queue flush failed")
