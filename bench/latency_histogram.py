"""Where the slow messages of a latency phase fall (bench/broker_bench.py ``--only latency``).

Every system's consumer records, per message, its send time and its send-to-receive time
(``peer_load.record_latency``). Printed per latency row:

- the RT histogram in buckets of 0.25, 0.5, 1, 2, 5, 10 ms and beyond;
- the slow messages (RT above ``SLOW_MS``): how many were sent in the first 100 ms of the
  phase (a warm-up: connections, first pulls, a collection of the set-up's garbage), their
  count per second of the run, and how strongly their send times lock onto a period
  (``R``: the length of the mean of exp(2 pi i t / period) over them, 0 for times spread
  evenly over the period, 1 for all at one phase). A periodic job that stalls a process
  once a second (a flush holding the GIL, a stats sample) shows as a high ``R`` at 1 s, a
  garbage collection as a few clumps of consecutive slow messages. Only periods of at most
  a third of the phase are tried (a shorter run locks onto any long period).
"""

from __future__ import annotations

import cmath
import math

from figures import Figures

BUCKETS_MS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
SLOW_MS = 1.0
PERIODS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
WARM_UP_S = 0.1


def bucket_counts(rts_ms: list[float]) -> list[int]:
    """Counts per bucket of ``BUCKETS_MS``, the last one for everything above it."""
    counts = [0] * (len(BUCKETS_MS) + 1)
    for rt in rts_ms:
        counts[next((i for i, b in enumerate(BUCKETS_MS) if rt <= b), len(BUCKETS_MS))] += 1
    return counts


def lock_on(times_s: list[float], period_s: float) -> float:
    """Rayleigh's R of ``times_s`` modulo ``period_s`` (0: spread, 1: one phase)."""
    if not times_s:
        return 0.0
    mean = sum(cmath.exp(2j * math.pi * t / period_s) for t in times_s) / len(times_s)
    return abs(mean)


def describe(fig: Figures) -> list[str]:
    """The histogram lines of one latency row (nothing when sends were not recorded)."""
    if not fig.sent_s or len(fig.sent_s) != len(fig.rts_ms):
        return []
    start = min(fig.sent_s)
    labels = [f"<={b:g}" for b in BUCKETS_MS] + [f">{BUCKETS_MS[-1]:g}"]
    counts = bucket_counts(fig.rts_ms)
    lines = [
        f"{fig.system} latency RT histogram (ms): "
        + " ".join(f"{label}:{n}" for label, n in zip(labels, counts, strict=True))
    ]
    slow = [t - start for t, rt in zip(fig.sent_s, fig.rts_ms, strict=True) if rt > SLOW_MS]
    if not slow:
        return lines
    per_second = [0] * (int(max(slow)) + 1)
    for t in slow:
        per_second[int(t)] += 1
    warm = sum(1 for t in slow if t < WARM_UP_S)
    span = max(fig.sent_s) - start
    locks = ", ".join(f"{p:g}s {lock_on(slow, p):.2f}" for p in PERIODS_S if p * 3 <= span)
    lines.append(
        f"  {len(slow)} above {SLOW_MS:g} ms, {warm} sent in the first {WARM_UP_S * 1000:.0f} ms;"
        f" per second: {' '.join(map(str, per_second[:30]))}"
    )
    lines.append(f"  lock-on R by period: {locks}")
    return lines


def print_histograms(rows: list[Figures]) -> None:
    for fig in rows:
        if fig.phase == "latency":
            for line in describe(fig):
                print(line)
