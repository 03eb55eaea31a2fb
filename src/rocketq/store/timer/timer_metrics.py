"""TimerMetrics: the timer's counts by real topic (TimerMetrics.java and the counters of
DefaultStoreMetricsManager), read by the broker's metrics collector at scrape time.

``timing_count`` (pending timers, ``rocketmq_timing_messages``) is persisted in
``config/timermetrics`` as ``{"timingCount": {topic: {"count": n, "timeStamp": ms}}}`` at each
timer flush, as RocketMQ does (here only when a count changed: an idle timer writes and renames
no file a second); the enqueue and dequeue totals count from the process's start.
The enqueue and dequeue threads both count, under one lock.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter

log = logging.getLogger(__name__)


class TimerMetrics:
    def __init__(self, path: str) -> None:
        self.path = path
        self.timing_count: Counter[str] = Counter()
        self.enqueue_total: Counter[str] = Counter()  # rocketmq_timer_enqueue_total
        self.dequeue_total: Counter[str] = Counter()  # rocketmq_timer_dequeue_total
        self._lock = threading.Lock()
        self._persisted: list[tuple[str, int]] | None = None  # the counts last written

    def add_timing(self, topic: str, value: int) -> None:
        with self._lock:
            self.timing_count[topic] += value
            if self.timing_count[topic] <= 0:
                del self.timing_count[topic]

    def count_enqueue(self, topic: str) -> None:
        with self._lock:
            self.enqueue_total[topic] += 1

    def count_dequeue(self, topic: str) -> None:
        with self._lock:
            self.dequeue_total[topic] += 1

    def load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                table = json.load(f).get("timingCount", {})
        except FileNotFoundError:
            return
        except (OSError, ValueError, AttributeError):
            log.warning("timer: unreadable %s, timing counts start from zero", self.path)
            return
        for topic, metric in table.items():
            count = int(metric.get("count", 0)) if isinstance(metric, dict) else 0
            if count > 0:
                self.timing_count[topic] = count

    def persist(self, now_ms: int) -> None:
        with self._lock:
            counts = sorted(self.timing_count.items())
        if counts == self._persisted:
            return  # unchanged: an idle timer writes no file a flush
        table = {t: {"count": c, "timeStamp": now_ms} for t, c in counts}
        data = json.dumps({"timingCount": table}, separators=(",", ":"))
        tmp = self.path + ".tmp"
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, self.path)
        self._persisted = counts
