"""ReputMessageService: turns committed commitlog records into consume-queue and index entries.

Theory of operation: the service keeps ``reput_from_offset``; each round it decodes the
records between it and the commitlog's write position (in chunks, without CRC checks, as
RocketMQ does at runtime) and hands each :class:`DispatchRequest` to the store's consume-queue
dispatcher, then to the optional arrival listener (the broker's long polling), then to the
index: a held pull's answer does not wait for the index. A put wakes it through
:meth:`wakeup`; with nothing to do it waits at most ``reput_fallback_wait_ms``, so it never
spins. A message is served by ``get_message`` only once dispatched, because reads go through
the consume queue.

With a dispatch scheduler attached (a broker: its loop dispatches every put) the thread is a
safety net and waits up to ``scheduled_wait_ms`` instead (an idle broker's 71 wake-ups a
second of the 10 ms poll, each a GIL acquisition that can land inside a request, were most of
its idle CPU). Every path that leaves records to it wakes it: a put whose run the scheduler
refuses or that finds the dispatch lock taken (:meth:`request_dispatch`,
:meth:`_run_scheduled`), a failed scheduled run, a slave's appends
(``MessageStore.append_to_commit_log``), a moved confirm offset (``AutoSwitchHAService``:
``set_confirm_offset``, a slave's ack, a committed SyncStateSet), a log truncation and a
detached scheduler.

With the C record module a round first takes the direct dispatch
(``MessageStore.dispatch_direct``: reput_run.c): one call writes the units and index keys
straight from the commitlog's bytes, without a DispatchRequest, and stops at the first record
it leaves to this Python round (a new queue or file, a skip or gap, a transaction record, the
schedule and timer topics, a new index file, a bad record), which then takes up to
``SLOW_STEP_BYTES`` before C goes on. While someone waits for an arrival (a held pull, a parked
POP) the call also returns each record's arrival (``dispatch_arrivals``), told to the listener
after the run's writes as the Python round tells its records' (the properties decoded only if
a waiter's filter reads them). When nobody waited before the run the arrival check still
follows its writes: a pull held meanwhile is notified of the run's records (read again for
it). Controller mode keeps this round.

In controller mode ``dispatch_bound`` returns the confirm offset: a record is dispatched only
once it ends at or below it (``getReputEndOffset`` and the confirm-offset check of RocketMQ 5's
``DefaultMessageStore.ReputMessageService``), so consumers never see bytes that a failover
could truncate. Without a bound (classic mode) everything committed is dispatched.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.store.commitlog import CommitLog, DispatchRequest
from rocketq.store.dispatch_arrivals import DirectArrival, notify_arrivals
from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)

CHUNK_BYTES = 4 * 1024 * 1024
#: the Python round's chunk after the direct dispatch stopped at a record it does not take
SLOW_STEP_BYTES = 64 * 1024
#: the longest idle wait while a dispatch scheduler is attached (every put is dispatched by
#: the scheduler; whatever is left to this thread wakes it)
SCHEDULED_WAIT_MS = 1000

MessageArrivingListener = Callable[[str, int, int, int, int, Mapping[str, str]], None]
DirectDispatch = Callable[[int, int, "list[DirectArrival] | None"], tuple[int, int]]
# Runs the given callable soon (or at once, inside the put) on the thread that owns the puts
# and returns True, or returns False when it cannot (its loop is closed): the put then wakes
# the reput thread.
DispatchScheduler = Callable[[Callable[[], None]], bool]


class Dispatcher(Protocol):
    def dispatch_batch(self, requests: list[DispatchRequest]) -> None:
        """The consume queues' units: what a pull reads."""

    def dispatch_index(self, requests: list[DispatchRequest]) -> None:
        """The index (queries by key): built after the arrivals are notified."""


class ReputMessageService(ServiceThread):
    def __init__(
        self,
        commit_log: CommitLog,
        dispatcher: Dispatcher,
        fallback_wait_ms: int = 10,
    ) -> None:
        super().__init__("ReputMessageService")
        self.commit_log = commit_log
        self.dispatcher = dispatcher
        self.reput_from_offset = 0
        self.fallback_wait_ms = fallback_wait_ms
        self.scheduled_wait_ms = max(fallback_wait_ms, SCHEDULED_WAIT_MS)
        self.message_arriving_listener: MessageArrivingListener | None = None
        #: whether anyone waits for an arrival now (the broker: a held pull or a parked pop);
        #: False skips a run's calls of the listener, one a message. None: always call.
        self.arrival_wanted: Callable[[], bool] | None = None
        self._reported_bad_at = -1
        self.dispatch_scheduler: DispatchScheduler | None = None
        self._dispatch_lock = threading.Lock()  # one dispatch run at a time
        self._flag_lock = threading.Lock()
        self._dispatch_scheduled = False
        self.dispatch_bound: Callable[[], int] | None = None

    def reput_end_offset(self) -> int:
        """Where dispatch stops now: the commitlog's end, or the bound when lower."""
        end = self.commit_log.get_max_offset()
        bound = self.dispatch_bound
        return end if bound is None else min(end, bound())

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Hold off every dispatch run (a replica truncating its files)."""
        with self._dispatch_lock:
            yield

    def dispatch_behind_bytes(self) -> int:
        return max(0, self.reput_end_offset() - self.reput_from_offset)

    def is_committed_all_dispatched(self) -> bool:
        return self.dispatch_behind_bytes() == 0

    def set_dispatch_scheduler(self, scheduler: DispatchScheduler | None) -> None:
        """Dispatch on the scheduler's thread from now on (None: on the reput thread)."""
        self.dispatch_scheduler = scheduler
        with self._flag_lock:
            self._dispatch_scheduled = False
        self.wakeup()  # whatever a dropped scheduled run would have dispatched

    def request_dispatch(self) -> None:
        """A put appended records: dispatch them soon (on the scheduler's thread, or here
        in the reput thread when there is no scheduler)."""
        scheduler = self.dispatch_scheduler
        if scheduler is None:
            self.wakeup()
            return
        with self._flag_lock:
            if self._dispatch_scheduled:  # a run not yet started will see this put
                return
            self._dispatch_scheduled = True
        if not scheduler(self._run_scheduled):
            with self._flag_lock:
                self._dispatch_scheduled = False
            self.wakeup()

    def _run_scheduled(self) -> None:
        with self._flag_lock:
            self._dispatch_scheduled = False
        if not self.dispatch_now():
            self.wakeup()

    def dispatch_now(self) -> bool:
        """Dispatch what is committed on the calling thread; False when another run holds
        the lock (the caller then wakes the reput thread)."""
        if not self._dispatch_lock.acquire(blocking=False):
            return False
        try:
            self._do_reput()
        except Exception:  # a failed dispatch is retried from the same offset; logged with it
            log.exception("dispatch failed at offset %d", self.reput_from_offset)
            return False
        finally:
            self._dispatch_lock.release()
        return True

    def do_reput(self) -> int:
        """Dispatch what is committed now; return how many records were dispatched."""
        with self._dispatch_lock:
            return self._do_reput()

    def _do_reput(self) -> int:
        count = 0
        min_offset = self.commit_log.get_min_offset()
        if min_offset > self.reput_from_offset:
            log.warning(
                "reput offset %d below commitlog min %d", self.reput_from_offset, min_offset
            )
            self.reput_from_offset = min_offset
        direct = self._direct_dispatch()
        while self.reput_from_offset < (end := self.reput_end_offset()):
            max_bytes = CHUNK_BYTES
            if direct is not None:
                start = self.reput_from_offset
                arrivals = self._arrivals_list()
                nxt, done = direct(start, end, arrivals)
                if done:
                    self.reput_from_offset = nxt
                    count += done
                    if arrivals is not None:
                        self._notify_arrivals(arrivals)
                    elif self.message_arriving_listener is not None:
                        self._notify_direct(start, nxt)
                    if nxt >= end:  # a put after this run's end schedules a run of its own
                        break
                    continue
                max_bytes = SLOW_STEP_BYTES  # the Python round takes what C left, then C again
            requests, nxt, bad = self.commit_log.read_dispatch_requests(
                self.reput_from_offset, check_crc=False, max_bytes=max_bytes
            )
            if nxt > end:  # only records that end at or below the bound
                requests, nxt, bad = self._within(requests, end)
            if requests:
                # RocketMQ's doReput runs every dispatcher, then notifies the arrival; a pull
                # reads only the consume queue, so here the held pulls are answered first and
                # the index (a query by key) follows in the same run, under the same lock
                self.dispatcher.dispatch_batch(requests)
                self._notify(requests)
                self.dispatcher.dispatch_index(requests)
                count += len(requests)
            moved = nxt != self.reput_from_offset
            self.reput_from_offset = nxt
            if bad:
                if self._reported_bad_at != nxt:
                    log.error("[BUG] cannot dispatch the commitlog record at offset %d", nxt)
                    self._reported_bad_at = nxt
                break
            if not moved:
                break
        return count

    def _direct_dispatch(self) -> DirectDispatch | None:
        """The dispatcher's one-call run (``MessageStore.dispatch_direct``) when this round may
        take it: the C record module built and no dispatch bound (controller mode keeps the
        Python round)."""
        direct: DirectDispatch | None = getattr(self.dispatcher, "dispatch_direct", None)
        if direct is None or native_record.RECORD is None or self.dispatch_bound is not None:
            return None
        return direct

    def _arrivals_list(self) -> list[DirectArrival] | None:
        """A list for a direct run's arrivals when someone waits for one now, else None (the
        run then returns none; :meth:`_notify_direct` covers one held meanwhile)."""
        if self.message_arriving_listener is None:
            return None
        wanted = self.arrival_wanted
        return [] if wanted is None or wanted() else None

    def _notify_arrivals(self, arrivals: list[DirectArrival]) -> None:
        """A direct run's arrivals, after its writes, as :meth:`_notify` tells the Python
        round's records (the same check first)."""
        listener, wanted = self.message_arriving_listener, self.arrival_wanted
        if listener is None or (wanted is not None and not wanted()):
            return
        notify_arrivals(listener, self.commit_log.get_message, arrivals)

    def _notify_direct(self, start: int, end: int) -> None:
        """The arrivals of a direct run, when someone now waits for one: as the Python round,
        the wanted check follows the units' writes (the records are read again for it)."""
        listener, wanted = self.message_arriving_listener, self.arrival_wanted
        if listener is None or wanted is None or not wanted():
            return
        requests: list[DispatchRequest] = []
        while start < end:
            part, nxt, _bad = self.commit_log.read_dispatch_requests(
                start, check_crc=False, max_bytes=end - start
            )
            requests.extend(r for r in part if r.commit_log_offset < end)
            if nxt <= start:
                break
            start = nxt
        self._notify(requests)

    def _within(
        self, requests: list[DispatchRequest], end: int
    ) -> tuple[list[DispatchRequest], int, bool]:
        kept = [r for r in requests if r.commit_log_offset + r.msg_size <= end]
        if not kept:
            return [], self.reput_from_offset, False
        last = kept[-1]
        return kept, last.commit_log_offset + last.msg_size, False

    def _notify(self, requests: list[DispatchRequest]) -> None:
        listener = self.message_arriving_listener
        if listener is None:
            return
        wanted = self.arrival_wanted
        if wanted is not None and not wanted():
            return
        for r in requests:
            if not MessageSysFlag.has_consume_queue_unit(r.sys_flag):
                continue
            try:
                listener(
                    r.topic,
                    r.queue_id,
                    r.consume_queue_offset,
                    r.tags_code,
                    r.store_timestamp,
                    r.properties,
                )
            except Exception:  # a listener's error must not stop the dispatch; logged
                log.exception("message arriving listener failed")

    def idle_wait_ms(self) -> float:
        """The wait after a round that found nothing: the fallback poll, or the safety net's
        longer one while a scheduler dispatches the puts."""
        if self.dispatch_scheduler is None:
            return self.fallback_wait_ms
        return self.scheduled_wait_ms

    def run(self) -> None:
        while not self.is_stopped():
            try:
                done = self.do_reput()
            except Exception:  # the reput service outlives one failed round; logged with the offset
                log.exception("reput failed at offset %d", self.reput_from_offset)
                done = 0
            if not done:
                self.wait_for_running(self.idle_wait_ms())
        self.do_reput()
