"""A streaming query SIGKILLed mid-batch and restarted from its checkpoint: exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many, spark_env

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(400)]
ROOT = Path(__file__).resolve().parents[2]


def start(cluster: BackgroundCluster, topic: str, tmp: Path) -> subprocess.Popen[bytes]:
    args = [cluster.namesrv_addr, topic, str(tmp / "cp"), str(tmp / "out")]
    with (tmp / "run.log").open("wb") as log:
        return _popen(args, log)


def _popen(args: list[str], log: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.spark.stream_process", *args],
        cwd=ROOT,
        env={**os.environ, **spark_env()},
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,  # its own group: the JVM and Python workers die with it
    )


def test_a_query_killed_mid_batch_and_restarted_writes_every_message_exactly_once(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 60)
    running = start(cluster, topic, tmp_path)
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "cp" / "offsets" / "1").exists():
            assert running.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "batch 1 was never planned"
            time.sleep(0.02)
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait(30)
    assert not (tmp_path / "cp" / "commits" / "1").exists()  # it died inside batch 1

    # restart in this process's session from the same checkpoint (a stateless query may drop
    # the slowing UDF); it replays the batch that was cut and finishes what is left
    restarted = (
        spark.readStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20")
        .load()
        .select("broker", "queueId", "queueOffset", "value")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .option("path", str(tmp_path / "out"))
        .trigger(availableNow=True)
        .start()
    )
    assert restarted.awaitTermination(240)
    assert restarted.exception() is None

    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    keys = [(r.broker, r.queueId, r.queueOffset) for r in rows]
    assert len(keys) == 60
    assert len(set(keys)) == 60
