"""Streams whose topology grows: a topic matching ``subscribePattern``, a new broker.

As Spark's Kafka source does on the next trigger's metadata refresh, the reader re-lists the
name server's topics and routes on every trigger; queues that appear (a newly matching topic,
a broker that joins the cluster with the topic) start at their first offset, whatever
``startingOffsets`` said for the queues known at the start.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import SMALL_STORE, send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]
_names = itertools.count()


def test_a_topic_created_mid_stream_that_matches_the_pattern_is_read_from_its_start(
    spark: Any, cluster: BackgroundCluster, producer: Producer, tmp_path: Path
) -> None:
    n = next(_names)
    old, new, other = f"SparkPat{n}Old", f"SparkPat{n}New", f"SparkNotPat{n}"
    cluster.create_topic(old, queues=2)
    send_many(producer, old, 10, prefix="before")  # startingOffsets=latest: never read
    writer = (
        spark.readStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribePattern", f"SparkPat{n}[A-Za-z]+")
        .option("startingOffsets", "latest")
        .load()
        .select("topic", "broker", "queueId", "queueOffset", "value")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .option("path", str(tmp_path / "out"))
    )
    query = writer.trigger(processingTime="200 milliseconds").start()
    try:
        query.processAllAvailable()  # the start is resolved: "latest" of the old topic
        cluster.create_topic(new, queues=2)
        cluster.create_topic(other, queues=1)
        send_many(producer, new, 8, prefix="new")  # before or after the query sees the topic
        send_many(producer, old, 6, prefix="after")
        send_many(producer, other, 3, prefix="other")
        query.processAllAvailable()
        assert query.exception() is None
    finally:
        query.stop()

    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    keys = [(r.topic, r.broker, r.queueId, r.queueOffset) for r in rows]
    assert len(keys) == len(set(keys)) == 14
    values = sorted(r.value.decode() for r in rows)
    assert values == sorted([f"new-{i}" for i in range(8)] + [f"after-{i}" for i in range(6)])
    from_new = sorted((r.broker, r.queueId, r.queueOffset) for r in rows if r.topic == new)
    assert from_new == sorted(
        (b, q, o) for b in ("broker-a", "broker-b") for q in (0, 1) for o in (0, 1)
    )

    # restarted from its checkpoint, the query knows the new topic: only what came since
    send_many(producer, new, 4, prefix="later")
    restarted = writer.trigger(availableNow=True).start()
    assert restarted.awaitTermination(180)
    assert restarted.exception() is None
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    keys = [(r.topic, r.broker, r.queueId, r.queueOffset) for r in rows]
    assert len(keys) == len(set(keys)) == 18


def test_a_broker_that_joins_mid_stream_with_the_topic_is_read_from_its_start(
    spark: Any, tmp_path: Path
) -> None:
    topic = "SparkJoiningBrokerTopic"
    with BackgroundCluster(tmp_path / "c", ("broker-a",), SMALL_STORE) as cluster:
        cluster.create_topic(topic, queues=2)
        with Producer("SPARK_GROWTH", namesrv_addr=cluster.namesrv_addr, instance_name="g1") as p:
            send_many(p, topic, 5, prefix="before")
        query = (
            spark.readStream.format("rocketq")
            .option("nameServer", cluster.namesrv_addr)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .select("broker", "queueId", "queueOffset", "value")
            .writeStream.format("parquet")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .option("path", str(tmp_path / "out"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        try:
            query.processAllAvailable()
            cluster.add_broker("broker-b")
            cluster.create_topic(topic, queues=2)  # on both brokers now
            # a producer started now routes to all four queues
            with Producer(
                "SPARK_GROWTH", namesrv_addr=cluster.namesrv_addr, instance_name="g2"
            ) as p:
                assert len(p.fetch_publish_message_queues(topic)) == 4
                send_many(p, topic, 12, prefix="after")
            query.processAllAvailable()
            assert query.exception() is None
        finally:
            query.stop()

    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    keys = [(r.broker, r.queueId, r.queueOffset) for r in rows]
    assert len(keys) == len(set(keys)) == 17
    assert sorted(k for k in keys if k[0] == "broker-b") == [
        ("broker-b", q, o) for q in (0, 1) for o in (0, 1, 2)
    ]
