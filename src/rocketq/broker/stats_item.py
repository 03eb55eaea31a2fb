"""StatsItem and StatsItemSet: a running count and sum with rolling snapshots (RocketMQ's
common.stats).

A ``StatsItem`` adds up ``value`` (messages or bytes) and ``times`` (calls). ``sample`` keeps a
snapshot of both every 10 s for the last minute, every 10 min for the last hour and every hour
for the last day; ``stats_in_minute`` / ``_hour`` / ``_day`` give the ``StatsSnapshot`` (sum,
tps, average per call) over that window. Deliberate difference: RocketMQ computes a window
from its snapshots only, so a counter is blind for the first 10 s; here the live value is the
window's last point, so a figure is there from the first message.

Sampling cost: the manager calls ``StatsItemSet.sample`` every second, and a set holds one
item per topic or ``topic@group``. Each call visits one slice of the items (every
``SAMPLE_SLICES``-th, a different slice each call), so an item is visited every ~10 s, and an
item keeps the time its next snapshot is due, so a visit with nothing due is one comparison.
10,000 items took 35 ms of the loop every second when each built a snapshot to compare, and
19 ms every 10 s when all came due in one call (BENCHMARKS.md, issue 22); now a second costs
a tenth of the items' comparisons and snapshots. A snapshot is taken at the first visit on
or after its due time (a minute snapshot 10-20 s after an item's creation, then every ~10 s);
the windows divide by the snapshots' own times, so the figures are unchanged.

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
SAMPLE_SLICES = MINUTE_SAMPLE_MS // 1000  # the manager samples every second


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
        self._slice = 0  # the slice of the items the next sample visits

    def get_and_create(self, stats_key: str) -> StatsItem:
        item = self._items.get(stats_key)
        if item is None:
            item = self._items[stats_key] = StatsItem(self.stats_name, stats_key, self._clock_ms())
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
        """One slice of the items takes its due snapshots (called every second)."""
        for item in self.items()[self._slice :: SAMPLE_SLICES]:
            if now_ms >= item.next_due_ms:
                item.sample(now_ms)
        self._slice = (self._slice + 1) % SAMPLE_SLICES

    def remove(self, stats_key: str) -> None:
        self._items.pop(stats_key, None)

    def remove_by_prefix(self, prefix: str) -> None:
        for key in [k for k in list(self._items) if k.startswith(prefix)]:
            del self._items[key]
