"""ConsumerStatsManager with a controlled clock: rates over the last minute, mean round
trips, failures over the last hour, and samples that age out."""

from __future__ import annotations

import pytest

from rocketq.client.consumer_stats import ConsumerStatsManager


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rates_are_the_last_minutes_sum_over_the_time_it_spans() -> None:
    clock = Clock()
    stats = ConsumerStatsManager(clock)
    for _ in range(10):
        stats.inc_consume("G", "T", rt_ms=4.0, ok=3, failed=1)
        stats.inc_pull("G", "T", rt_ms=2.0, msgs=4)
        clock.now += 2.0
    status = stats.consume_status("G", "T")
    assert status.consume_ok_tps == pytest.approx(30 / 20.0)
    assert status.consume_failed_tps == pytest.approx(10 / 20.0)
    assert status.pull_tps == pytest.approx(40 / 20.0)
    assert status.consume_rt == pytest.approx(4.0)
    assert status.pull_rt == pytest.approx(2.0)
    assert status.consume_failed_msgs == 10


def test_old_samples_leave_the_minute_but_failures_stay_an_hour() -> None:
    clock = Clock()
    stats = ConsumerStatsManager(clock)
    stats.inc_consume("G", "T", rt_ms=1.0, ok=0, failed=5)
    clock.now += 120
    status = stats.consume_status("G", "T")
    assert status.consume_failed_tps == 0.0
    assert status.consume_failed_msgs == 5
    clock.now += 3600
    assert stats.consume_status("G", "T").consume_failed_msgs == 0
    assert stats.consume_status("Other", "T").consume_ok_tps == 0.0
