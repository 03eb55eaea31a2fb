"""TimerDequeue: the slot at the read time delivered (TimerMessageStore's
TimerDequeueGetService and TimerDequeueGetMessageService, dequeue).

The slot at ``curr_read_time_ms`` is delivered once the clock reaches its start (and the
enqueue has reached it): its units are walked from LAST_POS backwards, the delete markers
(recalls) taken first, and every other unit's message held until its own ``TIMER_DELIVER_MS``
(``TimerDequeuePut.due_ms``), so none is early and none waits for the slot's end. The due
timers go out in batches: the dequeue waits for the last due time within a tenth of the
precision of the next one (``batch_window_ms``) and puts them all in one append
(``TimerDequeuePut.deliver``), one wake-up and one put a batch instead of one for each
millisecond with a due timer (at 1,667 timers a second, most of a millisecond's round was the
put's and the reput's fixed cost, and the dequeue fell behind); then the read time moves one
precision on. Once the dequeue has begun a slot (``started_until``) the enqueue sends a late
timer of it straight on instead of into the wheel, so the slot's content is final.

Read one tick ahead (as RocketMQ's TimerDequeueGetService runs ahead of its put services): in
the tick before a slot begins (while idle, or in a wait of half a tick for a due time of the
slot being delivered), its units are read and their messages decoded; at its start only the
units appended since are read (the walk stops at the LAST_POS read ahead). The slot
is not yet begun while read ahead, so the enqueue goes on writing into it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store.timer.timer_context import TimerContext
from rocketq.store.timer.timer_hook import build_delete_key
from rocketq.store.timer.timer_log import UNIT_SIZE, TimerLogUnit
from rocketq.store.timer.timer_put import TimerDequeuePut, need_delete, need_roll

BATCH_WINDOW_DIVISOR = 10  # due timers within a tenth of the precision are put together


def batch_window_ms(precision_ms: int) -> int:
    """How much later than its own due time a timer may wait for the others of its batch
    (10 ms at a precision of 100, 100 ms at 1000): never earlier, within the precision."""
    return max(1, precision_ms // BATCH_WINDOW_DIVISOR)


@dataclass(slots=True)
class SlotRead:
    """What has been read of one slot: its units up to ``last_pos``, messages decoded."""

    time_ms: int
    last_pos: int = -1
    delete_keys: set[str] = field(default_factory=set)
    normals: list[tuple[TimerLogUnit, MessageExt]] = field(default_factory=list)


class TimerDequeue:
    def __init__(self, timer: TimerContext, put: TimerDequeuePut) -> None:
        self.timer = timer
        self.put = put
        self.ahead: SlotRead | None = None  # the next slot, read before it begins

    def dequeue(self) -> int:
        """Deliver the slot at the read time: -1 nothing to do, 0 empty slot, 1 delivered."""
        t = self.timer
        if t.config.timer_stop_dequeue or not t.is_running:
            return -1
        read_time, precision = t.curr_read_time_ms, t.precision_ms
        now = t.message_store.now_ms()
        if read_time > t.curr_write_time_ms or read_time > now:
            # not begun (or the enqueue has not reached it): read it within one tick of it
            if read_time - precision <= min(now, t.curr_write_time_ms):
                self.ahead = self.read_slot(read_time, self.ahead)
            return -1
        with t.slot_lock:
            t.started_until = max(t.started_until, read_time + precision)
        read = self.read_slot(read_time, self.ahead)
        self.ahead = None
        if read.last_pos == -1:
            t.move_read_time()
            return 0
        put = self.put
        held = sorted(
            (read_time if need_roll(unit.magic) else put.due_ms(msg, read_time), index, unit, msg)
            for index, (unit, msg) in enumerate(read.normals)
        )  # bounded by one slot's content
        at, following = 0, read_time + precision
        window = batch_window_ms(precision)
        dues = [entry[0] for entry in held]
        while at < len(held):
            wait_ms = held[at][0] - t.message_store.now_ms()
            if wait_ms >= precision // 2 and (
                self.ahead is None or self.ahead.time_ms != following
            ):
                self.ahead = self.read_slot(following, None)  # a gap: read the next slot now
            # the last due time within the window from the next one: one wake-up and one put
            # for them all, instead of one for each millisecond that has a due timer
            last = dues[bisect.bisect_right(dues, dues[at] + window, at) - 1]
            if not put.hold_until(last):
                return -1  # stopping mid-slot: the slot is read again after the restart
            now = t.message_store.now_ms()
            end = at
            while end < len(held) and held[end][0] <= now:
                end += 1
            due = [
                (msg, unit.write_time_ms, unit.magic)
                for _, _, unit, msg in held[at:end]
                if not self._recalled(unit, msg, read.delete_keys)
            ]
            if not put.deliver(due):
                return -1
            at = end
        t.move_read_time()
        return 1

    def read_slot(self, time_ms: int, prior: SlotRead | None) -> SlotRead:
        """The slot's units and their messages; with ``prior`` (read ahead), only those
        appended since it was read."""
        t = self.timer
        read = prior if prior is not None and prior.time_ms == time_ms else SlotRead(time_ms)
        slot = t.timer_wheel.get_slot(time_ms)
        if slot.time_ms == -1 or slot.last_pos == read.last_pos:
            return read
        deletes: list[TimerLogUnit] = []
        normals: list[TimerLogUnit] = []
        pos = slot.last_pos
        while pos != -1 and pos != read.last_pos:
            unit = t.timer_log.get_unit(pos)
            if unit is None or unit.size != UNIT_SIZE:
                break
            if need_delete(unit.magic) and not need_roll(unit.magic):
                deletes.append(unit)
            else:
                normals.append(unit)
            pos = unit.prev_pos
        read.last_pos = slot.last_pos
        for unit in deletes:
            msg = self.put.read_message(unit.offset_py, unit.size_py)
            key = msg.properties.get(mc.PROPERTY_TIMER_DEL_UNIQKEY) if msg else None
            if key:
                read.delete_keys.add(key)
        for unit in reversed(normals):
            msg = self.put.read_message(unit.offset_py, unit.size_py)
            if msg is not None:
                read.normals.append((unit, msg))
        return read

    @staticmethod
    def _recalled(unit: TimerLogUnit, msg: MessageExt, delete_keys: set[str]) -> bool:
        if need_roll(unit.magic) or not delete_keys:
            return False
        uniq = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC, "")
        return bool(uniq) and build_delete_key(real_topic, uniq or "") in delete_keys
