"""ConsumerStatsManager: a client's pull and consume rates per group and topic, as a
consumer's running info reports them (``statusTable`` of GET_CONSUMER_RUNNING_INFO).

Theory of operation: every pull and every listener call adds one sample (time, value) to a
window per (group, topic) and kind; rates are the sum of the last minute's samples divided by
the time they span (at least one second, at most a minute); round-trip times are their mean.
Failed messages are also counted over the last hour (``consumeFailedMsgs``). Used from one
event loop; bounded by the window, not by traffic (samples older than the window go).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from rocketq.remoting.protocol.consumer_bodies import ConsumeStatus

MINUTE_S = 60.0
HOUR_S = 3600.0


class _Window:
    def __init__(self, span_s: float) -> None:
        self.span_s = span_s
        self.samples: deque[tuple[float, float]] = deque()

    def add(self, now: float, value: float) -> None:
        self.samples.append((now, value))
        self.prune(now)

    def prune(self, now: float) -> None:
        while self.samples and self.samples[0][0] < now - self.span_s:
            self.samples.popleft()

    def total(self, now: float) -> float:
        self.prune(now)
        return sum(v for _, v in self.samples)

    def rate(self, now: float) -> float:
        self.prune(now)
        if not self.samples:
            return 0.0
        elapsed = min(self.span_s, max(1.0, now - self.samples[0][0]))
        return sum(v for _, v in self.samples) / elapsed

    def mean(self, now: float) -> float:
        self.prune(now)
        if not self.samples:
            return 0.0
        return sum(v for _, v in self.samples) / len(self.samples)


class ConsumerStatsManager:
    KINDS = ("pull_rt", "pull_tps", "consume_rt", "consume_ok", "consume_failed")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: dict[tuple[str, str, str], _Window] = {}
        self._failed_hour: dict[tuple[str, str], _Window] = {}

    def _window(self, kind: str, group: str, topic: str) -> _Window:
        key = (kind, group, topic)
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = _Window(MINUTE_S)
        return window

    def inc_pull(self, group: str, topic: str, rt_ms: float, msgs: int) -> None:
        now = self._clock()
        self._window("pull_rt", group, topic).add(now, rt_ms)
        self._window("pull_tps", group, topic).add(now, msgs)

    def inc_consume(self, group: str, topic: str, rt_ms: float, ok: int, failed: int) -> None:
        now = self._clock()
        self._window("consume_rt", group, topic).add(now, rt_ms)
        self._window("consume_ok", group, topic).add(now, ok)
        self._window("consume_failed", group, topic).add(now, failed)
        if failed:
            hour = self._failed_hour.setdefault((group, topic), _Window(HOUR_S))
            hour.add(now, failed)

    def consume_status(self, group: str, topic: str) -> ConsumeStatus:
        """ConsumerStatsManager.consumeStatus: the last minute's rates of ``group`` on ``topic``."""
        now = self._clock()
        hour = self._failed_hour.get((group, topic))
        return ConsumeStatus(
            pull_rt=self._window("pull_rt", group, topic).mean(now),
            pull_tps=self._window("pull_tps", group, topic).rate(now),
            consume_rt=self._window("consume_rt", group, topic).mean(now),
            consume_ok_tps=self._window("consume_ok", group, topic).rate(now),
            consume_failed_tps=self._window("consume_failed", group, topic).rate(now),
            consume_failed_msgs=int(hour.total(now)) if hour is not None else 0,
        )
