"""TimerEnqueue: wheel-topic messages into the wheel (TimerMessageStore's
TimerEnqueueGetService + TimerEnqueuePutService, doEnqueue).

Reads the wheel topic's consume queue from ``curr_queue_offset``. A message whose slot is
before ``curr_write_time_ms`` (the floored now), or in a slot the dequeue has begun, is put to
its real topic at its own due time, never into the wheel; any other becomes one 52-byte unit
appended to the ``timerlog`` and chained into its ``timerwheel`` slot. A slot past the roll
window (``timerRollWindowSlot``) is not reachable in one lap: the unit goes to a slot at the
window's end (or half of it) with MAGIC_ROLL, and at that slot the message is put back into
the wheel topic (``TIMER_ROLL_TIMES`` + 1) to be enqueued again.
"""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.store.timer.timer_context import TimerContext
from rocketq.store.timer.timer_hook import TIMER_TOPIC
from rocketq.store.timer.timer_log import (
    MAGIC_DEFAULT,
    MAGIC_DELETE,
    MAGIC_ROLL,
    UNIT_SIZE,
    TimerLogUnit,
)
from rocketq.store.timer.timer_put import LONG_MAX, TimerDequeuePut

ENQUEUE_BATCH = 256


class TimerEnqueue:
    def __init__(self, timer: TimerContext, put: TimerDequeuePut) -> None:
        self.timer = timer
        self.put = put

    def enqueue(self) -> bool:
        """Move up to a batch of wheel-topic messages into the wheel; True if any."""
        t = self.timer
        if t.config.timer_stop_enqueue or not t.is_running:
            t.maybe_move_write_time()  # the dequeue still follows the clock
            return False
        cq = t.message_store.find_consume_queue(TIMER_TOPIC, 0, create=False)
        if cq is None:
            t.maybe_move_write_time()
            return False
        t.curr_queue_offset = max(t.curr_queue_offset, cq.get_min_offset_in_queue())
        done = 0
        while done < ENQUEUE_BATCH and t.is_running:
            offset = t.curr_queue_offset
            unit = cq.get_unit(offset)
            if unit is None:
                break
            msg = self.put.read_message(unit[0], unit[1])
            if msg is not None:
                msg.queue_offset = offset
                if not self._enqueue_one(unit[0], unit[1], msg):
                    break  # stopping: this offset is enqueued again after the restart
            t.curr_queue_offset = offset + 1
            done += 1
        t.commit_queue_offset = t.curr_queue_offset
        t.maybe_move_write_time()
        t.maybe_close_marks_window()
        return done > 0

    def _enqueue_one(self, offset_py: int, size_py: int, msg: MessageExt) -> bool:
        t = self.timer
        try:
            delayed = int(msg.properties.get(mc.PROPERTY_TIMER_OUT_MS, "0"))
        except ValueError:
            delayed = 0
        t.timer_metrics.count_enqueue(msg.properties.get(mc.PROPERTY_REAL_TOPIC, ""))
        with t.slot_lock:
            if delayed >= max(t.curr_write_time_ms, t.started_until):
                self.do_enqueue(offset_py, size_py, delayed, msg)
                return True
        # due already, or in the slot being delivered: never in the wheel
        if not self.put.hold_until(self.put.due_ms(msg, delayed)):
            return False
        msg.properties[mc.PROPERTY_TIMER_ENQUEUE_MS] = str(LONG_MAX)
        return self.put.deliver([(msg, LONG_MAX, MAGIC_DEFAULT)])

    def do_enqueue(self, offset_py: int, size_py: int, delayed_time: int, msg: MessageExt) -> int:
        """Append the unit and chain it into its slot (TimerMessageStore.doEnqueue)."""
        t = self.timer
        precision, window = t.precision_ms, t.timer_roll_window_slots
        write_time = t.curr_write_time_ms
        magic = MAGIC_DEFAULT
        if delayed_time - write_time >= window * precision:
            magic |= MAGIC_ROLL
            if delayed_time - write_time - window * precision < window // 3 * precision:
                delayed_time = write_time + window // 2 * precision
            else:
                delayed_time = write_time + window * precision
        is_delete = mc.PROPERTY_TIMER_DEL_UNIQKEY in msg.properties
        if is_delete:
            magic |= MAGIC_DELETE
        real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC)
        slot = t.timer_wheel.get_slot(delayed_time)
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
        pos = t.timer_log.append(unit.encode())
        first = pos if slot.first_pos == -1 else slot.first_pos
        num = slot.num - 1 if is_delete else slot.num + 1
        t.timer_wheel.put_slot(delayed_time, first, pos, num, slot.magic)
        t.add_metric(msg, -1 if is_delete else 1)
        return pos
