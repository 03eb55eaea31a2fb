"""Long Spark jobs show progress: while a job runs, StageProgress reports each running stage's
finished and total tasks (what ``rocketq spark export|stats|rebuild`` print on stderr)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from rocketq.spark.store.jobs import StageProgress

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]


def slow_identity(x: int) -> int:
    time.sleep(1.0)  # a task long enough for several 0.1 s progress polls
    return x


def test_stage_progress_reports_the_running_stages_tasks(spark: Any) -> None:
    lines: list[str] = []
    with StageProgress(spark, lines.append, "job", interval_s=0.1):
        got = spark.sparkContext.parallelize(range(2), 2).map(slow_identity).collect()
    assert got == [0, 1]
    assert lines, "no progress while a 1 s job ran"
    assert all(re.fullmatch(r"job: stage \d+: [0-2]/2", line) for line in lines), lines
    assert len(lines) == len(set(lines))  # only changes are reported
