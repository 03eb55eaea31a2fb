"""The fault suite's bounded sample (``make faults CYCLES=500`` runs the long schedule): three
name servers with embedded controllers and a group of three brokers, each in its own process,
four SYNC producers and a consumer; 18 faults (three rounds of the six kinds, each round in a
seeded order), one every 1-2 s after the previous heal. Only the checker's results are
asserted; the timings are printed (``-s``), never asserted here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rocketq.testing.failover.checker import check
from rocketq.testing.failover.cluster import FAULTS
from rocketq.testing.failover.load import Consumed, Ledger
from rocketq.testing.failover.runner import run

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(420)]

CYCLES = 3 * len(FAULTS)  # about 100 s of faults on the 2-core machine, 4 min with margin


async def test_no_acknowledged_message_is_lost_under_the_fault_schedule(tmp_path: Path) -> None:
    report = await run(tmp_path, CYCLES, producers=4, gap_s=1.0)
    print("\n".join(report.lines()))
    verdict = report.verdict
    assert verdict is not None
    assert report.cycles == CYCLES
    assert report.faults == dict.fromkeys(FAULTS, 3)
    assert verdict.acked > 1000  # the load kept going through the faults
    assert verdict.lost == []  # every SEND_OK key on the final master, where it was acked
    assert verdict.truncated == []  # nothing consumed was later cut
    assert all(len(m) == 1 for m in verdict.masters_per_epoch.values())
    assert report.zombie_acks == 0  # a deposed, paused master never acknowledged
    assert len(verdict.epochs) > 2  # masters did change
    assert verdict.replicas_identical
    assert verdict.epoch_files_equal
    assert report.violations == []

    # the checker is proven on the same stores: a forged ack at another offset is lost, a
    # forged consumed record is truncated, a second broker acking in an epoch is a violation
    first, last = report.ledger.acks[0], report.ledger.acks[-1]
    forged = Ledger(
        acks=[
            dataclasses.replace(first, phy_offset=last.phy_offset),
            dataclasses.replace(last, broker="127.0.0.1:1"),
        ],
        consumed=[Consumed(0, 0, b"not what was stored")],
    )
    caught = check(report.confs, report.master_port, forged)
    assert len(caught.lost) == 1
    assert len(caught.truncated) == 1
    assert max(len(m) for m in caught.masters_per_epoch.values()) == 2
    assert len(caught.violations) == 3
