"""The exactly-once sink: half messages, a ledger-decided commit, and a driver killed mid-way."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.transaction_batch import PROPERTY_TRANSACTION_BATCH
from rocketq.client.blocking import Producer
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import TRANS_HALF_TOPIC
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.wait import until_sync
from tests.spark.conftest import SMALL_STORE, send_many, spark_env

pytest.importorskip("pyspark")

from pyspark.sql.datasource import DataSourceWriter, WriterCommitMessage

from rocketq.client import LocalTransactionState
from rocketq.spark.topic.options import WriteOptions
from rocketq.spark.topic.source import TopicSource
from rocketq.spark.topic.transactional_sink import (
    PROPERTY_SPARK_TXN,
    LedgerListener,
    TopicTxnBatchWriter,
    TxnLedger,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(400)]
ROOT = Path(__file__).resolve().parents[2]


def half(write_id: str, batch: int, uniq: str) -> MessageExt:
    msg = MessageExt(topic="t")
    msg.properties["UNIQ_KEY"] = uniq
    msg.properties[PROPERTY_SPARK_TXN] = f"{write_id}:{batch}"
    return msg


def test_the_check_back_answers_from_the_ledger(tmp_path: Path) -> None:
    ledger = TxnLedger(str(tmp_path / "ledger"))
    listener = LedgerListener(ledger, "stream")
    assert listener.check_local_transaction(half("stream", 3, "A")) is LocalTransactionState.UNKNOWN
    ledger.record(3, ["A"])
    assert listener.check_local_transaction(half("stream", 3, "A")) is LocalTransactionState.COMMIT
    assert listener.check_local_transaction(half("stream", 3, "B")) is (
        LocalTransactionState.ROLLBACK
    )
    assert listener.check_local_transaction(half("other", 3, "A")) is (
        LocalTransactionState.UNKNOWN
    )
    assert not list((tmp_path / "ledger").glob("*.tmp"))


def test_a_decided_batch_is_parsed_once_and_a_rewritten_ledger_is_read_afresh(
    tmp_path: Path,
) -> None:
    ledger = TxnLedger(str(tmp_path / "ledger"))
    ledger.record(0, ["A", "B"])
    first = ledger.decided(0)
    assert first == {"A", "B"}
    assert ledger.decided(0) is first  # a check-back storm parses the entry once
    shutil.rmtree(tmp_path / "ledger")  # a checkpoint deleted and reused in this process
    assert ledger.decided(0) is None
    ledger.record(0, ["C"])
    assert ledger.decided(0) == {"C"}


def read_values(spark: Any, cluster: BackgroundCluster, topic: str) -> list[bytes]:
    df = (
        spark.read.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
        .load()
    )
    return sorted(r.value for r in df.collect())


def paused_source(paused: Path, resume: Path) -> type[TopicSource]:
    """``rocketq_paused``: the exactly-once batch sink whose driver-side commit (run in a
    Python worker) touches ``paused`` and waits for ``resume`` before committing. Classes
    built here are pickled by value, so the worker needs no test module."""
    paused_at, resume_at = str(paused), str(resume)

    class PausedWriter(TopicTxnBatchWriter):
        def commit(self, messages: list[WriterCommitMessage | None]) -> None:
            Path(paused_at).touch()
            deadline = time.monotonic() + 120
            while not Path(resume_at).exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the test never resumed the commit")
                time.sleep(0.05)
            super().commit(messages)

    class PausedSource(TopicSource):
        @classmethod
        def name(cls) -> str:
            return "rocketq_paused"

        def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
            return PausedWriter(WriteOptions.parse(self.options), schema, overwrite)

    return PausedSource


def half_records(cluster: BackgroundCluster, topic: str) -> list[MessageExt]:
    """Half messages stored for ``topic`` on every broker (RMQ_SYS_TRANS_HALF_TOPIC)."""
    found: list[MessageExt] = []
    for broker in cluster.brokers.values():
        store, offset = broker.message_store, 0
        while buffers := store.get_message(
            "check", TRANS_HALF_TOPIC, 0, offset, 32
        ).message_buffers:
            decoded = [decode_message(b) for b in buffers]
            found.extend(m for m in decoded if m.properties.get("REAL_TOPIC") == topic)
            offset = decoded[-1].queue_offset + 1
    return found


def halves_for(cluster: BackgroundCluster, topic: str) -> int:
    """Rows held in half messages for ``topic`` (a batch half holds RQ_TRAN_BATCH rows)."""
    return sum(
        int(m.properties.get(PROPERTY_TRANSACTION_BATCH) or 1) for m in half_records(cluster, topic)
    )


def test_a_batch_write_with_exactly_once_is_visible_only_after_the_commit(
    spark: Any, cluster: BackgroundCluster, topic: str, tmp_path: Path
) -> None:
    paused, resume = tmp_path / "paused", tmp_path / "resume"
    spark.dataSource.register(paused_source(paused, resume))
    failures: list[Exception] = []

    def write() -> None:
        # built on this thread: Spark looks a registered source up in the thread's session
        df = spark.createDataFrame([(f"v{i}",) for i in range(50)], "value STRING")
        try:
            (
                df.repartition(2)
                .write.format("rocketq_paused")
                .mode("append")
                .option("nameServer", cluster.namesrv_addr)
                .option("topic", topic)
                .option("deliveryGuarantee", "exactly_once")
                .option("checkpointLocation", str(tmp_path / "ledger"))
                .save()
            )
        except Exception as exc:  # noqa: BLE001 -- reported on the test's thread
            failures.append(exc)

    writer = threading.Thread(target=write, name="exactly-once-write")
    writer.start()
    try:
        assert until_sync(lambda: paused.exists() or not writer.is_alive(), 180), "no commit"
        assert not failures, failures
        # every task has sent its rows as halves; the commit has not run: nothing to consume
        assert until_sync(lambda: halves_for(cluster, topic) == 50, 30), halves_for(cluster, topic)
        assert len(half_records(cluster, topic)) < 50  # transactional batches, not one per row
        assert read_values(spark, cluster, topic) == []
    finally:
        resume.touch()
        writer.join(180)
    assert not writer.is_alive()
    assert not failures
    assert read_values(spark, cluster, topic) == sorted(f"v{i}".encode() for i in range(50))


def test_a_driver_killed_between_the_tasks_and_the_commit_leaves_every_row_once(
    spark: Any, tmp_path: Path
) -> None:
    fast_checks = {"transaction_check_interval_ms": 500, "transaction_time_out_ms": 1000}
    with BackgroundCluster(tmp_path / "c", ("broker-a",), SMALL_STORE, **fast_checks) as cluster:
        source, target = "SparkExactlySource", "SparkExactlyTarget"
        cluster.create_topic(source, queues=2)
        cluster.create_topic(target, queues=2)
        with Producer("SPARK_EO_FILL", namesrv_addr=cluster.namesrv_addr, instance_name="eo") as p:
            send_many(p, source, 60)
        cp = tmp_path / "cp"
        kill_in_commit(cluster, source, target, cp, tmp_path)
        assert len(read_values(spark, cluster, target)) == 20  # batch 1's halves: not committed

        restarted = (
            spark.readStream.format("rocketq")
            .option("nameServer", cluster.namesrv_addr)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "20")
            .load()
            .select("value", "key")
            .writeStream.format("rocketq")
            .option("nameServer", cluster.namesrv_addr)
            .option("topic", target)
            .option("deliveryGuarantee", "exactly_once")
            .option("checkpointLocation", str(cp))
            .trigger(availableNow=True)
            .start()
        )
        assert restarted.awaitTermination(240)
        assert restarted.exception() is None
        expected = sorted(f"m-{i}".encode() for i in range(60))
        assert read_values(spark, cluster, target) == expected

        # the killed attempt's halves are checked back and rolled back from the ledger
        checker = cluster.brokers["broker-a"].transactional_message_check_service
        deadline = time.monotonic() + 60
        while cluster.run(checker.check()).checked or checker.checks_sent == 0:
            assert time.monotonic() < deadline, "the stale halves were never ended"
            time.sleep(0.5)
        assert read_values(spark, cluster, target) == expected


def kill_in_commit(
    cluster: BackgroundCluster, source: str, target: str, cp: Path, tmp_path: Path
) -> None:
    """Run the hanging driver until batch 1 reaches its commit, then SIGKILL its group."""
    args = [cluster.namesrv_addr, source, target, str(cp)]
    with (tmp_path / "driver.log").open("wb") as log:
        driver = subprocess.Popen(
            [sys.executable, "-m", "tests.spark.txn_process", *args],
            cwd=ROOT,
            env={**os.environ, **spark_env()},
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "hanging").exists():
            assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "batch 1 never reached its commit"
            time.sleep(0.05)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(30)


def test_a_broker_without_transactional_batches_gets_one_half_per_row(
    spark: Any, tmp_path: Path
) -> None:
    no_batches = {"transaction_batch_enable": False}  # answers as RocketMQ's broker does
    with BackgroundCluster(tmp_path / "c", ("broker-a",), SMALL_STORE, **no_batches) as cluster:
        target = "SparkExactlyNoBatch"
        cluster.create_topic(target, queues=2)
        df = spark.createDataFrame([(f"r{i}",) for i in range(40)], "value STRING")
        (
            df.repartition(2)
            .write.format("rocketq")
            .mode("append")
            .option("nameServer", cluster.namesrv_addr)
            .option("topic", target)
            .option("deliveryGuarantee", "exactly_once")
            .option("checkpointLocation", str(tmp_path / "ledger"))
            .save()
        )
        assert read_values(spark, cluster, target) == sorted(f"r{i}".encode() for i in range(40))
        halves = half_records(cluster, target)
    assert len(halves) == 40
    assert not any(PROPERTY_TRANSACTION_BATCH in m.properties for m in halves)
