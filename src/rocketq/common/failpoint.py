"""Failpoints: named places where a crash test kills the process on purpose.

A test that must crash a writer at one exact step (inside a file's creation, say) cannot rely
on the timing of an outside SIGKILL. It starts the writer with ``ROCKETQ_FAILPOINTS`` naming
the points (comma-separated); ``hit(name)`` at such a point sends the process SIGKILL, which
is what an outside kill -9 does, only at a known place. ``name@N`` fires at the N-th hit.
Unset, ``hit`` is a set lookup. The idea is etcd's gofail and TiKV's fail-rs.
"""

from __future__ import annotations

import os
import signal
import threading

ENV = "ROCKETQ_FAILPOINTS"


def _parse(spec: str) -> dict[str, int]:
    points: dict[str, int] = {}
    for item in spec.split(","):
        name, _, nth = item.strip().partition("@")
        if name:
            points[name] = int(nth) if nth else 1
    return points


_ARMED = _parse(os.environ.get(ENV, ""))
_hits: dict[str, int] = {}
_lock = threading.Lock()


def hit(name: str) -> None:
    """SIGKILL this process if the failpoint ``name`` is armed and this is its firing hit."""
    if name not in _ARMED:
        return
    with _lock:
        _hits[name] = _hits.get(name, 0) + 1
        fire = _hits[name] == _ARMED[name]
    if fire:
        os.kill(os.getpid(), signal.SIGKILL)
