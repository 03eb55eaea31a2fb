"""StatsItem and StatsItemSet: a running count and sum with rolling snapshots (RocketMQ's
common.stats).

A ``StatsItem`` adds up ``value`` (messages or bytes) and ``times`` (calls). ``sample`` keeps a
snapshot of both every 10 s for the last minute, every 10 min for the last hour and every hour
for the last day; ``stats_in_minute`` / ``_hour`` / ``_day`` give the ``StatsSnapshot`` (sum,
tps, average per call) over that window. Deliberate difference: RocketMQ computes a window
from its snapshots only, so a counter is blind for the first 10 s; here the live value is the
window's last point, so a figure is there from the first message.

Sampling cost: the manager calls ``StatsItemSet.sample`` every second, and a set holds one
item per topic or ``topic@group``; an item keeps the time its next snapshot is due and a set
the earliest of its items', so a second with nothing due costs one comparison per set, and
an item not due one comparison (10,000 items took 35 ms of the loop every second when each
built a snapshot to compare; BENCHMARKS.md, issue 22).

Threading: every write (``add``, ``sample``) happens on the broker's event loop thread, so
there is no lock on the hot path; readers on other threads (the Prometheus collector) read
``value``/``times`` and copy the item table, which the GIL keeps consistent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

MINUTE_SAMPLE_MS = 10_000
HOUR_SAMPLE_MS = 600_000
DAY_SAMPLE_MS = 3_600_000
MINUTE_MS = 60_000
HOUR_MS = 3_600_000
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0
    times: int = 0


@dataclass(frozen=True, slots=True)
class CallSnapshot:
    timestamp_ms: int
    value: int
    times: int


class StatsItem:
    def __init__(self, stats_name: str, stats_key: str, now_ms: int) -> None:
        self.stats_name = stats_name
        self.stats_key = stats_key
        self.value = 0
        self.times = 0
        first = CallSnapshot(now_ms, 0, 0)
        self._minute: deque[CallSnapshot] = deque([first], maxlen=7)
        self._hour: deque[CallSnapshot] = deque([first], maxlen=7)
        self._day: deque[CallSnapshot] = deque([first], maxlen=25)
        self.next_due_ms = now_ms + MINUTE_SAMPLE_MS

    def add(self, inc_value: int, inc_times: int = 1) -> None:
        self.value += inc_value
        self.times += inc_times

    def sample(self, now_ms: int) -> None:
        """Take the snapshots that are due (called every second by the manager)."""
        if now_ms < self.next_due_ms:
            return
        now = CallSnapshot(now_ms, self.value, self.times)
        due = []
        for ring, period in (
            (self._minute, MINUTE_SAMPLE_MS),
            (self._hour, HOUR_SAMPLE_MS),
            (self._day, DAY_SAMPLE_MS),
        ):
            if now_ms - ring[-1].timestamp_ms >= period:
                ring.append(now)
            due.append(ring[-1].timestamp_ms + period)
        self.next_due_ms = min(due)

    def _stats(self, ring: deque[CallSnapshot], window_ms: int, now_ms: int) -> StatsSnapshot:
        last = CallSnapshot(now_ms, self.value, self.times)
        snapshots = tuple(ring)  # a copy: /metrics reads off the loop, which appends
        first = next((s for s in snapshots if now_ms - s.timestamp_ms <= window_ms), snapshots[-1])
        total = last.value - first.value
        times = last.times - first.times
        elapsed_ms = max(last.timestamp_ms - first.timestamp_ms, 1)
        return StatsSnapshot(
            sum=total,
            tps=total * 1000.0 / elapsed_ms,
            avgpt=total / times if times else 0.0,
            times=times,
        )

    def stats_in_minute(self, now_ms: int) -> StatsSnapshot:
        return self._stats(self._minute, MINUTE_MS, now_ms)

    def stats_in_hour(self, now_ms: int) -> StatsSnapshot:
        return self._stats(self._hour, HOUR_MS, now_ms)

    def stats_in_day(self, now_ms: int) -> StatsSnapshot:
        return self._stats(self._day, DAY_MS, now_ms)


class StatsItemSet:
    """The items of one statistic (e.g. TOPIC_PUT_NUMS), by key (a topic, ``topic@group``)."""

    def __init__(self, stats_name: str, clock_ms: Callable[[], int]) -> None:
        self.stats_name = stats_name
        self._clock_ms = clock_ms
        self._items: dict[str, StatsItem] = {}
        self._next_due_ms = 0  # the earliest next_due_ms of the items (0: none yet)

    def get_and_create(self, stats_key: str) -> StatsItem:
        item = self._items.get(stats_key)
        if item is None:
            item = self._items[stats_key] = StatsItem(self.stats_name, stats_key, self._clock_ms())
            if not self._next_due_ms or item.next_due_ms < self._next_due_ms:
                self._next_due_ms = item.next_due_ms
        return item

    def add_value(self, stats_key: str, inc_value: int, inc_times: int = 1) -> None:
        item = self._items.get(stats_key) or self.get_and_create(stats_key)
        item.value += inc_value
        item.times += inc_times

    def get(self, stats_key: str) -> StatsItem | None:
        return self._items.get(stats_key)

    def items(self) -> list[StatsItem]:
        return list(self._items.values())

    def sample(self, now_ms: int) -> None:
        if not self._next_due_ms or now_ms < self._next_due_ms:
            return
        due = 0
        for item in self.items():
            if now_ms >= item.next_due_ms:
                item.sample(now_ms)
            if not due or item.next_due_ms < due:
                due = item.next_due_ms
        self._next_due_ms = due

    def remove(self, stats_key: str) -> None:
        self._items.pop(stats_key, None)

    def remove_by_prefix(self, prefix: str) -> None:
        for key in [k for k in list(self._items) if k.startswith(prefix)]:
            del self._items[key]
