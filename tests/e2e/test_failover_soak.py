"""The false-election soak's bounded sample (``make soak MINUTES=30`` runs the long one): the
controller profile as the issue writes it, three name servers with controllers and a group of
three brokers in their own processes, eight SYNC producers unpaced, no fault. Any election
after the first is a false one."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.testing.failover.soak import elections_of, soak

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(300)]

SOAK_S = 20.0  # from every producer's first ack; with the start-up, 35-100 s on 2 cores


async def test_no_election_after_the_first_under_full_sync_load(tmp_path: Path) -> None:
    report = await soak(tmp_path, SOAK_S)
    print("\n".join(report.lines()))
    assert report.acked > 1000  # the load kept the group busy
    assert report.elections["new_master_elected"] == 1  # the group's first master, counted
    assert report.initial_epoch == report.final_epoch == 1
    assert report.false_elections == 0


def test_elections_are_read_from_every_election_total_series() -> None:
    page = (
        "# TYPE rocketmq_election_total counter\n"
        'rocketmq_election_total{address="a",cluster="c",broker_set="b",'
        'election_result="new_master_elected"} 2.0\n'
        'rocketmq_election_total{address="a",cluster="c",broker_set="d",'
        'election_result="new_master_elected"} 1.0\n'
        'rocketmq_election_total{address="a",cluster="c",broker_set="b",'
        'election_result="keep_current_master"} 3.0\n'
        'rocketmq_election_created{address="a"} 1.7e+09\n'
    )
    assert elections_of(page) == {"new_master_elected": 3, "keep_current_master": 3}
