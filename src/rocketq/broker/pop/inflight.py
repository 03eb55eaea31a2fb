"""PopInflightTable: which handle of a popped message is live, and which offsets are acked.

RocketMQ 5's broker keeps no per-message state: an ack is a record in the revive topic, and
the revive service matches it to its checkpoint when the checkpoint is due. rocketq keeps the
same records (so a restarted broker rebuilds the same answer from the revive topic) and, beside
them, this in-memory table for the broker's lifetime:

* ``live``: (group, real topic, queue, offset) -> the popTime of the message's current handle.
  A pop or a change of invisible time sets it; an ack clears it. An ack or a change with a
  handle whose popTime is not the live one (a handle a change replaced) is refused, so one
  message never has two live handles. A message the table does not know (popped before a
  restart) is judged by its handle's own invisible time.
* ``acked``: checkpoint merge key -> acked queue offsets, consulted by the revive service
  before the ack records come back from the timer (so an acked message is never revived).
"""

from __future__ import annotations

import threading

Key = tuple[str, str, int, int]  # (group, real topic, queue id, queue offset)


class PopInflightTable:
    def __init__(self) -> None:
        self._live: dict[Key, int] = {}
        self._acked: dict[str, set[int]] = {}
        self._lock = threading.Lock()

    def on_pop(
        self, group: str, topic: str, queue_id: int, offsets: list[int], pop_time: int
    ) -> None:
        with self._lock:
            for offset in offsets:
                self._live[(group, topic, queue_id, offset)] = pop_time

    def is_superseded(
        self, group: str, topic: str, queue_id: int, offset: int, pop_time: int
    ) -> bool:
        """True when another handle of this message is the live one (or it was acked)."""
        with self._lock:
            live = self._live.get((group, topic, queue_id, offset))
        return live is not None and live != pop_time

    def replace(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        old_pop_time: int,
        new_pop_time: int,
    ) -> bool:
        """A change of invisible time: the new handle becomes the live one, unless the old one
        was replaced meanwhile (False)."""
        key = (group, topic, queue_id, offset)
        with self._lock:
            live = self._live.get(key)
            if live is not None and live != old_pop_time:
                return False
            self._live[key] = new_pop_time
            return True

    def on_ack(
        self, group: str, topic: str, queue_id: int, offsets: list[int], pop_time: int, ck_key: str
    ) -> list[int]:
        """Mark ``offsets`` acked under the checkpoint ``ck_key``; returns those whose handle
        (``pop_time``) was still live or unknown (the others are refused by the caller)."""
        accepted: list[int] = []
        with self._lock:
            for offset in offsets:
                key = (group, topic, queue_id, offset)
                live = self._live.get(key)
                if live is not None and live != pop_time:
                    continue
                self._live.pop(key, None)
                accepted.append(offset)
            if accepted:
                self._acked.setdefault(ck_key, set()).update(accepted)
        return accepted

    def mark_acked(self, ck_key: str, offset: int) -> None:
        """An offset acked on behalf of a change of invisible time (its old checkpoint)."""
        with self._lock:
            self._acked.setdefault(ck_key, set()).add(offset)

    def acked_offsets(self, ck_key: str) -> set[int]:
        with self._lock:
            return set(self._acked.get(ck_key, ()))

    def forget_checkpoint(
        self, ck_key: str, group: str, topic: str, queue_id: int, offsets: list[int], pop_time: int
    ) -> None:
        """The revive service is done with a checkpoint: drop its acks and the handles it made
        (a handle that a change replaced since stays)."""
        with self._lock:
            self._acked.pop(ck_key, None)
            for offset in offsets:
                key = (group, topic, queue_id, offset)
                if self._live.get(key) == pop_time:
                    del self._live[key]

    @property
    def live_count(self) -> int:
        with self._lock:
            return len(self._live)
