"""TimerMessageStore: RocketMQ 5's timer wheel over the store (TimerMessageStore.java).

Theory of operation
-------------------
A timer message is stored in ``rmq_sys_wheel_timer`` queue 0 with ``TIMER_OUT_MS`` (its slot
time) and ``REAL_TOPIC``/``REAL_QID`` (``timer_hook``). Three ServiceThreads move it on:

* enqueue (TimerEnqueueGetService + TimerEnqueuePutService): reads the wheel topic's consume
  queue from ``curr_queue_offset``; a message already due (its slot before ``curr_write_time_ms``,
  the floored now) is put to its real topic at once, any other becomes one 52-byte unit appended
  to the ``timerlog`` and chained into its ``timerwheel`` slot (``do_enqueue``). A slot past the
  roll window (``timerRollWindowSlot``) is not reachable in one lap: the unit goes to a slot at
  the window's end (or half of it) with MAGIC_ROLL, and at that slot the message is put back
  into the wheel topic (``TIMER_ROLL_TIMES`` + 1) to be enqueued again.
* dequeue (TimerDequeueGetService + the get/put message services): for the slot at
  ``curr_read_time_ms`` once it is before ``curr_write_time_ms`` (so never before the due time),
  walks its units from LAST_POS backwards, takes the delete markers (recalls) first, then puts
  every other unit's message to its real topic (or back into the wheel topic for a roll) with
  ``TIMER_ENQUEUE_MS``/``TIMER_DEQUEUE_MS``, skipping those a marker deletes; then moves the read
  time one precision on. Only the enqueue thread writes the wheel and the log, only for slots at
  or after ``curr_write_time_ms``; only the dequeue thread reads slots before it: no lock.
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
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.errors import DecodeError
from rocketq.store.config import StoreConfig
from rocketq.store.results import PutMessageStatus
from rocketq.store.timer.delivery_marks import DeliveryMarks, mark_key
from rocketq.store.timer.store_host import StoreHost
from rocketq.store.timer.timer_checkpoint import TimerCheckpoint
from rocketq.store.timer.timer_hook import (
    TIMER_TOPIC,
    build_delete_key,
    deliver_ms_of,
    transform_timer_message,
)
from rocketq.store.timer.timer_log import (
    MAGIC_DEFAULT,
    MAGIC_DELETE,
    MAGIC_ROLL,
    UNIT_SIZE,
    TimerLog,
    TimerLogUnit,
)
from rocketq.store.timer.timer_metrics import TimerMetrics
from rocketq.store.timer.timer_recovery import recover_and_revise, revise_queue_offset
from rocketq.store.timer.timer_service import TimerService
from rocketq.store.timer.timer_wheel import SLOTS_TOTAL, TimerWheel

log = logging.getLogger(__name__)

TIMER_BLANK_SLOTS = 60
LONG_MAX = 2**63 - 1
ENQUEUE_BATCH = 256
CLEAN_INTERVAL_S = 30.0
PUT_RETRYABLE = frozenset(
    {
        PutMessageStatus.SERVICE_NOT_AVAILABLE,
        PutMessageStatus.FLUSH_DISK_TIMEOUT,
        PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
        PutMessageStatus.OS_PAGE_CACHE_BUSY,
        PutMessageStatus.CREATE_MAPPED_FILE_FAILED,
        PutMessageStatus.SLAVE_NOT_AVAILABLE,
        PutMessageStatus.UNKNOWN_ERROR,
    }
)


def timer_wheel_path(root: str) -> str:
    return os.path.join(root, "timerwheel")


def timer_log_path(root: str) -> str:
    return os.path.join(root, "timerlog")


def timer_check_path(root: str) -> str:
    return os.path.join(root, "config", "timercheck")


def timer_metrics_path(root: str) -> str:
    return os.path.join(root, "config", "timermetrics")


def need_roll(magic: int) -> bool:
    return bool(magic & MAGIC_ROLL)


def need_delete(magic: int) -> bool:
    return bool(magic & MAGIC_DELETE)


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
        self._running = False
        self._shutting_down = threading.Event()
        # The dequeue reads a slot from its start and holds each message until its own due
        # time; the enqueue sends a timer whose slot the dequeue has begun straight on.
        self._slot_lock = threading.Lock()
        self._started_until = 0  # the end of the last slot the dequeue has begun
        idle_ms = 100 * self.precision_ms / 1000
        self.enqueue_service = TimerService("TimerEnqueueService", self.enqueue, idle_ms)
        self.dequeue_service = TimerService(
            "TimerDequeueService", lambda: self.dequeue() != -1, idle_ms
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
        # a new timer starts reading now (Java starts a lap back and walks ~604,800 slots)
        first_read = cp.last_read_time_ms if cp.existed else self._format(now)
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
        self.marks = DeliveryMarks(store, since)
        self._marks_until = (self._format(now) + self.precision_ms, max_offset)

    def _maybe_close_marks_window(self) -> None:
        read_until, offset_until = self._marks_until
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
        self._shutting_down.clear()
        self.enqueue_service.start()
        self.dequeue_service.start()
        self.flush_service.start()

    def shutdown(self) -> None:
        """Stop the services (the dequeue ends its slot first), then write the checkpoint."""
        was_running = self._running
        self._running = False
        self._shutting_down.set()
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

    def enqueue(self) -> bool:
        """Move up to a batch of wheel-topic messages into the wheel; True if any."""
        if self.config.timer_stop_enqueue or not self._running:
            self.maybe_move_write_time()  # the dequeue still follows the clock
            return False
        cq = self.message_store.find_consume_queue(TIMER_TOPIC, 0, create=False)
        if cq is None:
            self.maybe_move_write_time()
            return False
        self.curr_queue_offset = max(self.curr_queue_offset, cq.get_min_offset_in_queue())
        done = 0
        while done < ENQUEUE_BATCH and self._running:
            offset = self.curr_queue_offset
            unit = cq.get_unit(offset)
            if unit is None:
                break
            msg = self._read_message(unit[0], unit[1])
            if msg is not None:
                msg.queue_offset = offset
                if not self._enqueue_one(unit[0], unit[1], msg):
                    break  # stopping: this offset is enqueued again after the restart
            self.curr_queue_offset = offset + 1
            done += 1
        self.commit_queue_offset = self.curr_queue_offset
        self.maybe_move_write_time()
        self._maybe_close_marks_window()
        return done > 0

    def _enqueue_one(self, offset_py: int, size_py: int, msg: MessageExt) -> bool:
        try:
            delayed = int(msg.properties.get(mc.PROPERTY_TIMER_OUT_MS, "0"))
        except ValueError:
            delayed = 0
        real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC, "")
        self.timer_metrics.count_enqueue(real_topic)
        with self._slot_lock:
            if delayed >= max(self.curr_write_time_ms, self._started_until):
                self.do_enqueue(offset_py, size_py, delayed, msg)
                return True
        # due already, or in the slot being delivered: never in the wheel
        if not self._hold_until(self._due_ms(msg, delayed)):
            return False
        msg.properties[mc.PROPERTY_TIMER_ENQUEUE_MS] = str(LONG_MAX)
        return self._deliver(msg, LONG_MAX, MAGIC_DEFAULT)

    def _due_ms(self, msg: MessageExt, slot_ms: int) -> int:
        """When ``msg`` (in the slot at ``slot_ms``) may be put: its own ``deliverMs``, kept
        inside the slot's (slot, slot + precision]. A delay is counted from the wheel-topic
        message's store time, never before the send-side hook's clock, so never early."""
        try:
            due = deliver_ms_of(msg.properties, msg.store_timestamp)
        except (ValueError, KeyError):
            due = slot_ms + self.precision_ms
        return min(max(due, slot_ms), slot_ms + self.precision_ms)

    def _hold_until(self, due_ms: int) -> bool:
        """Wait until the clock reaches ``due_ms``; False when the timer is stopping."""
        while True:
            left = due_ms - self.message_store.now_ms()
            if left <= 0:
                return True
            if self._shutting_down.wait(left / 1000):
                return False

    def do_enqueue(self, offset_py: int, size_py: int, delayed_time: int, msg: MessageExt) -> int:
        """Append the unit and chain it into its slot (TimerMessageStore.doEnqueue)."""
        write_time = self.curr_write_time_ms
        window_ms = self.timer_roll_window_slots * self.precision_ms
        magic = MAGIC_DEFAULT
        if delayed_time - write_time >= window_ms:
            magic |= MAGIC_ROLL
            if delayed_time - write_time - window_ms < self.timer_roll_window_slots // 3 * (
                self.precision_ms
            ):
                delayed_time = write_time + self.timer_roll_window_slots // 2 * self.precision_ms
            else:
                delayed_time = write_time + window_ms
        is_delete = mc.PROPERTY_TIMER_DEL_UNIQKEY in msg.properties
        if is_delete:
            magic |= MAGIC_DELETE
        real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC)
        slot = self.timer_wheel.get_slot(delayed_time)
        unit = TimerLogUnit(
            UNIT_SIZE,
            slot.last_pos,
            magic,
            write_time,
            delayed_time - write_time,
            offset_py,
            size_py,
            java_string_hash(real_topic) if real_topic is not None else 0,
        )
        pos = self.timer_log.append(unit.encode())
        first = pos if slot.first_pos == -1 else slot.first_pos
        num = slot.num - 1 if is_delete else slot.num + 1
        self.timer_wheel.put_slot(delayed_time, first, pos, num, slot.magic)
        self._add_metric(msg, -1 if is_delete else 1)
        return pos

    def _add_metric(self, msg: MessageExt, value: int) -> None:
        topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC)
        if topic is None or msg.properties.get(mc.PROPERTY_TIMER_ENQUEUE_MS) == str(LONG_MAX):
            return
        self.timer_metrics.add_timing(topic, value)

    # ------------------------------------------------------------------ dequeue

    def dequeue(self) -> int:
        """Deliver the slot at the read time: -1 nothing to do, 0 empty slot, 1 delivered."""
        if self.config.timer_stop_dequeue or not self._running:
            return -1
        read_time = self.curr_read_time_ms
        if read_time > self.curr_write_time_ms or read_time > self.message_store.now_ms():
            return -1  # the slot has not begun (or the enqueue has not reached it)
        with self._slot_lock:
            self._started_until = max(self._started_until, read_time + self.precision_ms)
        slot = self.timer_wheel.get_slot(read_time)
        if slot.time_ms == -1:
            self._move_read_time()
            return 0
        deletes: list[TimerLogUnit] = []
        normals: list[TimerLogUnit] = []
        pos = slot.last_pos
        while pos != -1:
            unit = self.timer_log.get_unit(pos)
            if unit is None or unit.size != UNIT_SIZE:
                break
            if need_delete(unit.magic) and not need_roll(unit.magic):
                deletes.append(unit)
            else:
                normals.append(unit)
            pos = unit.prev_pos
        normals.reverse()
        delete_keys: set[str] = set()
        for unit in deletes:
            msg = self._read_message(unit.offset_py, unit.size_py)
            key = msg.properties.get(mc.PROPERTY_TIMER_DEL_UNIQKEY) if msg else None
            if key:
                delete_keys.add(key)
        held: list[tuple[int, int, TimerLogUnit, MessageExt]] = []
        for index, unit in enumerate(normals):  # bounded by one slot's content
            msg = self._read_message(unit.offset_py, unit.size_py)
            if msg is not None:
                due = read_time if need_roll(unit.magic) else self._due_ms(msg, read_time)
                held.append((due, index, unit, msg))
        held.sort(key=lambda item: (item[0], item[1]))
        for due, _, unit, msg in held:
            if not self._hold_until(due) or not self._dequeue_one(unit, msg, delete_keys):
                return -1  # stopping mid-slot: the slot is read again after the restart
        self._move_read_time()
        return 1

    def _dequeue_one(self, unit: TimerLogUnit, msg: MessageExt, delete_keys: set[str]) -> bool:
        roll = need_roll(unit.magic)
        if not roll and delete_keys:
            uniq = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
            real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC, "")
            if uniq and build_delete_key(real_topic, uniq) in delete_keys:
                return True  # recalled (its marker took it off timing_count)
        return self._deliver(msg, unit.write_time_ms, unit.magic)

    def _move_read_time(self) -> None:
        self.curr_read_time_ms += self.precision_ms
        self.commit_read_time_ms = self.curr_read_time_ms
        self._maybe_close_marks_window()

    def _convert(self, msg: MessageExt, enqueue_time: int, roll: bool) -> MessageExt:
        """TimerMessageStore.convert + convertMessage: the copy to put."""
        props = dict(msg.properties)
        if enqueue_time != -1:
            props[mc.PROPERTY_TIMER_ENQUEUE_MS] = str(enqueue_time)
        if roll:
            props[mc.PROPERTY_TIMER_ROLL_TIMES] = str(
                int(props.get(mc.PROPERTY_TIMER_ROLL_TIMES, "0") or 0) + 1
            )
        props[mc.PROPERTY_TIMER_DEQUEUE_MS] = str(self.message_store.now_ms())
        if roll:
            topic, queue_id = msg.topic, msg.queue_id
        else:
            topic = props.pop(mc.PROPERTY_REAL_TOPIC, "")
            queue_id = int(props.pop(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0)
        props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
        return MessageExt(
            topic=topic,
            queue_id=queue_id,
            body=msg.body,
            flag=msg.flag,
            properties=props,
            sys_flag=msg.sys_flag,
            born_timestamp=msg.born_timestamp,
            born_host=msg.born_host,
            store_host=msg.store_host,
            reconsume_times=msg.reconsume_times,
        )

    def _deliver(self, msg: MessageExt, enqueue_time: int, magic: int) -> bool:
        """Put ``msg`` to its real topic (a roll: back into the wheel topic). False only
        when the timer is stopping before the put was done."""
        roll = need_roll(magic)
        if not roll and mc.PROPERTY_TIMER_DEL_UNIQKEY in msg.properties:
            return True  # a delete marker is never delivered (doPut's PUT_NO_RETRY)
        self._add_metric(msg, -1)
        inner = self._convert(msg, enqueue_time, roll)
        self.timer_metrics.count_dequeue(msg.properties.get(mc.PROPERTY_REAL_TOPIC, ""))
        key = mark_key(inner, roll=roll)
        marks = self.marks
        if (
            marks is not None
            and key is not None
            and marks.seen(inner.topic, inner.queue_id, key, roll=roll)
        ):
            return True
        if not self._put(inner):
            return False
        if marks is not None and key is not None:
            marks.add(inner.topic, inner.queue_id, key)
        return True

    def _put(self, inner: MessageExt) -> bool:
        retries = 0
        while True:
            status = self.message_store.async_put_message(inner, wait_store_msg_ok=False)
            result = status.result()
            if result.status is PutMessageStatus.PUT_OK or result.is_ok:
                return True
            if result.status not in PUT_RETRYABLE:
                log.warning("timer: dropping a message for %s: %s", inner.topic, result.status)
                return True
            if self._shutting_down.is_set():
                return False
            retries += 1
            if not self.config.timer_enable_retry_until_success and retries >= 3:
                log.error("timer: a message for %s failed %d times", inner.topic, retries)
                return True
            time.sleep(0.5 * self.precision_ms / 1000)

    def _read_message(self, offset_py: int, size_py: int) -> MessageExt | None:
        data = self.message_store.select_one_message_by_offset(offset_py, size_py)
        if data is None:
            return None
        try:
            return decode_message(data, check_crc=False)
        except DecodeError:
            log.warning("timer: no message at commitlog offset %d size %d", offset_py, size_py)
            return None

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
