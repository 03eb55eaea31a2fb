"""Structured Streaming reads: admission control, restarts, batch-0 replay, new queues, lag."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AdminClient
from rocketq.client.blocking import Producer
from rocketq.common.message import Message, MessageQueue
from rocketq.errors import ClientError, TopicNotExistError
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.wait import until_sync
from tests.spark.conftest import SMALL_STORE, send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]
QUERY_TIMEOUT_S = 180


def stream(spark: Any, cluster: BackgroundCluster, topic: str, **options: Any) -> Any:
    reader = (
        spark.readStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def run_available_now(df: Any, checkpoint: Path, out: Path) -> list[int]:
    """Run to the end with Trigger.AvailableNow into Parquet; the rows of each batch."""
    query = (
        df.select("broker", "queueId", "queueOffset", "value")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .option("path", str(out))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S), "the availableNow query did not finish"
    assert query.exception() is None
    return [p["numInputRows"] for p in query.recentProgress]


def output_keys(spark: Any, out: Path) -> list[tuple[str, int, int]]:
    rows = spark.read.parquet(str(out)).collect()
    return [(r.broker, r.queueId, r.queueOffset) for r in rows]


def test_available_now_with_max_offsets_per_trigger_runs_the_expected_batches(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 40)
    df = stream(spark, cluster, topic, startingOffsets="earliest", maxOffsetsPerTrigger=12)
    batches = run_available_now(df, tmp_path / "cp", tmp_path / "out")
    assert [n for n in batches if n] == [12, 12, 12, 4]
    keys = output_keys(spark, tmp_path / "out")
    assert len(keys) == len(set(keys)) == 40


def test_restart_reads_only_new_messages_and_batch_zero_replays_its_planned_start(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 20, prefix="first")
    cp, out = tmp_path / "cp", tmp_path / "out"
    run_available_now(stream(spark, cluster, topic, startingOffsets="earliest"), cp, out)
    assert len(output_keys(spark, out)) == 20

    # batch 0 planned but not committed: the replay must not re-resolve "latest"
    (cp / "commits" / "0").unlink()
    (cp / "commits" / ".0.crc").unlink(missing_ok=True)
    shutil.rmtree(out)
    send_many(producer, topic, 4, prefix="second")
    latest = stream(spark, cluster, topic, startingOffsets="latest")
    run_available_now(latest, cp, out)
    values = sorted(r.value for r in spark.read.parquet(str(out)).collect())
    assert len(values) == 24
    assert values.count(b"second-0") == 1

    send_many(producer, topic, 6, prefix="third")
    run_available_now(latest, cp, out)
    assert len(set(output_keys(spark, out))) == len(output_keys(spark, out)) == 30


def test_a_queue_added_mid_stream_is_read_from_its_start(
    spark: Any, cluster: BackgroundCluster, producer: Producer, tmp_path: Path
) -> None:
    topic = "SparkGrowingTopic"
    cluster.create_topic(topic, queues=1, brokers=["broker-a"])
    send_many(producer, topic, 5, prefix="before")
    query = (
        stream(spark, cluster, topic, startingOffsets="earliest")
        .select("broker", "queueId", "queueOffset", "value")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .option("path", str(tmp_path / "out"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        cluster.create_topic(topic, queues=2, brokers=["broker-a", "broker-b"])
        deadline = time.monotonic() + 30
        while len(producer.fetch_publish_message_queues(topic)) < 4:
            assert time.monotonic() < deadline, "the producer never saw the new queues"
            producer.impl._publish_infos.pop(topic, None)  # force a route refresh
            time.sleep(0.05)
        sent = send_many(producer, topic, 12, prefix="after")
        query.processAllAvailable()
    finally:
        query.stop()
    keys = output_keys(spark, tmp_path / "out")
    assert len(keys) == len(set(keys)) == 17
    new_queue = {(s.message_queue.broker_name, s.message_queue.queue_id) for s in sent}
    assert ("broker-b", 1) in new_queue
    assert ("broker-b", 1, 0) in keys


def test_lag_is_reported_in_progress_and_consumer_group_offsets_reach_the_broker(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 16)
    group = f"{topic}_pipeline"
    df = stream(
        spark,
        cluster,
        topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger=5,
        consumerGroup=group,
    )
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        reports = [p["sources"][0]["latestOffset"] for p in query.recentProgress]
        lags = [json.loads(r)["lag"] for r in reports if r]
        assert lags[0] > 0
        assert lags[-1] == 0
        with AdminClient(cluster.namesrv_addr) as admin:  # what RocketMQ's tools read

            def committed() -> int:
                try:
                    stats = admin.examine_consume_stats(group, topic)
                except (ClientError, TopicNotExistError):  # not announced or committed yet
                    return 0
                return sum(w.consumer_offset for w in stats.offset_table.values())

            assert until_sync(lambda: committed() == 16, 30, 0.2), "the offsets never reached 16"
            stats = admin.examine_consume_stats(group, topic)
        assert len(stats.offset_table) == 4
        assert stats.compute_total_diff() == 0
    finally:
        query.stop()


def expire_commitlog(cluster: BackgroundCluster, broker: str) -> None:
    """Delete every commitlog file but the last, then let the consume queues follow."""
    store = cluster.brokers[broker].message_store
    assert store.wait_for_dispatch(10.0)  # the queues hold every unit before the files go
    files = store.commit_log.mapped_file_queue
    assert files.delete_expired_file_by_time(0, 0, clean_immediately=True, max_count=1000) > 0
    store.clean_consume_queue_service.run_once()


def test_retention_deleting_unread_data_fails_the_query_or_skips_per_fail_on_data_loss(
    spark: Any, tmp_path: Path
) -> None:
    with BackgroundCluster(tmp_path / "c", ("broker-a",), SMALL_STORE) as cluster:
        topic = "SparkRetentionTopic"
        cluster.create_topic(topic, queues=1)
        with Producer(
            "SPARK_LOSS_PRODUCER", namesrv_addr=cluster.namesrv_addr, instance_name="loss"
        ) as producer:  # its own client instance: the session producer's knows another cluster
            send_many(producer, topic, 5, prefix="kept")
            cp, out = tmp_path / "cp", tmp_path / "out"
            run_available_now(stream(spark, cluster, topic, startingOffsets="earliest"), cp, out)
            for i in range(200):
                producer.send(Message(topic=topic, body=b"x" * 1024 + str(i).encode()))
        expire_commitlog(cluster, "broker-a")
        with AdminClient(cluster.namesrv_addr) as admin:
            low = admin.min_offset(MessageQueue(topic, "broker-a", 0))
        assert low > 5

        failing = (
            stream(spark, cluster, topic)
            .select("queueOffset")
            .writeStream.format("noop")
            .option("checkpointLocation", str(cp))
            .trigger(availableNow=True)
            .start()
        )
        with pytest.raises(Exception, match="failOnDataLoss"):
            failing.awaitTermination(QUERY_TIMEOUT_S)

        skipping = stream(spark, cluster, topic, failOnDataLoss="false")
        run_available_now(skipping, cp, out)
        offsets = sorted(k[2] for k in output_keys(spark, out))
        assert offsets == list(range(5)) + list(range(low, 205))
