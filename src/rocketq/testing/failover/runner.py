"""The fault schedule: one fault every few seconds under SYNC load, each healed before the
next, then the checker over the stopped stores. Timings are printed, never asserted.

    python -m rocketq.testing.failover.runner --cycles 500 [--producers 8] [--gap 5] [--pace 0.05]

The producers are asyncio tasks in this process (each its own sequence of unique keys); the
pace bounds the ledger of a long run (8 producers at <= 20 sends/s each).

Outage per fault = for each producer, the time from the fault to its next SEND_OK from the
group (every producer sends only to this group); p50/p99 over producers x cycles.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.testing.failover.checker import Verdict, check
from rocketq.testing.failover.cluster import FAULTS, FaultCluster, inject
from rocketq.testing.failover.load import Ledger, Load, Route

HEAL_TIMEOUT_S = 60.0


@dataclass
class Report:
    cycles: int = 0
    faults: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    outages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stalls: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    zombie_acks: int = 0
    verdict: Verdict | None = None
    ledger: Ledger = field(default_factory=Ledger)
    confs: list[dict[str, str]] = field(default_factory=list)  # the stores left for a re-check
    master_port: str = ""
    failed_sends: int = 0
    wall_s: float = 0.0

    def lines(self) -> list[str]:
        out = [f"cycles {self.cycles} in {self.wall_s:.0f} s; faults {dict(self.faults)}"]
        for fault, values in sorted(self.outages.items()):
            out.append(
                f"  {fault:22s} outage p50 {pct(values, 50):5.2f} s  p99 {pct(values, 99):5.2f} s"
                f"  max {max(values, default=0):5.2f} s;  longest stall p99 "
                f"{pct(self.stalls[fault], 99):5.2f} s  (n={len(values)})"
            )
        v = self.verdict
        if v is not None:
            out.append(
                f"acked {v.acked}, lost {len(v.lost)}, consumed {v.consumed}, truncated "
                f"{len(v.truncated)}, duplicates {v.duplicates}, failed sends {self.failed_sends}"
            )
            out.append(
                f"epochs {len(v.epochs)}, acking masters per epoch "
                f"{max((len(m) for m in v.masters_per_epoch.values()), default=0)} at most, "
                f"replicas identical {v.replicas_identical}, epoch files equal "
                f"{v.epoch_files_equal}"
            )
            out += [f"VIOLATION {line}" for line in self.violations]
        return out

    @property
    def violations(self) -> list[str]:
        if self.verdict is None:
            return ["no verdict: the run did not finish"]
        zombie = [f"{self.zombie_acks} acks from a deposed, paused master"]
        return self.verdict.violations + (zombie if self.zombie_acks else [])


def pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


def longest_stalls(ledger: Ledger, producers: int, start: float, end: float) -> list[float]:
    """Per producer, the longest time between consecutive SEND_OKs within [start, end] (the
    stall a rolling restart causes after its signal, say)."""
    last = dict.fromkeys(range(producers), start)
    stall = dict.fromkeys(range(producers), 0.0)
    for ack in ledger.acks:
        if start < ack.at <= end:
            stall[ack.producer] = max(stall[ack.producer], ack.at - last[ack.producer])
            last[ack.producer] = ack.at
    return list(stall.values())


def outages_since(ledger: Ledger, producers: int, at: float) -> list[float]:
    """Per producer, the time from ``at`` to the SEND_OK of its first send made after it (an
    answer in flight at the fault is not the next SEND_OK)."""
    first: dict[int, float] = {}
    for ack in reversed(ledger.acks):
        if ack.at <= at:
            break
        if ack.sent_at > at:
            first[ack.producer] = ack.at
    return [first[p] - at for p in range(producers) if p in first]


async def run(
    root: Path,
    cycles: int,
    producers: int = 4,
    gap_s: float = 5.0,
    seed: int = 1,
    pace_s: float = 0.0,
) -> Report:
    rng = random.Random(seed)
    report = Report()
    cluster = FaultCluster(root)
    ledger = report.ledger
    started = time.monotonic()
    load: Load | None = None
    try:
        await cluster.start()
        view = await cluster.wait_healthy(HEAL_TIMEOUT_S)
        assert cluster.ctl is not None
        load = Load(Route(cluster.ctl, "broker-a"), ledger, producers, pace_s)
        load.start()
        schedule: list[str] = []
        for cycle in range(cycles):
            if not schedule:  # rounds of every kind, each round in a seeded order
                schedule = rng.sample(FAULTS, len(FAULTS))
            fault = schedule.pop()
            await asyncio.sleep(gap_s * rng.uniform(1.0, 2.0))  # the schedule's pacing
            done = await inject(cluster, fault, view.master_address, view.master_epoch)
            view = await cluster.wait_healthy(HEAL_TIMEOUT_S, view.master_epoch)
            await settle(ledger, producers, done.at)
            report.faults[fault] += 1
            report.outages[fault] += outages_since(ledger, producers, done.at)
            report.stalls[fault] += longest_stalls(ledger, producers, done.at, time.monotonic())
            report.zombie_acks += done.zombie_acks(ledger)
            report.cycles = cycle + 1
        await load.stop()
        load = None
        view = await cluster.wait_healthy(HEAL_TIMEOUT_S, view.master_epoch)
        await cluster.stop_brokers(view.master_address)
        report.failed_sends = ledger.failed_sends
        report.confs = cluster.confs
        report.master_port = view.master_address.rsplit(":", 1)[1]
        report.verdict = check(report.confs, report.master_port, ledger)
    finally:
        if load is not None:
            await load.stop()
        await cluster.close()
        report.wall_s = time.monotonic() - started
    return report


async def settle(ledger: Ledger, producers: int, at: float, timeout_s: float = 30.0) -> None:
    """Until every producer has had a SEND_OK after the fault (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ledger.new_ack.clear()
        if len(outages_since(ledger, producers, at)) == producers:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ledger.new_ack.wait(), deadline - time.monotonic())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.05, help="s between a producer's sends")
    parser.add_argument("--gap", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocketq-faults-") as tmp:
        report = asyncio.run(
            run(Path(tmp), args.cycles, args.producers, args.gap, args.seed, args.pace)
        )
    print("\n".join(report.lines()))
    if report.violations:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
