"""The fault suite's bounded sample (``make faults CYCLES=500`` runs the long schedule): three
name servers with embedded controllers, a group of three and a group of two brokers, each in
its own process, under issue 20's controller profile; eight SYNC producer processes writing
their ledgers and two consumer groups (re-consumption after each change of master counted,
printed, and bounded: at most 2 s of consumption replayed); 30 faults (every kind on each
group once, then the next round, in a seeded order), one every 5-10 s on each group: a fault
on each group at once where they share nothing (``parallel``: the controllers and the proxied
links are faulted one at a time), so the 30 take about half the time; a POP group and pending
timers beside them. Only the checker's results are asserted; the timings are printed (``-s``),
never asserted here.

The profile is the runner's ``fast`` one (2 s heartbeat timeout, 3 s catch-up, 200 ms
heartbeats and scans) for make test's time budget; ``make faults`` runs issue 20's profile.

Every POP and timer result is asserted too: every timer fires once and not early, and no
acknowledged pop comes back, by a fresh pop or by a revive into the retry topic (RELIABILITY.md,
"A partition of the master" and "Acknowledged pops revived"). So is issue 20's
re-consumption bound (RELIABILITY.md, "One-way partitions, clients cut off,
re-consumption")."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rocketq.testing.failover.checker import check
from rocketq.testing.failover.cluster import FAST_PROFILE, GROUPS
from rocketq.testing.failover.faults import FAULTS
from rocketq.testing.failover.load import Consumed, Ledger
from rocketq.testing.failover.runner import run

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(600)]

CYCLES = 30
MAX_REPLAY_S = 2.0  # issue 20: at most 2 s of consumption replayed per change of master


async def test_no_acknowledged_message_is_lost_under_the_fault_schedule(tmp_path: Path) -> None:
    report = await run(
        tmp_path,
        CYCLES,
        gap_s=5.0,
        pace_s=0.05,
        profile=FAST_PROFILE,
        pop_timers=True,
        parallel=True,
    )
    print("\n".join(report.lines()))
    assert report.cycles == CYCLES
    assert set(report.faults) == set(FAULTS)  # every kind at least twice over both groups
    assert all(n >= 2 for n in report.faults.values())
    assert set(report.verdicts) == set(GROUPS)
    for verdict in report.verdicts.values():
        assert verdict.acked > 1000  # the load kept going through the faults
        assert verdict.lost == []  # every SEND_OK key on the final master, where it was acked
        assert verdict.truncated == []  # nothing consumed was later cut
        assert all(len(m) == 1 for m in verdict.masters_per_epoch.values())
        assert len(verdict.epochs) > 2  # masters did change
        assert verdict.replicas_identical
        assert verdict.epoch_files_equal
    assert report.zombie_acks == 0  # a deposed master never acknowledged
    pop_timer = report.pop_timer
    assert pop_timer is not None
    assert pop_timer.popped > 1000
    assert all(v.timers > 100 for v in report.timer_verdicts.values())
    # every timer once, on time; no acknowledged pop comes back (each one's detail names the
    # fault before it and the path: a fresh pop of its queue or a revive)
    came_back = [
        f"{report.fault_before(c.group, c.at)}: {c.key} {c.detail}" for c in pop_timer.came_back
    ]
    assert came_back == [], came_back
    assert report.violations == []
    # issue 20's bound: a change of master replays at most 2 s of consumption (offsets reach
    # the in-sync slaves every 0.5 s; reconsume.py leaves out the time a consumer waited on a
    # paused master), and the count is live: the changes of master did rewind some queues
    assert report.ledger.reconsumed, "no queue was rewound: the re-consumption count is dead"
    worst = max(report.ledger.reconsumed, key=lambda r: r.replay_s)
    assert worst.replay_s <= MAX_REPLAY_S, worst.detail()

    # the checker is proven on the same stores: a forged ack at another offset is lost, a
    # forged consumed record is truncated, a second broker acking in an epoch is a violation
    acks = [a for a in report.ledger.acks if a.group == "broker-a"]
    first, last = acks[0], acks[-1]
    forged = Ledger(
        acks=[
            dataclasses.replace(first, phy_offset=last.phy_offset),
            dataclasses.replace(last, broker="127.0.0.1:1"),
        ],
        consumed=[Consumed("broker-a", "forged", 0, 0, b"not what was stored")],
    )
    caught = check(report.confs["broker-a"], report.master_ports["broker-a"], forged)
    assert len(caught.lost) == 1
    assert len(caught.truncated) == 1
    assert max(len(m) for m in caught.masters_per_epoch.values()) == 2
    assert len(caught.violations) == 3
