"""RebalanceLockManager: which client of a group holds each message queue (orderly consuming).

A lock lives ``rebalance_lock_max_live_time_ms`` (60 s) unless its holder renews it with
another LOCK_BATCH_MQ; an expired lock can be taken by any client of the group.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from rocketq.common.clock import now_ms

MQ = TypeVar("MQ", bound=Hashable)


@dataclass(slots=True)
class LockEntry:
    client_id: str
    last_update_timestamp_ms: int


class RebalanceLockManager:
    def __init__(
        self, *, lock_max_live_time_ms: int = 60_000, clock: Callable[[], int] = now_ms
    ) -> None:
        self._max_live_ms = lock_max_live_time_ms
        self._clock = clock
        self._table: dict[str, dict[Hashable, LockEntry]] = {}
        self._lock = threading.Lock()

    def _is_locked(self, entry: LockEntry | None, client_id: str, now: int) -> bool:
        return (
            entry is not None
            and entry.client_id == client_id
            and now - entry.last_update_timestamp_ms <= self._max_live_ms
        )

    def try_lock_batch(self, group: str, mqs: Iterable[MQ], client_id: str) -> set[MQ]:
        """Lock (or renew) every queue that is free, expired or already ours; return those."""
        now = self._clock()
        locked: set[MQ] = set()
        with self._lock:
            table = self._table.setdefault(group, {})
            for mq in mqs:
                entry = table.get(mq)
                expired = entry is None or now - entry.last_update_timestamp_ms > self._max_live_ms
                if expired or (entry is not None and entry.client_id == client_id):
                    table[mq] = LockEntry(client_id, now)
                    locked.add(mq)
        return locked

    def unlock_batch(self, group: str, mqs: Iterable[Hashable], client_id: str) -> None:
        with self._lock:
            table = self._table.get(group, {})
            for mq in mqs:
                entry = table.get(mq)
                if entry is not None and entry.client_id == client_id:
                    del table[mq]

    def is_locked(self, group: str, mq: Hashable, client_id: str) -> bool:
        with self._lock:
            entry = self._table.get(group, {}).get(mq)
            return self._is_locked(entry, client_id, self._clock())
