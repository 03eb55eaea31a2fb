"""SupersedeIndex: which queue offsets of a check point a later check point of the same
(group, topic, queue) covers, so that the revive service does not revive them (beyond
RocketMQ 5, whose PopReviveService revives every check point no ack matched).

Theory of operation. An ack matches a check point (ck) by its pop time (PopCheckPoint's merge
key). Around a change of master the same messages can be popped twice: under a ck A of the
old master whose answer never reached the client, or whose consume offset never reached the
new master, and again under a ck B of the new master, which the client acknowledges. No ack
ever matches A; revived, it brings acknowledged messages back. B revives whatever of it is
not acknowledged, so A must not revive what B covers: those offsets of A are *superseded*.

Only a ck of an earlier term (popped before this revive service started: a restart or a
promotion) is checked, and two kinds of later ck supersede it:

* **this term's pops**: every offset between the committed offset a queue had when this
  term's pops began (:meth:`open`: after a new master moved its pop offsets past the old
  master's pops, ``controller_mode/pop_offsets.py``) and its committed offset now was popped
  by this broker under a ck of its own (or skipped by a filter or an admin reset), and a pop
  commits its offset only once its ck is stored (or, in the pop buffer, acked in full).
  This order is the terms' order, whatever the clocks say.
* **earlier terms' cks with a later pop time**: learned from the revive queues as they are
  read, and from the wheel topic (``check_point_scan.py``), where a ck stays after the timer
  delivered it: before a ck of an earlier term is revived, the wheel is read back to its pop
  time less the clock margin, which finds every ck popped after it (it was stored after it).

The rule is safe under any total order: the latest ck covering an offset is never superseded
and revives it unless it was acknowledged. The order only decides which duplicate is avoided;
with clocks skewed beyond the margin a later pop may look older, and is then not superseding
(a redelivery, as before), never a loss. FIFO pops write no ck (nothing to supersede); a
retry topic's ck is its own (group, topic, queue). Within one term, cks never overlap but
after an admin reset, and are revived as in RocketMQ.

Bounded: this term's pops are one offset per queue; the earlier terms' cks are those stored
before the term began (and this term's found by a wheel read), forgotten with the read range
once none is pending in the revive queues and every one learned is due and a grace past
(:meth:`forget`); an older ck coming due later reads the wheel again.
"""

from __future__ import annotations

import asyncio
import logging
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocketq.broker.pop.check_point_scan import (
    CLOCK_MARGIN_MS,
    check_point_of,
    end_of,
    messages_between,
)
from rocketq.broker.pop.records import PopCheckPoint
from rocketq.store.timer.timer_hook import TIMER_TOPIC

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)

#: the earlier terms' cks are kept this long after the last learned one is due
FORGET_GRACE_MS = 10_000

QueueKey = tuple[str, str, int]  # (group, topic, queue id)


@dataclass(frozen=True, slots=True)
class Covered:
    """The offsets one ck popped."""

    start: int
    end: int  # the offset after its last message
    pop_time: int
    offsets: frozenset[int]


def _start(entry: Covered) -> int:
    return entry.start


def offsets_of(ck: PopCheckPoint) -> list[int]:
    return [ck.ack_offset_by_index(i) for i in range(ck.num)]


class SupersedeIndex:
    def __init__(self, broker: PopContext, revive_topic: str) -> None:
        self.broker = broker
        self.revive_topic = revive_topic
        self.opened = asyncio.Event()
        self.started_ms = 0
        self.superseded_total = 0  # offsets not revived: a later ck covered them
        self._pops_from: dict[str, dict[int, int]] = {}  # committed when this term's pops began
        self._later: dict[QueueKey, list[Covered]] = {}  # earlier terms' cks, by start
        self._keys: set[str] = set()
        self._max_span = 1
        self._until_ms = 0  # the latest revive time learned, plus the grace
        self._wheel_since: int | None = None  # the wheel was read from this time ...
        self._wheel_range = (0, 0)  # ... that is, this range of its queue offsets

    def reset(self, started_ms: int) -> None:
        """A new term (the revive service starts): nothing known, pops not yet open."""
        self.started_ms = started_ms
        self.opened.clear()
        self._pops_from = {}
        self._clear()

    def open(self) -> None:
        """This term's pops begin at the offsets committed now (a new master: after its pop
        offsets moved past the old master's pops). Called again (the same master elected
        again), the later offsets hold: a narrower range is never wrong."""
        table = dict(self.broker.consumer_offset_manager.offset_table)  # one copy, in C
        self._pops_from = {key: dict(queues) for key, queues in table.items()}
        self.opened.set()

    def is_earlier_term(self, ck: PopCheckPoint) -> bool:
        return ck.pop_time < self.started_ms

    def learn(self, ck: PopCheckPoint) -> None:
        """A ck of an earlier term read from the store (any thread the revive reads in)."""
        key = ck.merge_key()
        if key in self._keys:
            return
        self._keys.add(key)
        offsets = offsets_of(ck)
        if not offsets:
            return
        entry = Covered(ck.start_offset, end_of(ck), ck.pop_time, frozenset(offsets))
        insort(self._later.setdefault((ck.cid, ck.topic, ck.queue_id), []), entry, key=_start)
        self._max_span = max(self._max_span, entry.end - entry.start)
        self._until_ms = max(self._until_ms, ck.revive_time + FORGET_GRACE_MS)

    def needs_cover(self, pop_time: int) -> bool:
        since = pop_time - CLOCK_MARGIN_MS
        return self._wheel_since is None or since < self._wheel_since

    def cover(self, pop_time: int) -> int:
        """Read the wheel back to ``pop_time`` less the clock margin (a store thread), unless
        it was; how many cks were read."""
        if not self.needs_cover(pop_time):
            return 0
        since = pop_time - CLOCK_MARGIN_MS
        store = self.broker.message_store
        begin = store.get_offset_in_queue_by_time(TIMER_TOPIC, 0, since)
        if self._wheel_since is None:
            end = store.get_max_offset_in_queue(TIMER_TOPIC, 0)
        else:
            end = self._wheel_range[0]
        found = 0
        for msg in messages_between(store, TIMER_TOPIC, 0, begin, end):
            ck = check_point_of(msg, self.revive_topic)
            if ck is not None:
                found += 1
                self.learn(ck)
        self._wheel_since = since
        self._wheel_range = (min(begin, end), max(end, self._wheel_range[1]))
        return found

    def superseded(self, ck: PopCheckPoint) -> set[int]:
        """The offsets of ``ck`` (of an earlier term) that a later ck covers."""
        offsets = set(offsets_of(ck))
        done = self._popped_this_term(ck, offsets)
        entries = self._later.get((ck.cid, ck.topic, ck.queue_id), [])
        lo, hi = ck.start_offset, end_of(ck)
        first = bisect_right(entries, lo - self._max_span, key=_start)
        for entry in entries[first : bisect_left(entries, hi, key=_start)]:
            if entry.pop_time > ck.pop_time and entry.end > lo:
                done |= offsets & entry.offsets
        return done

    def _popped_this_term(self, ck: PopCheckPoint, offsets: set[int]) -> set[int]:
        offset_manager = self.broker.consumer_offset_manager
        key = offset_manager.key(ck.topic, ck.cid)
        since = self._pops_from.get(key, {}).get(ck.queue_id, -1)
        if since < 0:  # no offset when pops began: where they began is not known
            return set()
        now = offset_manager.query_offset(ck.cid, ck.topic, ck.queue_id)
        return {o for o in offsets if since <= o < now}

    @property
    def remembers_earlier(self) -> bool:
        return bool(self._keys)

    def forget(self, now_ms: int, earlier_pending: bool) -> None:
        """Drop the earlier terms' cks once none is pending and all are due and a grace past."""
        if self._keys and not earlier_pending and now_ms > self._until_ms:
            log.info("superseding check points: %d of earlier terms forgotten", len(self._keys))
            self._clear()

    def _clear(self) -> None:
        self._later = {}
        self._keys = set()
        self._max_span = 1
        self._until_ms = 0
        self._wheel_since = None
        self._wheel_range = (0, 0)
