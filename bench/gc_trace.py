"""A ``gc.callbacks`` timer for the scale bench's server processes (``--gc-trace``).

``install(path)`` appends one line per collection of generation 2, and per collection of
another generation that took 1 ms or more, to ``path``: ``wall_start generation ms
collected``. The bench reads the files after each size and names the collections that fell
into the growth and into the timed creates. (Not ``gc.get_freeze_count()``: it walks the
frozen list, milliseconds at 100,000 topics.)
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIN_MS = 1.0


def install(path: str) -> None:
    out = open(path, "a", buffering=1)  # noqa: SIM115 -- kept for the process's life
    started: list[float] = [0.0, 0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0], started[1] = time.time(), time.perf_counter()
            return
        ms = (time.perf_counter() - started[1]) * 1000
        generation = int(info["generation"])
        if generation == 2 or ms >= MIN_MS:
            out.write(f"{started[0]:.6f} {generation} {ms:.3f} {info['collected']}\n")

    gc.callbacks.append(callback)


@dataclass(frozen=True)
class Collection:
    at: float  # wall clock, s
    generation: int
    ms: float
    collected: int

    @property
    def end(self) -> float:
        return self.at + self.ms / 1000


def read(path: Path) -> list[Collection]:
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4:
            found.append(Collection(float(parts[0]), int(parts[1]), float(parts[2]), int(parts[3])))
    return found


def summary(collections: list[Collection], start: float, end: float) -> str:
    """``full N (max ms), longest any ms`` of the collections that began in [start, end)."""
    inside = [c for c in collections if start <= c.at < end]
    full = [c.ms for c in inside if c.generation == 2]
    longest = max((c.ms for c in inside), default=0.0)
    return f"{len(full)} ({max(full, default=0.0):.1f}), {longest:.1f}"


def hits(collections: list[Collection], spans: list[tuple[float, float]]) -> int:
    """How many of ``spans`` (a create's wall start and end) overlap a collection."""
    return sum(1 for s, e in spans if any(c.at < e and c.end > s for c in collections))
