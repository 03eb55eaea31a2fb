"""The fault schedule: one fault every few seconds under SYNC load, each healed before the
next, then the checker over the stopped stores. Timings are printed, never asserted.

    python -m rocketq.testing.failover.runner --cycles 500 [--producers 8] [--gap 5]
        [--pace 0.05] [--profile issue|fast] [--pop-timers] [--faults kill_master,...]

The producers are OS processes (:mod:`.producer`), half sending to each group, each writing
its ledger file (the checker's input); the pace bounds the ledger of a long run (8 producers
at <= 20 sends/s each). The profile is issue 20's controller profile unless ``fast``.

Outage per fault = for each producer of the faulted group, the time from the fault to the
SEND_OK of its first send made after it; p50/p99 over producers x cycles.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import random
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import ReplicaView
from rocketq.testing.failover.checker import Verdict, check
from rocketq.testing.failover.cluster import ISSUE_PROFILE, PROFILES, FaultCluster, Profile
from rocketq.testing.failover.faults import CLIENT_FAULTS, FAULTS, inject
from rocketq.testing.failover.load import Ack, Ledger, Load, Route, read_ledgers
from rocketq.testing.failover.pop_timer import (
    PopTimerLedger,
    PopTimerLoad,
    TimerVerdict,
    check_timers,
    pop_records_of,
)
from rocketq.testing.failover.reconsume import ReConsumed
from rocketq.testing.failover.schedule import steps

HEAL_TIMEOUT_S = 60.0
TIMER_SLACK_S = 5.0  # after the last timer's due time, before the stores are stopped


@dataclass
class Report:
    cycles: int = 0
    profile: str = ""
    faults: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    outages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stalls: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    zombie_acks: int = 0  # by the checker, against the final epoch file (checker.zombie_acks)
    #: by each fault's cycle as it ends (faults.Fault.zombie_acks): printed, not a verdict; an
    #: old master elected again within the cycle counts there
    suspected_zombie_acks: int = 0
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # per group
    ledger: Ledger = field(default_factory=Ledger)
    confs: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # for a re-check
    master_ports: dict[str, str] = field(default_factory=dict)
    failed_sends: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    pop_timer: PopTimerLedger | None = None  # None: run without the POP group and timers
    timer_verdicts: dict[str, TimerVerdict] = field(default_factory=dict)
    windows: list[tuple[str, float]] = field(default_factory=list)  # (fault (group), at)
    wall_s: float = 0.0

    def lines(self) -> list[str]:
        out = [
            f"cycles {self.cycles} in {self.wall_s:.0f} s (profile {self.profile}); "
            f"faults {dict(self.faults)}"
        ]
        for fault, values in sorted(self.outages.items()):
            out.append(
                f"  {fault:44s} outage p50 {pct(values, 50):5.2f} s  p99 {pct(values, 99):5.2f} s"
                f"  max {max(values, default=0):5.2f} s;  longest stall p99 "
                f"{pct(self.stalls[fault], 99):5.2f} s; failed sends {self.failed_sends[fault]}"
                f"  (n={len(values)})"
            )
        out.append(
            f"zombie acks {self.zombie_acks} (suspected as the faults ended "
            f"{self.suspected_zombie_acks})"
        )
        out += self.reconsumed_lines()
        for group, v in self.verdicts.items():
            out.append(
                f"{group}: acked {v.acked}, lost {len(v.lost)}, consumed {v.consumed}, "
                f"truncated {len(v.truncated)}, duplicates {v.duplicates}, epochs "
                f"{len(v.epochs)}, acking masters per epoch "
                f"{max((len(m) for m in v.masters_per_epoch.values()), default=0)} at most, "
                f"replicas identical {v.replicas_identical}, epoch files equal "
                f"{v.epoch_files_equal}"
            )
        pt = self.pop_timer
        if pt is not None:
            out.append(
                f"POP: popped {pt.popped}, acknowledged {sum(map(len, pt.acked.values()))}, "
                f"acknowledged then popped again {len(pt.came_back)}, late acks "
                f"{pt.late_acks}; timers "
                + ", ".join(
                    f"{g}: {v.timers} sent, {len(v.missing)} never fired, {len(v.twice)} twice, "
                    f"{len(v.early)} early"
                    for g, v in self.timer_verdicts.items()
                )
            )
            blame = self.pop_timer_blame()
            if blame:
                out.append(f"POP/timer failures by the fault before them: {blame}")
            for group, tv in self.timer_verdicts.items():
                out += [f"  {group} timer {line}" for line in tv.twice_detail[:10]]
        out += [f"VIOLATION {line}" for line in self.violations]
        return out

    def reconsumed_lines(self) -> list[str]:
        """Messages the consumer groups consumed again after taking a new master's offsets,
        per fault before the rewind: how many, and the seconds of consumption replayed
        (reconsume.py: waits on a broker left out; the wall span beside it), with each rewind
        over 1 s in detail."""
        by_fault: dict[str, list[ReConsumed]] = defaultdict(list)
        for r in self.ledger.reconsumed:
            by_fault[self.fault_before(r.group, r.at)].append(r)
        total = sum(r.count for r in self.ledger.reconsumed)
        out = [f"re-consumed after a change of master: {total} messages"]
        for fault, rewinds in sorted(by_fault.items()):
            replay = [r.replay_s for r in rewinds]
            out.append(
                f"  after {fault:38s} {sum(r.count for r in rewinds):6d} messages in "
                f"{len(rewinds)} queue rewinds; replayed p50 {pct(replay, 50):.2f} s, "
                f"max {max(replay):.2f} s (wall max {max(r.wall_s for r in rewinds):.2f} s)"
            )
            out += [f"    {r.detail()}" for r in rewinds if max(r.replay_s, r.wall_s) > 1.0]
        return out

    def fault_before(self, group: str, at: float) -> str:
        """The last fault on ``group`` that began at or before ``at`` ("start" if none)."""
        kinds = [k for k, began in self.windows if began <= at and k.endswith(f"({group})")]
        return kinds[-1] if kinds else "start"

    def pop_timer_blame(self) -> dict[str, int]:
        """Acknowledged pops that came back, and timers fired twice or not at all, counted by
        the fault before them (a timer by the first fault after it was sent)."""
        blame: dict[str, int] = defaultdict(int)
        if self.pop_timer is None:
            return blame
        for c in self.pop_timer.came_back:
            blame[f"pop came back after {self.fault_before(c.group, c.at)}"] += 1
        sent = {t.key: t.sent_at for t in self.pop_timer.timers}
        for group, v in self.timer_verdicts.items():
            mine = [(k, began) for k, began in self.windows if k.endswith(f"({group})")]
            for what, keys in (("twice", v.twice), ("never", v.missing)):
                for key in keys:
                    after = [k for k, began in mine if began >= sent[key]]
                    blame[f"timer {what} across {after[0] if after else 'no fault'}"] += 1
        return dict(blame)

    @property
    def violations(self) -> list[str]:
        if not self.verdicts:
            return ["no verdict: the run did not finish"]
        out = [f"{g}: {line}" for g, v in self.verdicts.items() for line in v.violations]
        return out + self.pop_timer_violations

    @property
    def pop_timer_violations(self) -> list[str]:
        if self.pop_timer is None:
            return []
        came_back = self.pop_timer.came_back[:20]
        out = [f"acknowledged pop came back: {c.group} {c.key} ({c.detail})" for c in came_back]
        return out + [
            f"{g}: {line}" for g, v in self.timer_verdicts.items() for line in v.violations
        ]


def pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


def longest_stalls(ledger: Ledger, producers: list[int], start: float, end: float) -> list[float]:
    """Per producer, the longest time between consecutive SEND_OKs within [start, end] (the
    stall a rolling restart causes after its signal, say)."""
    last = dict.fromkeys(producers, start)
    stall = dict.fromkeys(producers, 0.0)
    for ack in sorted(recent(ledger, start), key=lambda a: a.at):
        if ack.producer in last and ack.at <= end:
            stall[ack.producer] = max(stall[ack.producer], ack.at - last[ack.producer])
            last[ack.producer] = ack.at
    return list(stall.values())


def recent(ledger: Ledger, since: float) -> list[Ack]:
    """The acks answered after ``since`` (the producers' lines arrive nearly in time order:
    the scan from the end stops a second before ``since``)."""
    out = []
    for ack in reversed(ledger.acks):
        if ack.at < since - 1.0:
            break
        if ack.at > since:
            out.append(ack)
    return out


def outages_since(ledger: Ledger, producers: list[int], at: float) -> list[float]:
    """Per producer, the time from ``at`` to the SEND_OK of its first send made after it (an
    answer in flight at the fault is not the next SEND_OK)."""
    first: dict[int, float] = {}
    for ack in recent(ledger, at):
        if ack.sent_at > at and ack.producer in producers:
            first[ack.producer] = min(ack.at, first.get(ack.producer, ack.at))
    return [first[p] - at for p in producers if p in first]


async def run(
    root: Path,
    cycles: int,
    producers: int = 8,
    gap_s: float = 5.0,
    seed: int = 1,
    pace_s: float = 0.0,
    profile: Profile = ISSUE_PROFILE,
    faults: tuple[str, ...] = FAULTS,
    pop_timers: bool = False,
    client: bool = False,
    parallel: bool = False,
) -> Report:
    """``cycles`` faults, one every ``gap_s`` to twice that (from one fault's start to the
    next; later if the previous heal took longer), in seeded rounds of every fault on every
    group; with ``pop_timers``, a POP group and pending timers too (:mod:`.pop_timer`); with
    ``parallel``, a fault on each group at once where they share nothing (:mod:`.schedule`)."""
    rng = random.Random(seed)
    report = Report(profile=profile.name, pop_timer=PopTimerLedger() if pop_timers else None)
    cluster = FaultCluster(root, profile=profile, client_proxies=bool(CLIENT_FAULTS & set(faults)))
    ledger = report.ledger
    started = time.monotonic()
    load: Load | None = None
    pop_load: PopTimerLoad | None = None
    try:
        await cluster.start()
        views = {g: await cluster.wait_healthy(g, HEAL_TIMEOUT_S) for g in cluster.groups}
        routes = {g: Route(cluster.ctl, g, cluster.via) for g in cluster.groups}
        argv = ["--controllers", ";".join(cluster.controller_addrs)]
        argv += ["--aliases", json.dumps(cluster.links.aliases), "--via", json.dumps(cluster.via)]
        if client:  # the producers send through our client (name servers, route refresh)
            argv += ["--namesrv", ";".join(n.addr for n in cluster.nameservers)]
        load = Load(routes, ledger, producers, pace_s, argv, root)
        await load.start()
        if report.pop_timer is not None:
            pop_load = PopTimerLoad(routes, report.pop_timer, seed)
            pop_load.start()
        await settle(ledger, list(range(producers)), time.monotonic())
        order = steps(rng, faults, list(cluster.groups), parallel)
        next_at = time.monotonic() + gap_s * rng.uniform(1.0, 2.0)
        while report.cycles < cycles:
            step = next(order)[: cycles - report.cycles]
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))  # the schedule's pace
            began = time.monotonic()
            await asyncio.gather(*(one_fault(report, cluster, load, views, f, g) for f, g in step))
            next_at = began + gap_s * rng.uniform(1.0, 2.0)
            report.cycles += len(step)
        if pop_load is not None:
            await pop_load.stop()
            pop_load = None
            await until_wall_ms(pop_load_ledger(report).last_due_ms + TIMER_SLACK_S * 1000)
        await load.stop()
        paths, load = load.ledger_paths(), None
        final = Ledger(acks=read_ledgers(paths), consumed=ledger.consumed)
        for group in cluster.groups:
            view = await cluster.wait_healthy(group, HEAL_TIMEOUT_S, views[group].master_epoch)
            await cluster.stop_group(group, view.master_address)
            report.confs[group] = cluster.confs(group)
            report.master_ports[group] = view.master_address.rsplit(":", 1)[1]
        for group in cluster.groups:
            report.verdicts[group] = await asyncio.to_thread(
                check, report.confs[group], report.master_ports[group], final.of_group(group)
            )
            report.zombie_acks += len(report.verdicts[group].zombies)
            if report.pop_timer is not None:
                port = report.master_ports[group]
                conf = next(c for c in report.confs[group] if c["listenPort"] == port)
                timers = [t for t in report.pop_timer.timers if t.group == group]
                report.timer_verdicts[group] = await asyncio.to_thread(check_timers, conf, timers)
                await note_pop_records(report.pop_timer, group, conf)
    finally:
        if pop_load is not None:
            await pop_load.stop()
        if load is not None:
            await load.stop()
        await cluster.close()
        report.wall_s = time.monotonic() - started
    return report


async def one_fault(
    report: Report,
    cluster: FaultCluster,
    load: Load,
    views: dict[str, ReplicaView],
    fault: str,
    group: str,
) -> None:
    """Inject ``fault`` on ``group``, wait for the heal and the producers' next SEND_OKs, and
    record the fault's figures."""
    ledger = report.ledger
    done = await inject(cluster, fault, group, views[group])
    views[group] = await cluster.wait_healthy(group, HEAL_TIMEOUT_S, views[group].master_epoch)
    mine = load.producers_of(group)
    await settle(ledger, mine, done.at)
    end = time.monotonic()
    kind = f"{fault} ({group})"
    report.faults[fault] += 1
    report.windows.append((kind, done.at))
    report.outages[kind] += outages_since(ledger, mine, done.at)
    report.stalls[kind] += longest_stalls(ledger, mine, done.at, end)
    report.failed_sends[kind] += sum(
        1 for n, when in ledger.failed if n in mine and done.at <= when <= end
    )
    report.suspected_zombie_acks += done.zombie_acks(ledger, time.monotonic())


def pop_load_ledger(report: Report) -> PopTimerLedger:
    assert report.pop_timer is not None
    return report.pop_timer


async def until_wall_ms(wall_ms: float) -> None:
    """Until the wall clock passes ``wall_ms`` (the timers' due times are wall-clock times)."""
    await asyncio.sleep(max(0.0, wall_ms / 1000 - time.time()))


async def settle(ledger: Ledger, producers: list[int], at: float, timeout_s: float = 30.0) -> None:
    """Until every producer of ``producers`` has had a SEND_OK after ``at`` (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ledger.new_ack.clear()
        if len(outages_since(ledger, producers, at)) == len(producers):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ledger.new_ack.wait(), deadline - time.monotonic())


async def note_pop_records(ledger: PopTimerLedger, group: str, conf: dict[str, str]) -> None:
    """Each acknowledged pop of ``group`` that came back gets the POP records the final
    master's store holds for it (its check points and acks, where, in which epoch)."""
    mine = [i for i, c in enumerate(ledger.came_back) if c.group == group]
    if not mine:
        return
    wanted = {ledger.came_back[i].origin for i in mine}
    records = await asyncio.to_thread(pop_records_of, conf, wanted)
    for i in mine:
        c = ledger.came_back[i]
        held = "; ".join(records.get(c.origin, [])) or "none"
        ledger.came_back[i] = dataclasses.replace(c, detail=f"{c.detail}; final store: {held}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--producers", type=int, default=8, help="producer processes")
    parser.add_argument("--pace", type=float, default=0.05, help="s between a producer's sends")
    parser.add_argument("--gap", type=float, default=5.0, help="s between faults (to twice it)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", choices=sorted(PROFILES), default=ISSUE_PROFILE.name)
    parser.add_argument(
        "--pop-timers", action="store_true", help="with a POP group and pending timers"
    )
    parser.add_argument(
        "--faults", default=",".join(FAULTS), help="the fault kinds, comma-separated"
    )
    parser.add_argument(
        "--all-ack-in-sync-state-set",
        choices=("true", "false"),
        default="true",
        help="false: RocketMQ's default (a send acknowledged once minInSyncReplicas hold it)",
    )
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="a fault on each group at once where they share nothing (make test's sample)",
    )
    parser.add_argument(
        "--client",
        action="store_true",
        help="producers send through rocketq's client producer (routes from the name servers)",
    )
    parser.add_argument(
        "--keep", metavar="DIR", help="run in DIR and keep it (stores and broker logs)"
    )
    args = parser.parse_args()
    profile = PROFILES[args.profile]
    if args.all_ack_in_sync_state_set == "false":
        broker = {**profile.broker, "allAckInSyncStateSet": "false"}
        profile = dataclasses.replace(profile, name=f"{profile.name}-allack-false", broker=broker)
    faults = tuple(args.faults.split(","))
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults {unknown}: known are {', '.join(FAULTS)}")
    with contextlib.ExitStack() as stack:
        if args.keep:
            tmp = args.keep
            Path(tmp).mkdir(parents=True, exist_ok=True)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rocketq-faults-"))
        report = asyncio.run(
            run(
                Path(tmp),
                args.cycles,
                args.producers,
                args.gap,
                args.seed,
                args.pace,
                profile,
                faults=faults,
                pop_timers=args.pop_timers,
                client=args.client,
                parallel=args.parallel,
            )
        )
    print("\n".join(report.lines()))
    if report.violations:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
