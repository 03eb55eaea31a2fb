"""PopInflightTable: which handle of a popped message is live, and which offsets are acked.

RocketMQ 5's broker keeps no per-message state: an ack is a record in the revive topic, and
the revive service matches it to its checkpoint when the checkpoint is due. rocketq keeps the
same records (so a restarted broker rebuilds the same answer from the revive topic) and, beside
them, this in-memory table for the broker's lifetime:

* per (group, real topic, queue) and offset: the popTime of the message's newest handle, whether
  it was acked, and the end of the longest-lived handle issued for it. A pop or a change of
  invisible time makes a new newest handle. An ack or a change with any other handle (one a
  change replaced) is refused, so one message never has two live handles; an ack repeated with
  the newest handle succeeds again. The entry goes once every handle of it has ended. A message
  the table does not know (popped before a restart) is judged by its handle's own time.
* per checkpoint (its merge key): the acked queue offsets, consulted by the revive service
  before the ack records come back from the timer (so an acked message is never revived).

The per-message entries are kept per checkpoint on the common path: a pop of contiguous
offsets past everything the queue has in flight is one ``_Span`` (start, end, popTime, end of
its handle, a bitmap of the offsets acked), and an ack of some of its offsets with its handle
sets bits. Anything else (a pop that overlaps what is in flight, after an offset reset; a pop
of offsets with gaps, filtered; an ack with another handle or of offsets outside the span; a
change of invisible time; an undo) first turns the spans it touches into per-offset entries
(``_Handles``) and is then decided per offset, as before. An offset is in at most one of them.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from dataclasses import dataclass, field
from typing import NamedTuple

Key = tuple[str, str, int, int]  # (group, real topic, queue id, queue offset)
QueueKey = tuple[str, str, int]  # (group, real topic, queue id)


class _Handles(NamedTuple):
    """Immutable, so a pop's offsets share one (a span turned into entries)."""

    pop_time: int  # of the newest handle
    ends_ms: int  # when the longest-lived handle issued ends
    acked: bool = False


@dataclass(slots=True)
class _Span:
    """One pop's contiguous offsets [start, end) of a queue with one handle."""

    start: int
    end: int
    pop_time: int
    ends_ms: int
    acked: int = 0  # bit i: offset start + i acked


@dataclass(slots=True)
class _Queue:
    offsets: dict[int, _Handles] = field(default_factory=dict)  # the per-offset entries
    spans: dict[int, _Span] = field(default_factory=dict)  # by start, ascending
    high: int = 0  # no span reaches past this offset

    def spans_over(self, low: int, high: int) -> list[_Span]:
        """The spans holding any offset of [low, high]."""
        return [sp for sp in self.spans.values() if sp.start <= high and low < sp.end]

    def __len__(self) -> int:
        return len(self.offsets) + sum(sp.end - sp.start for sp in self.spans.values())


class PopInflightTable:
    def __init__(self) -> None:
        self._queues: dict[QueueKey, _Queue] = {}
        self._acked: dict[str, set[int]] = {}
        # (ends_ms, seq, group, topic, queue id, offsets or a span's start): expire() pops
        # what has ended, not a scan
        self._ends: list[tuple[int, int, str, str, int, tuple[int, ...] | int]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def on_pop(
        self, group: str, topic: str, queue_id: int, offsets: list[int], pop_time: int, ends_ms: int
    ) -> None:
        if not offsets:
            return
        with self._lock:
            queue = self._queues.get((group, topic, queue_id))
            if queue is None:
                queue = self._queues[(group, topic, queue_id)] = _Queue()
            start, last = offsets[0], offsets[-1]
            if (
                start >= queue.high
                and last - start == len(offsets) - 1  # contiguous (ascending, as read)
                and (not queue.offsets or queue.offsets.keys().isdisjoint(offsets))
            ):
                queue.spans[start] = _Span(start, last + 1, pop_time, ends_ms)
                queue.high = last + 1
                self._push(ends_ms, group, topic, queue_id, start)
                return
            self._split(group, topic, queue_id, queue, min(offsets), max(offsets))
            handles = queue.offsets
            entry = _Handles(pop_time, ends_ms)
            for offset in offsets:
                old = handles.get(offset)
                if old is None or old.ends_ms <= ends_ms:
                    handles[offset] = entry
                else:  # popped again (an offset reset) before an older handle ended
                    handles[offset] = _Handles(pop_time, old.ends_ms)
            self._push(ends_ms, group, topic, queue_id, tuple(offsets))

    def on_pop_run(
        self,
        group: str,
        topic: str,
        queue_id: int,
        start: int,
        end: int,
        pop_time: int,
        ends_ms: int,
        offsets: list[int],
    ) -> None:
        """:meth:`on_pop` of ``offsets``, the run [start, end) (end > start): its common case
        (a fresh run past the queue's spans) without the list's checks."""
        with self._lock:
            key = (group, topic, queue_id)
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = _Queue()
            elif start < queue.high or (
                queue.offsets and not queue.offsets.keys().isdisjoint(offsets)
            ):
                queue = None
            if queue is not None:
                queue.spans[start] = _Span(start, end, pop_time, ends_ms)
                queue.high = end
                ends = (ends_ms, next(self._seq), group, topic, queue_id, start)
                heapq.heappush(self._ends, ends)
                return
        self.on_pop(group, topic, queue_id, offsets, pop_time, ends_ms)

    def _push(
        self, ends_ms: int, group: str, topic: str, queue_id: int, what: tuple[int, ...] | int
    ) -> None:
        heapq.heappush(self._ends, (ends_ms, next(self._seq), group, topic, queue_id, what))

    def _split(
        self, group: str, topic: str, queue_id: int, queue: _Queue, low: int, high: int
    ) -> None:
        """The spans over [low, high] become per-offset entries (under the lock)."""
        if not queue.spans or low >= queue.high:
            return
        for sp in queue.spans_over(low, high):
            del queue.spans[sp.start]
            acked, done = sp.acked, _Handles(sp.pop_time, sp.ends_ms, True)
            live = _Handles(sp.pop_time, sp.ends_ms)
            for i, offset in enumerate(range(sp.start, sp.end)):
                queue.offsets[offset] = done if acked >> i & 1 else live
            self._push(sp.ends_ms, group, topic, queue_id, tuple(range(sp.start, sp.end)))
        if not queue.spans:
            queue.high = 0

    def _queue(self, group: str, topic: str, queue_id: int) -> _Queue:
        queue = self._queues.get((group, topic, queue_id))
        if queue is None:
            queue = self._queues[(group, topic, queue_id)] = _Queue()
        return queue

    def replace(
        self,
        key: Key,
        old_pop_time: int,
        new_pop_time: int,
        new_ends_ms: int,
    ) -> bool:
        """A change of invisible time: the new handle becomes the newest, unless the old one
        is not the newest or was acked (False)."""
        group, topic, queue_id, offset = key
        with self._lock:
            queue = self._queue(group, topic, queue_id)
            self._split(group, topic, queue_id, queue, offset, offset)
            handles = queue.offsets
            h = handles.get(offset)
            if h is None:
                handles[offset] = _Handles(new_pop_time, new_ends_ms)
            elif h.pop_time != old_pop_time or h.acked:
                return False
            else:
                handles[offset] = _Handles(new_pop_time, max(h.ends_ms, new_ends_ms))
            self._push(new_ends_ms, group, topic, queue_id, (offset,))
            return True

    def undo_replace(self, key: Key, old_pop_time: int, new_pop_time: int) -> None:
        group, topic, queue_id, offset = key
        with self._lock:
            queue = self._queues.get((group, topic, queue_id))
            h = None if queue is None else queue.offsets.get(offset)  # replace() split it
            if queue is not None and h is not None and h.pop_time == new_pop_time:
                queue.offsets[offset] = _Handles(old_pop_time, h.ends_ms, h.acked)

    def on_ack(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offsets: list[int],
        pop_time: int,
        ck_key: str,
        ends_ms: int,
        start: int | None = None,
        *,
        record: bool = True,
    ) -> tuple[list[int], list[int]]:
        """Mark ``offsets`` acked under the checkpoint ``ck_key`` (whose start offset is
        ``start``): (those acked now, those acked before with this same handle); the rest
        are refused by the caller. Not ``record``: the span's fresh offsets are not added to
        the checkpoint's acked offsets (the caller does, with :meth:`mark_acked_offsets`,
        unless the pop buffer's checkpoint is done with them)."""
        if not offsets:
            return [], []
        with self._lock:
            queue = self._queue(group, topic, queue_id)
            sp = None if start is None else queue.spans.get(start)
            if sp is not None and sp.pop_time == pop_time:
                first, end = sp.start, sp.end
                if (
                    not sp.acked
                    and offsets[0] == first
                    and len(offsets) == end - first
                    and offsets == list(range(first, end))
                ):  # the whole pop at once, in order: the common case, without a set
                    sp.acked = (1 << (end - first)) - 1
                    fresh = list(offsets)
                    if record:
                        self._acked.setdefault(ck_key, set()).update(fresh)
                    return fresh, []
                low, high = min(offsets), max(offsets)
                if sp.start <= low and high < sp.end:
                    fresh, repeated = _ack_span(sp, offsets, low, high)
                    if fresh and record:
                        self._acked.setdefault(ck_key, set()).update(fresh)
                    return fresh, repeated
            self._split(group, topic, queue_id, queue, min(offsets), max(offsets))
            return self._ack_offsets(
                group, topic, queue_id, queue, offsets, pop_time, ck_key, ends_ms
            )

    def ack_whole_span(
        self, group: str, topic: str, queue_id: int, start: int, n: int, pop_time: int
    ) -> bool:
        """:meth:`on_ack` of a whole pop at once (offsets ``start`` to ``start + n - 1``, none
        acked yet, with the pop's own handle) without the checkpoint's acked set (``record``
        False): True when done, False (nothing changed) when the offsets are not exactly one
        un-acked span of that handle (the caller takes the general path)."""
        with self._lock:
            queue = self._queues.get((group, topic, queue_id))
            sp = None if queue is None else queue.spans.get(start)
            if sp is None or sp.pop_time != pop_time or sp.acked or sp.end - start != n:
                return False
            sp.acked = (1 << n) - 1
            return True

    def _ack_offsets(
        self,
        group: str,
        topic: str,
        queue_id: int,
        queue: _Queue,
        offsets: list[int],
        pop_time: int,
        ck_key: str,
        ends_ms: int,
    ) -> tuple[list[int], list[int]]:
        """:meth:`on_ack` on per-offset entries (under the lock)."""
        fresh: list[int] = []
        repeated: list[int] = []
        handles = queue.offsets
        acked: _Handles | None = None  # the acked form of the entries found
        for offset in offsets:
            h = handles.get(offset)
            if h is None:  # popped before a restart: taken at its handle's word
                handles[offset] = _Handles(pop_time, ends_ms, True)
                self._push(ends_ms, group, topic, queue_id, (offset,))
            elif h.pop_time != pop_time:
                continue
            elif h.acked:
                repeated.append(offset)
                continue
            else:
                if acked is None or acked.ends_ms != h.ends_ms:
                    acked = _Handles(h.pop_time, h.ends_ms, True)
                handles[offset] = acked
            fresh.append(offset)
        if fresh:
            self._acked.setdefault(ck_key, set()).update(fresh)
        return fresh, repeated

    def undo_ack(
        self, group: str, topic: str, queue_id: int, offsets: list[int], ck_key: str
    ) -> None:
        """``offsets`` (acked by :meth:`on_ack`) are not acked after all: their record was
        not stored."""
        with self._lock:
            queue = self._queues.get((group, topic, queue_id))
            if queue is not None and offsets:
                self._split(group, topic, queue_id, queue, min(offsets), max(offsets))
                for offset in offsets:
                    h = queue.offsets.get(offset)
                    if h is not None and h.acked:
                        queue.offsets[offset] = h._replace(acked=False)
            self._acked.get(ck_key, set()).difference_update(offsets)

    def mark_acked_offsets(self, ck_key: str, offsets: list[int]) -> None:
        """Offsets acked under a checkpoint (those :meth:`on_ack` did not record)."""
        with self._lock:
            self._acked.setdefault(ck_key, set()).update(offsets)

    def mark_acked(self, ck_key: str, offset: int) -> None:
        """An offset done under a checkpoint (a change's old one, or revived)."""
        with self._lock:
            self._acked.setdefault(ck_key, set()).add(offset)

    def unmark_acked(self, ck_key: str, offset: int) -> None:
        with self._lock:
            self._acked.get(ck_key, set()).discard(offset)

    def acked_offsets(self, ck_key: str) -> set[int]:
        with self._lock:
            return set(self._acked.get(ck_key, ()))

    def forget_checkpoint(self, ck_key: str) -> None:
        """The revive service is done with a checkpoint."""
        with self._lock:
            self._acked.pop(ck_key, None)

    def expire(self, now_ms: int) -> None:
        """Drop the messages every handle of which has ended."""
        ends, queues = self._ends, self._queues
        with self._lock:
            while ends and ends[0][0] < now_ms:
                _, _, group, topic, queue_id, what = heapq.heappop(ends)
                queue_key = (group, topic, queue_id)
                queue = queues.get(queue_key)
                if queue is None:
                    continue
                if isinstance(what, int):  # a span (gone if it was split)
                    sp = queue.spans.get(what)
                    if sp is not None and sp.ends_ms < now_ms:
                        del queue.spans[what]
                        if not queue.spans:
                            queue.high = 0
                else:
                    for offset in what:
                        h = queue.offsets.get(offset)
                        if h is not None and h.ends_ms < now_ms:
                            del queue.offsets[offset]
                if not queue.offsets and not queue.spans:
                    del queues[queue_key]

    @property
    def live_count(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())


def _ack_span(sp: _Span, offsets: list[int], low: int, high: int) -> tuple[list[int], list[int]]:
    """Ack ``offsets`` (all in ``sp``, from ``low`` to ``high``): (acked now, acked before)."""
    start, acked, n = sp.start, sp.acked, sp.end - sp.start
    if not acked and low == start and high == start + n - 1 and len(set(offsets)) == n:
        sp.acked = (1 << n) - 1  # the whole pop at once: the common case
        return list(offsets), []
    fresh: list[int] = []
    repeated: list[int] = []
    for offset in offsets:
        bit = 1 << (offset - start)
        if acked & bit:
            repeated.append(offset)
        else:
            fresh.append(offset)
    if fresh:
        sp.acked = acked | sum(1 << (o - start) for o in set(fresh))
    return fresh, repeated
