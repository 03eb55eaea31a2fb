"""Spark Connect: PySpark's local Connect server registers the sources and round-trips a topic.

The session runs in its own process (``connect_job``): a Connect session in local mode starts
its own SparkContext, which a process holding the tests' classic session cannot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import spark_env

pytest.importorskip("grpc_status", reason="Spark Connect needs pyspark[connect]")
pytest.importorskip("zstandard", reason="Spark Connect needs pyspark[connect]")

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]
ROOT = Path(__file__).resolve().parents[2]


def test_a_connect_session_registers_the_source_and_writes_and_reads_a_topic(
    cluster: BackgroundCluster, topic: str, tmp_path: Path
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tests.spark.connect_job", cluster.namesrv_addr, topic, "50"],
        cwd=ROOT,
        env={**os.environ, **spark_env(), "SPARK_LOCAL_DIRS": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["session"] == "pyspark.sql.connect.session"
    assert sorted(result["rows"]) == sorted([f"k{i}", f"v{i}"] for i in range(50))
