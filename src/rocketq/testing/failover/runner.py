"""The fault schedule: one fault every few seconds under SYNC load, each healed before the
next, then the checker over the stopped stores. Timings are printed, never asserted.

    python -m rocketq.testing.failover.runner --cycles 500 [--producers 8] [--gap 5]

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
from rocketq.testing.failover.cluster import FaultCluster
from rocketq.testing.failover.load import Ledger, Load, Route

FAULTS = ("kill_master", "stop_master", "kill_slave", "stop_slave", "restart_master")
PAUSE_S = 4.0  # a SIGSTOP lasts this long (longer than the controller's heartbeat timeout)
DOWN_S = 2.0  # a killed broker stays down this long before its restart
HEAL_TIMEOUT_S = 60.0


@dataclass
class Report:
    cycles: int = 0
    faults: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    outages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    verdict: Verdict | None = None
    failed_sends: int = 0
    wall_s: float = 0.0

    def lines(self) -> list[str]:
        out = [f"cycles {self.cycles} in {self.wall_s:.0f} s; faults {dict(self.faults)}"]
        for fault, values in sorted(self.outages.items()):
            out.append(
                f"  {fault:15s} outage p50 {pct(values, 50):5.2f} s  p99 {pct(values, 99):5.2f} s"
                f"  max {max(values):5.2f} s  (n={len(values)})"
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
            out += [f"VIOLATION {line}" for line in v.violations]
        return out


def pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


def outages_since(ledger: Ledger, producers: int, at: float) -> list[float]:
    """Per producer, the time from ``at`` to its first SEND_OK after it."""
    first: dict[int, float] = {}
    for ack in reversed(ledger.acks):
        if ack.at <= at:
            break
        first[ack.producer] = ack.at
    return [first[p] - at for p in range(producers) if p in first]


async def run(
    root: Path, cycles: int, producers: int = 4, gap_s: float = 5.0, seed: int = 1
) -> Report:
    rng = random.Random(seed)
    report = Report()
    cluster = FaultCluster(root)
    ledger = Ledger()
    started = time.monotonic()
    load: Load | None = None
    try:
        await cluster.start()
        view = await cluster.wait_healthy(HEAL_TIMEOUT_S)
        assert cluster.ctl is not None
        load = Load(Route(cluster.ctl, "broker-a"), ledger, producers)
        load.start()
        for cycle in range(cycles):
            fault = FAULTS[cycle % len(FAULTS)] if cycle < len(FAULTS) else rng.choice(FAULTS)
            await asyncio.sleep(gap_s * rng.uniform(1.0, 2.0))  # the schedule's pacing
            at = await inject(cluster, fault, view.master_address)
            view = await cluster.wait_healthy(HEAL_TIMEOUT_S, view.master_epoch)
            await settle(ledger, producers, at)
            report.faults[fault] += 1
            report.outages[fault] += outages_since(ledger, producers, at)
            report.cycles = cycle + 1
        await load.stop()
        load = None
        view = await cluster.wait_healthy(HEAL_TIMEOUT_S, view.master_epoch)
        await cluster.stop_brokers()
        report.failed_sends = ledger.failed_sends
        report.verdict = check(cluster.confs, view.master_address.rsplit(":", 1)[1], ledger)
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


async def inject(cluster: FaultCluster, fault: str, master_addr: str) -> float:
    """Apply ``fault`` and heal it; the monotonic time the fault began."""
    master = cluster.broker_at(master_addr)
    slave = next(b for b in cluster.brokers if b.addr != master_addr)
    target = master if fault.endswith("master") else slave
    at = time.monotonic()
    if fault.startswith("kill"):
        target.kill()
        await asyncio.sleep(DOWN_S)  # the schedule: down for a while, then restarted
        await cluster.restart(target)
    elif fault.startswith("stop"):
        cluster.pause(target)
        await asyncio.sleep(PAUSE_S)  # the schedule: a zombie for a few seconds
        cluster.resume(target)
    else:  # a rolling restart: the master, cleanly (SIGTERM), then back as a slave
        await asyncio.to_thread(target.stop)
        await cluster.restart(target)
    return at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--gap", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocketq-faults-") as tmp:
        report = asyncio.run(run(Path(tmp), args.cycles, args.producers, args.gap, args.seed))
    print("\n".join(report.lines()))
    if report.verdict is None or report.verdict.violations:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
