"""What every phase of bench/broker_bench.py measures, and the shared load loop."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

QUEUES = 4
BATCH = 32
TIMEOUT_S = 30.0
LATENCY_IN_FLIGHT = 32  # sends of the paced phase waiting for their reply, at most


@dataclass(frozen=True)
class Plan:
    size: int
    senders: tuple[int, ...]
    per_sender: int
    max_sync: int
    backlog: int
    cap_s: float
    latency_rate: int = 1_000
    latency_count: int = 5_000

    def sync_count(self, senders: int) -> int:
        return min(self.max_sync, self.per_sender * senders)


@dataclass
class Figures:
    """One phase of one system: messages, wall time, request RTs, server CPU and RSS."""

    system: str
    phase: str
    messages: int = 0
    seconds: float = 0.0
    rts_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    rss_mb: float = 0.0
    sent_s: list[float] = field(default_factory=list)  # latency: each RT's send time

    @property
    def tps(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0

    def row(self) -> dict[str, Any]:
        rts = sorted(self.rts_ms) or [0.0]
        return {
            "system": self.system,
            "phase": self.phase,
            "messages": self.messages,
            "tps": round(self.tps),
            "rt_avg_ms": round(statistics.fmean(rts), 3),
            "rt_p50_ms": round(rts[len(rts) // 2], 3),
            "rt_p99_ms": round(rts[min(len(rts) - 1, int(len(rts) * 0.99))], 3),
            "rt_max_ms": round(rts[-1], 3),
            "cpu_us_per_msg": round(self.cpu_s * 1e6 / self.messages, 1) if self.messages else 0,
            "rss_mb": round(self.rss_mb, 1),
        }


class Probe:
    """Server CPU seconds between ``start`` and ``stop`` (a callable reading /proc)."""

    def __init__(self, cpu_s: Callable[[], float]) -> None:
        self.cpu_s = cpu_s
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = self.cpu_s()

    def stop(self, figures: Figures) -> None:
        figures.cpu_s = self.cpu_s() - self._t0


async def run_senders(
    figures: Figures, senders: int, total: int, per_call: int, cap_s: float,
    call: Callable[[int, int], Awaitable[None]], probe: Probe,
) -> None:  # fmt: skip
    """``senders`` loops calling ``call(sender, seq)`` until ``total`` messages or ``cap_s``."""
    counter = iter(range(0, total, per_call))
    probe.start()
    start = time.perf_counter()
    deadline = start + cap_s

    async def loop(sender: int) -> None:
        for seq in counter:
            if time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            await call(sender, seq)
            figures.rts_ms.append((time.perf_counter() - t0) * 1000)
            figures.messages += per_call

    await asyncio.gather(*(loop(i) for i in range(senders)))
    figures.seconds = time.perf_counter() - start
    probe.stop(figures)


async def paced(
    figures: Figures, plan: Plan, send: Callable[[int, float], Awaitable[None]],
    received: Callable[[], int],
) -> None:  # fmt: skip
    """Send ``plan.latency_count`` messages at ``plan.latency_rate`` a second, then wait
    (bounded) until the consumer has them all. ``send(seq, t_sent)`` sends one message
    carrying ``t_sent``; the consumer appends send-to-receive times to ``rts_ms``. Each send
    is its own task, so a system whose send waits longer than the interval (RabbitMQ's
    confirms) still gets the paced rate, not one send per reply (up to
    LATENCY_IN_FLIGHT sends wait at once). The load generator's heap as set up (every
    system's client and the modules of all of them) is frozen for the phase: a full
    collection of it fell inside the phase and cost 14-16 ms of CPU (issue 22), whichever
    system was measured."""
    gc.collect()
    gc.freeze()
    try:
        await _paced(figures, plan, send, received)
    finally:
        gc.unfreeze()


async def _paced(
    figures: Figures, plan: Plan, send: Callable[[int, float], Awaitable[None]],
    received: Callable[[], int],
) -> None:  # fmt: skip
    interval = 1.0 / plan.latency_rate
    start = time.perf_counter()
    in_flight = asyncio.Semaphore(LATENCY_IN_FLIGHT)
    sending: list[asyncio.Future[None]] = []

    async def send_one(seq: int) -> None:
        async with in_flight:
            await send(seq, time.perf_counter())

    for seq in range(plan.latency_count):
        delay = start + seq * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sending.append(asyncio.ensure_future(send_one(seq)))
    await asyncio.gather(*sending)
    deadline = time.perf_counter() + TIMEOUT_S
    while received() < plan.latency_count and time.perf_counter() < deadline:  # noqa: ASYNC110 -- bounded wait for the last receipts
        await asyncio.sleep(0.05)
    figures.seconds = time.perf_counter() - start
    figures.messages = received()
