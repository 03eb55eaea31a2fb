"""TimerMessageStore: RocketMQ 5's timer wheel over the store (TimerMessageStore.java).

Theory of operation
-------------------
A timer message is stored in ``rmq_sys_wheel_timer`` queue 0 with ``TIMER_OUT_MS`` (its slot
time) and ``REAL_TOPIC``/``REAL_QID`` (``timer_hook``). Three ServiceThreads move it on:

* enqueue (``timer_enqueue``): wheel-topic messages become units in the ``timerlog`` chained
  into their ``timerwheel`` slots (rolled on when past the roll window); one already due is put
  to its real topic at its own time.
* dequeue (``timer_dequeue``, ``timer_put``): the slot at ``curr_read_time_ms``, read one tick
  ahead, is delivered once the clock reaches its start, each message at its own due time and
  the due ones in one append; then the read time moves one precision on. Only the enqueue
  thread writes the wheel and the log, only for slots at or after ``curr_write_time_ms`` and
  not begun by the dequeue (``started_until``, under ``slot_lock``).
* flush (TimerFlushService): every ``timerFlushIntervalMs`` writes the ``timercheck``
  (read time, timerlog flush position, enqueue offset), msyncs the log and the wheel.

Recovery (``recover``) is Java's: scan the timerlog from a file before the checkpoint's flush
position, re-point each unit's slot at it, truncate the log at the first bad unit, and take the
enqueue offset from the last unit's message (its queue offset in the wheel topic) + 1. Beyond
RocketMQ, the restarted timer puts nothing a second time (``delivery_marks``), and the enqueue
offset is not pulled back to the checkpoint's (Java's ``min`` with masterTimerQueueOffset
enqueues the units since the checkpoint a second time). A shutdown finishes the slot under way.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store.config import StoreConfig
from rocketq.store.results import PutMessageStatus
from rocketq.store.timer.delivery_marks import DeliveryMarks, tail_copies
from rocketq.store.timer.store_host import StoreHost
from rocketq.store.timer.timer_checkpoint import TimerCheckpoint
from rocketq.store.timer.timer_dequeue import TimerDequeue, batch_window_ms
from rocketq.store.timer.timer_enqueue import TimerEnqueue
from rocketq.store.timer.timer_hook import TIMER_TOPIC, transform_timer_message
from rocketq.store.timer.timer_log import TimerLog
from rocketq.store.timer.timer_metrics import TimerMetrics
from rocketq.store.timer.timer_put import LONG_MAX, TimerDequeuePut
from rocketq.store.timer.timer_recovery import recover_and_revise, revise_queue_offset
from rocketq.store.timer.timer_service import TimerService
from rocketq.store.timer.timer_wheel import SLOTS_TOTAL, TimerWheel

log = logging.getLogger(__name__)

TIMER_BLANK_SLOTS = 60
CLEAN_INTERVAL_S = 30.0


def timer_wheel_path(root: str) -> str:
    return os.path.join(root, "timerwheel")


def timer_log_path(root: str) -> str:
    return os.path.join(root, "timerlog")


def timer_check_path(root: str) -> str:
    return os.path.join(root, "config", "timercheck")


def timer_metrics_path(root: str) -> str:
    return os.path.join(root, "config", "timermetrics")


class TimerMessageStore:
    def __init__(self, message_store: StoreHost, config: StoreConfig) -> None:
        self.message_store = message_store
        self.config = config
        root = config.store_path_root_dir
        self.precision_ms = config.timer_precision_ms
        self.slots_total = SLOTS_TOTAL
        self.timer_wheel = TimerWheel(timer_wheel_path(root), self.slots_total, self.precision_ms)
        self.timer_log = TimerLog(timer_log_path(root), config.mapped_file_size_timer_log)
        self.timer_checkpoint = TimerCheckpoint(timer_check_path(root))
        window = config.timer_roll_window_slot
        if window > self.slots_total - TIMER_BLANK_SLOTS or window < 2:
            window = self.slots_total - TIMER_BLANK_SLOTS
        self.timer_roll_window_slots = window
        self.curr_read_time_ms = 0
        self.curr_write_time_ms = 0
        self.commit_read_time_ms = 0
        self.curr_queue_offset = 0
        self.commit_queue_offset = 0
        self._last_committed = (0, 0)
        self.timer_metrics = TimerMetrics(timer_metrics_path(root))
        self.timing_count = self.timer_metrics.timing_count  # pending timers by real topic
        self.enqueue_total = self.timer_metrics.enqueue_total
        self.dequeue_total = self.timer_metrics.dequeue_total
        self._last_clean = time.monotonic()
        self.marks: DeliveryMarks | None = None
        self._marks_until = (0, 0)  # (read time, wheel-topic offset) that close the window
        self._marks_phy_until = 0  # dispatch must pass this commitlog end (a promoted tail)
        self._running = False
        self.shutting_down = threading.Event()
        # The dequeue reads a slot from its start and holds each message until its own due
        # time; the enqueue sends a timer whose slot the dequeue has begun straight on.
        self.slot_lock = threading.Lock()
        self.started_until = 0  # the end of the last slot the dequeue has begun
        self.put = TimerDequeuePut(self)
        self.enqueuer = TimerEnqueue(self, self.put)
        self.dequeuer = TimerDequeue(self, self.put)
        self.idle_ms = 100 * self.precision_ms / 1000  # Java's wait of an idle get service
        self.enqueue_service = TimerService(
            "TimerEnqueueService", self.enqueue, self.idle_ms, self._enqueue_idle_ms
        )
        self.dequeue_service = TimerService(
            "TimerDequeueService",
            lambda: self.dequeue() != -1,
            self.idle_ms,
            self._dequeue_idle_ms,
        )
        self.flush_service = TimerService(
            "TimerFlushService", self.flush_round, config.timer_flush_interval_ms
        )

    # ------------------------------------------------------------------ load / recover

    def load(self) -> bool:
        self.timer_log.load()
        self.timer_metrics.load()
        self.recover()
        return True

    def recover(self) -> None:
        cp = self.timer_checkpoint
        last_flush_pos = cp.last_timer_log_flush_pos
        last_file = self.timer_log.mapped_file_queue.get_last_mapped_file()
        if last_file is not None:
            last_flush_pos -= self.timer_log.file_size
        process_offset = recover_and_revise(
            self.timer_log, self.timer_wheel, max(0, last_flush_pos), check_timer_log=True
        )
        self.timer_log.mapped_file_queue.flushed_where = process_offset
        queue_offset = revise_queue_offset(self.timer_log, self.message_store, process_offset)
        if queue_offset == -1:
            offset = cp.last_timer_queue_offset
        else:
            offset = max(queue_offset + 1, cp.last_timer_queue_offset)
        cq = self.message_store.find_consume_queue(TIMER_TOPIC, 0, create=False)
        if cq is not None:
            offset = min(max(offset, cq.get_min_offset_in_queue()), cq.get_max_offset_in_queue())
        self.curr_queue_offset = offset
        now = self.message_store.now_ms()
        floor_read = self._format(now) - (self.slots_total - TIMER_BLANK_SLOTS) * self.precision_ms
        # a new timer starts reading now (Java starts a lap back and walks ~604,800 slots); so
        # does one whose checkpoint was never written and whose log is empty (a slave killed
        # before its first promotion leaves a zeroed file: a lap's walk of ~604,740 empty
        # slots delayed the new master's pending timers by seconds)
        never_ran = cp.last_read_time_ms == 0 and process_offset == 0
        first_read = cp.last_read_time_ms if cp.existed and not never_ran else self._format(now)
        self.curr_read_time_ms = max(first_read, floor_read)
        min_first = process_offset
        if self.timer_wheel.existed and last_file is not None:  # a new wheel holds nothing
            min_first = self.timer_wheel.check_phy_pos(self.curr_read_time_ms, process_offset)
        if min_first < process_offset:
            log.warning("timer recheck: minFirst %d < processOffset %d", min_first, process_offset)
            recover_and_revise(self.timer_log, self.timer_wheel, min_first, check_timer_log=False)
        self.commit_read_time_ms = self.curr_read_time_ms
        self.commit_queue_offset = self.curr_queue_offset
        log.info(
            "timer recovered: read time %d, queue offset %d, timerlog end %d",
            self.curr_read_time_ms,
            self.curr_queue_offset,
            process_offset,
        )

    def _open_marks_window(self, now: int) -> None:
        since = self.curr_read_time_ms
        store = self.message_store
        max_offset = store.get_max_offset_in_queue(TIMER_TOPIC, 0)
        if self.curr_queue_offset < max_offset:
            ts = store.get_message_store_timestamp(TIMER_TOPIC, 0, self.curr_queue_offset)
            if ts > 0:
                since = min(since, ts)
        # beyond the confirm offset (a promoted master), records wait undispatched: the old
        # master's copies there count, and its wheel-topic messages there are enqueued later
        dispatched, phy_end = store.dispatched_phy_offset(), store.get_max_phy_offset()
        tail = tail_copies(store.read_records(dispatched, phy_end)) if dispatched < phy_end else {}
        self.marks = DeliveryMarks(store, since, tail)
        self._marks_until = (self._format(now) + self.precision_ms, max_offset)
        self._marks_phy_until = phy_end

    def maybe_close_marks_window(self) -> None:
        if self.marks is None:
            return
        read_until, offset_until = self._marks_until
        store = self.message_store
        if self._marks_phy_until:
            if store.dispatched_phy_offset() < self._marks_phy_until:
                return  # the tail at the window's opening is not in the queues yet
            self._marks_phy_until = 0
            offset_until = max(offset_until, store.get_max_offset_in_queue(TIMER_TOPIC, 0))
            self._marks_until = (read_until, offset_until)
        if (
            self.marks is not None
            and self.curr_read_time_ms > read_until
            and self.curr_queue_offset >= offset_until
        ):
            log.info("timer: restart window closed (%d copies skipped)", self.marks.skipped)
            self.marks = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def is_running(self) -> bool:
        return self._running

    def start(self) -> None:
        """Start after the store: the restart window needs the queues dispatched."""
        self.message_store.wait_for_dispatch()
        self._open_marks_window(self.message_store.now_ms())
        self.maybe_move_write_time()
        self._running = True
        self.shutting_down.clear()
        self.enqueue_service.start()
        self.dequeue_service.start()
        self.flush_service.start()

    def shutdown(self) -> None:
        """Stop the services (the dequeue ends its slot first), then write the checkpoint."""
        was_running = self._running
        self._running = False
        self.shutting_down.set()
        if was_running:
            self.enqueue_service.shutdown()
            self.dequeue_service.shutdown()
            self.flush_service.shutdown()
        self.prepare_timer_checkpoint()
        self.timer_log.flush()
        self.timer_wheel.flush()
        self.timer_checkpoint.flush()
        self.timer_metrics.persist(self.message_store.now_ms())
        self.timer_checkpoint.shutdown()
        self.timer_wheel.shutdown(flush=False)
        self.timer_log.shutdown()

    # ------------------------------------------------------------------ send side

    def transform(self, msg: MessageExt) -> PutMessageStatus | None:
        """Reroute a timer message into the wheel topic (``timer_hook``)."""
        return transform_timer_message(
            msg,
            now_ms=self.message_store.now_ms(),
            precision_ms=self.precision_ms,
            max_delay_sec=self.config.timer_max_delay_sec,
            is_reject=self.is_reject,
        )

    def is_reject(self, deliver_time_ms: int) -> bool:
        """Flow control by the slot's count (TimerMessageStore.isReject, without the coin)."""
        congest = self.timer_wheel.get_slot(deliver_time_ms).num
        return congest >= self.config.timer_congest_num_each_slot

    # ------------------------------------------------------------------ enqueue

    def _format(self, time_ms: int) -> int:
        return time_ms // self.precision_ms * self.precision_ms

    def maybe_move_write_time(self) -> None:
        now = self._format(self.message_store.now_ms())
        if self.curr_write_time_ms < now:
            self.curr_write_time_ms = now
            self.dequeue_service.wakeup()  # a dequeue waiting for the enqueue to reach it

    # The idle waits. Java's get services poll every 100 * precision / 1000 ms (ten times a
    # slot); here each thread sleeps until the moment it has something to do, at most one
    # slot: the enqueue until the next slot begins (its write time moves then) or a message
    # dispatched into the wheel topic wakes it (``wheel_topic_dispatched``), the dequeue until
    # a tenth of a slot before its slot (the last read ahead) and then until the slot begins,
    # or until the enqueue's write time reaches it. At precision 1000: 1 and 2 wake-ups a
    # second instead of 10 each, and a slot is begun at its start, not up to a poll late.

    def _enqueue_idle_ms(self) -> float:
        return self.precision_ms - self.message_store.now_ms() % self.precision_ms + 1

    def _dequeue_idle_ms(self) -> float:
        if self.config.timer_stop_dequeue or not self._running:
            return self.idle_ms
        left = self.curr_read_time_ms - self.message_store.now_ms()
        if left <= 0:
            return self.idle_ms  # behind the write time: the enqueue wakes this thread
        lead = batch_window_ms(self.precision_ms)
        return min(left - lead if left > lead else left, self.precision_ms)

    def wheel_topic_dispatched(self) -> None:
        """The store dispatched a message into the wheel topic: the enqueue takes it now."""
        self.enqueue_service.wakeup()

    def enqueue(self) -> bool:
        """Move up to a batch of wheel-topic messages into the wheel; True if any."""
        return self.enqueuer.enqueue()

    def do_enqueue(self, offset_py: int, size_py: int, delayed_time: int, msg: MessageExt) -> int:
        return self.enqueuer.do_enqueue(offset_py, size_py, delayed_time, msg)

    def add_metric(self, msg: MessageExt, value: int) -> None:
        topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC)
        if topic is None or msg.properties.get(mc.PROPERTY_TIMER_ENQUEUE_MS) == str(LONG_MAX):
            return
        self.timer_metrics.add_timing(topic, value)

    # ------------------------------------------------------------------ dequeue

    def dequeue(self) -> int:
        """Deliver the slot at the read time: -1 nothing to do, 0 empty slot, 1 delivered."""
        return self.dequeuer.dequeue()

    def move_read_time(self) -> None:
        self.curr_read_time_ms += self.precision_ms
        self.commit_read_time_ms = self.curr_read_time_ms
        self.maybe_close_marks_window()

    # ------------------------------------------------------------------ checkpoint / metrics

    def prepare_timer_checkpoint(self) -> None:
        cp = self.timer_checkpoint
        cp.last_timer_log_flush_pos = self.timer_log.flushed_where
        cp.last_read_time_ms = self.commit_read_time_ms
        cp.master_timer_queue_offset = self.commit_queue_offset
        committed = (self.commit_read_time_ms, self.commit_queue_offset)
        if committed != self._last_committed:
            cp.next_version(0)
            self._last_committed = committed
        cp.last_timer_queue_offset = min(self.commit_queue_offset, cp.master_timer_queue_offset)

    def flush(self) -> None:
        """Write the checkpoint after the timerlog and the wheel (TimerFlushService)."""
        self.prepare_timer_checkpoint()
        self.timer_log.flush()
        self.timer_wheel.flush()
        self.timer_checkpoint.flush()
        self.timer_metrics.persist(self.message_store.now_ms())

    def flush_round(self) -> bool:
        """The flush service's step; every 30 s it also drops timerlog files whose messages
        the commitlog no longer has (the scheduler's deleteExpiredFileByOffsetForTimerLog)."""
        self.flush()
        if time.monotonic() - self._last_clean > CLEAN_INTERVAL_S:
            self._last_clean = time.monotonic()
            self.timer_log.delete_expired_files(self.message_store.get_min_phy_offset())
        return False

    def dequeue_lag(self) -> int:
        """Timers in slots already due and not yet delivered (rocketmq_timer_dequeue_lag)."""
        lag = 0
        read, write = self.curr_read_time_ms, self.curr_write_time_ms
        ticks = min((write - read) // self.precision_ms, self.slots_total)
        for i in range(max(0, ticks)):
            lag += self.timer_wheel.get_slot(read + i * self.precision_ms).num
        return lag

    def enqueue_lag(self) -> int:
        """Wheel-topic messages not yet enqueued (rocketmq_timer_enqueue_lag)."""
        return max(
            0,
            self.message_store.get_max_offset_in_queue(TIMER_TOPIC, 0) - self.curr_queue_offset,
        )
