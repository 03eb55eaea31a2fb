"""DeliveryMarks: the timer's guard against a second copy after a restart (beyond RocketMQ).

Theory of operation
-------------------
The timer's progress (``timercheck``: the read time, the enqueue offset) is written once a
``timerFlushIntervalMs``. After a kill -9 the timer restarts from that checkpoint, so the
slots read and the wheel-topic messages enqueued since then are processed again: RocketMQ's
timer then puts their messages a second time. Each copy the timer puts carries
``TIMER_DEQUEUE_MS`` and the message's ``UNIQ_KEY``: those are the target's delivered marks.

At recovery the timer opens a *window*: everything it could redo was delivered at or after
``since_ms`` (the checkpoint's read time, or the store time of the first wheel-topic message
to enqueue again, whichever is earlier). While the window is open, before each put the timer
asks :meth:`seen` whether the target queue already holds a copy: the first question for a
queue scans it from the first message stored at ``since_ms`` (a binary search by store time)
to its end and keeps the keys of the copies it finds; keys the timer puts are added as it
goes. The window closes once the timer has read past the recovery time and enqueued past the
wheel topic's end at recovery: nothing later can be a second copy, and the keys are dropped.
Memory is the keys of the copies delivered in the window, never the pending timers.

A key is (UNIQ_KEY, roll count, delete marker): a rolled timer (a hop through the wheel
topic, ``TIMER_ROLL_TIMES``) is one copy per hop.

A promoted master (controller mode) opens the same window, but its consume queues stop at the
confirm offset (``reput.py``): the old master's last copies may sit in the commitlog beyond it,
undispatched, until the in-sync set acknowledges them. So the window also reads the
undispatched tail of the commitlog once, when it opens (``tail``), and the timer keeps it open
until dispatch has passed that tail (``TimerMessageStore.maybe_close_marks_window``).
"""

from __future__ import annotations

import logging

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.timer.store_host import StoreHost

log = logging.getLogger(__name__)

SLACK_MS = 1000  # store times of one process may step back a little (clock adjustments)
MarkKey = tuple[str, str, bool]


def mark_key(msg: MessageExt, *, roll: bool) -> MarkKey | None:
    return properties_key(msg.properties, roll=roll)


def properties_key(properties: dict[str, str], *, roll: bool) -> MarkKey | None:
    uniq = properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    if not uniq:
        return None
    hops = properties.get(mc.PROPERTY_TIMER_ROLL_TIMES, "0") if roll else ""
    return (uniq, hops, mc.PROPERTY_TIMER_DEL_UNIQKEY in properties)


def tail_copies(requests: list[DispatchRequest]) -> dict[tuple[str, int], list[dict[str, str]]]:
    """The timer's copies among undispatched records, by target queue (their properties)."""
    copies: dict[tuple[str, int], list[dict[str, str]]] = {}
    for req in requests:
        if mc.PROPERTY_TIMER_DEQUEUE_MS in req.properties:
            copies.setdefault((req.topic, req.queue_id), []).append(req.properties)
    return copies


class DeliveryMarks:
    def __init__(
        self,
        store: StoreHost,
        since_ms: int,
        tail: dict[tuple[str, int], list[dict[str, str]]] | None = None,
    ) -> None:
        self.store = store
        self.since_ms = since_ms - SLACK_MS
        self._queues: dict[tuple[str, int], set[MarkKey]] = {}
        self._tail = tail or {}  # copies beyond the dispatched end when the window opened
        self.skipped = 0

    def seen(self, topic: str, queue_id: int, key: MarkKey, *, roll: bool) -> bool:
        marks = self._queues.get((topic, queue_id))
        if marks is None:
            marks = self._queues[(topic, queue_id)] = self._scan(topic, queue_id, roll=roll)
        if key in marks:
            self.skipped += 1
            log.info(
                "timer: %s already delivered to %s-%d before the restart", key, topic, queue_id
            )
            return True
        return False

    def add(self, topic: str, queue_id: int, key: MarkKey) -> None:
        marks = self._queues.get((topic, queue_id))
        if marks is not None:
            marks.add(key)

    def _scan(self, topic: str, queue_id: int, *, roll: bool) -> set[MarkKey]:
        store = self.store
        store.wait_for_dispatch()
        cq = store.find_consume_queue(topic, queue_id, create=False)
        marks: set[MarkKey] = set()
        for properties in self._tail.get((topic, queue_id), ()):
            key = properties_key(properties, roll=roll)
            if key is not None:
                marks.add(key)
        if cq is None:
            return marks
        offset = store.get_offset_in_queue_by_time(topic, queue_id, self.since_ms)
        end = cq.get_max_offset_in_queue()
        for index in range(offset, end):
            unit = cq.get_unit(index)
            data = store.select_one_message_by_offset(unit[0], unit[1]) if unit else None
            if data is None:
                continue
            msg = decode_message(data, check_crc=False, read_body=False)
            if mc.PROPERTY_TIMER_DEQUEUE_MS not in msg.properties:
                continue
            key = mark_key(msg, roll=roll)
            if key is not None:
                marks.add(key)
        log.info("timer: %d delivered marks in %s-%d since %d", len(marks), topic, queue_id, offset)
        return marks
