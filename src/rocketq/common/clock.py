"""The wall clock in RocketMQ's unit: milliseconds since the epoch (``System.currentTimeMillis``).

Components that tests drive through time take a ``Clock`` argument defaulting to ``now_ms``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]


def now_ms() -> int:
    return time.time_ns() // 1_000_000
