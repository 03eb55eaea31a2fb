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
"""

from __future__ import annotations

import heapq
import threading
from typing import NamedTuple

Key = tuple[str, str, int, int]  # (group, real topic, queue id, queue offset)
QueueKey = tuple[str, str, int]  # (group, real topic, queue id)


class _Handles(NamedTuple):
    """Immutable, so a pop shares one for all its messages: the table is kept per queue by
    offset, and a pop's or a batch ack's entries are looked up and stored in C calls."""

    pop_time: int  # of the newest handle
    ends_ms: int  # when the longest-lived handle issued ends
    acked: bool = False


class PopInflightTable:
    def __init__(self) -> None:
        self._handles: dict[QueueKey, dict[int, _Handles]] = {}
        self._acked: dict[str, set[int]] = {}
        # (ends_ms, group, topic, queue id, offsets): expire() pops what has ended, not a scan
        self._ends: list[tuple[int, str, str, int, tuple[int, ...]]] = []
        self._lock = threading.Lock()

    def on_pop(
        self, group: str, topic: str, queue_id: int, offsets: list[int], pop_time: int, ends_ms: int
    ) -> None:
        entry = _Handles(pop_time, ends_ms)
        with self._lock:
            queue = self._handles.setdefault((group, topic, queue_id), {})
            if queue.keys().isdisjoint(offsets):  # the common case: never popped before
                queue.update(dict.fromkeys(offsets, entry))
            else:
                for offset in offsets:
                    old = queue.get(offset)
                    if old is None or old.ends_ms <= ends_ms:
                        queue[offset] = entry
                    else:  # popped again (an offset reset) before an older handle ended
                        queue[offset] = _Handles(pop_time, old.ends_ms)
            heapq.heappush(self._ends, (ends_ms, group, topic, queue_id, tuple(offsets)))

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
            queue = self._handles.setdefault((group, topic, queue_id), {})
            h = queue.get(offset)
            if h is None:
                queue[offset] = _Handles(new_pop_time, new_ends_ms)
            elif h.pop_time != old_pop_time or h.acked:
                return False
            else:
                queue[offset] = _Handles(new_pop_time, max(h.ends_ms, new_ends_ms))
            heapq.heappush(self._ends, (new_ends_ms, group, topic, queue_id, (offset,)))
            return True

    def undo_replace(self, key: Key, old_pop_time: int, new_pop_time: int) -> None:
        group, topic, queue_id, offset = key
        with self._lock:
            queue = self._handles.get((group, topic, queue_id), {})
            h = queue.get(offset)
            if h is not None and h.pop_time == new_pop_time:
                queue[offset] = _Handles(old_pop_time, h.ends_ms, h.acked)

    def on_ack(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offsets: list[int],
        pop_time: int,
        ck_key: str,
        ends_ms: int,
    ) -> tuple[list[int], list[int]]:
        """Mark ``offsets`` acked under the checkpoint ``ck_key``: (those acked now, those
        acked before with this same handle); the rest are refused by the caller."""
        fresh: list[int] = []
        repeated: list[int] = []
        with self._lock:
            queue = self._handles.setdefault((group, topic, queue_id), {})
            found = list(map(queue.get, offsets))
            first = found[0] if found else None
            if (
                first is not None
                and first.pop_time == pop_time
                and not first.acked
                and found.count(first) == len(found)  # one pop's shared entry (by identity)
            ):
                queue.update(dict.fromkeys(offsets, _Handles(pop_time, first.ends_ms, True)))
                self._acked.setdefault(ck_key, set()).update(offsets)
                return list(offsets), repeated
            acked: _Handles | None = None  # the acked form of the entries found
            for offset, h in zip(offsets, found, strict=True):
                if h is None:
                    queue[offset] = _Handles(pop_time, ends_ms, True)
                    heapq.heappush(self._ends, (ends_ms, group, topic, queue_id, (offset,)))
                elif h.pop_time != pop_time:
                    continue
                elif h.acked:
                    repeated.append(offset)
                    continue
                else:
                    if acked is None or acked.ends_ms != h.ends_ms:
                        acked = _Handles(h.pop_time, h.ends_ms, True)
                    queue[offset] = acked
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
            queue = self._handles.get((group, topic, queue_id), {})
            for offset in offsets:
                h = queue.get(offset)
                if h is not None and h.acked:
                    queue[offset] = h._replace(acked=False)
            self._acked.get(ck_key, set()).difference_update(offsets)

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
        ends, handles = self._ends, self._handles
        with self._lock:
            while ends and ends[0][0] < now_ms:
                _, group, topic, queue_id, offsets = heapq.heappop(ends)
                queue_key = (group, topic, queue_id)
                queue = handles.get(queue_key)
                if queue is None:
                    continue
                for offset in offsets:
                    h = queue.get(offset)
                    if h is not None and h.ends_ms < now_ms:
                        del queue[offset]
                if not queue:
                    del handles[queue_key]

    @property
    def live_count(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._handles.values())
