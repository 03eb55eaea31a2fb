"""Series: the recent points of a figure the dashboard charts (a topic's TPS, a group's lag per
queue), kept in memory while someone watches. Each API poll adds a point, so nothing runs in
the background and an unwatched topic costs nothing."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

MAX_POINTS = 240


@dataclass
class Series:
    """(time s, {label: value}) points, oldest first, at most ``MAX_POINTS``."""

    points: deque[tuple[float, dict[str, float]]] = field(
        default_factory=lambda: deque(maxlen=MAX_POINTS)
    )

    def add(self, values: dict[str, float], now_s: float | None = None) -> None:
        self.points.append((time.time() if now_s is None else now_s, dict(values)))

    def to_json(self) -> dict[str, object]:
        labels = sorted({k for _, values in self.points for k in values})
        return {
            "times": [int(t * 1000) for t, _ in self.points],
            "series": {k: [values.get(k) for _, values in self.points] for k in labels},
        }


class History:
    """Series by name (``tps:<topic>``, ``lag:<group>``), plus the last totals a rate needs."""

    def __init__(self) -> None:
        self._series: dict[str, Series] = {}
        self._last: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def series(self, name: str) -> Series:
        with self._lock:
            return self._series.setdefault(name, Series())

    def rate(self, name: str, total: float, now_s: float | None = None) -> float | None:
        """Per-second change of ``total`` since the last call for ``name`` (None the first)."""
        now = time.monotonic() if now_s is None else now_s
        with self._lock:
            last = self._last.get(name)
            self._last[name] = (now, total)
        if last is None or now <= last[0]:
            return None
        return max(0.0, (total - last[1]) / (now - last[0]))
