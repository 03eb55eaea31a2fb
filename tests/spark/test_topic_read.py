"""Batch reads of topics through a real SparkSession and a real two-broker cluster."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def read(spark: Any, cluster: BackgroundCluster, **options: Any) -> Any:
    reader = spark.read.format("rocketq").option("nameServer", cluster.namesrv_addr)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def test_batch_read_equals_what_the_client_sent_field_by_field_across_two_brokers(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    before_ms = int(time.time() * 1000)
    sent = send_many(producer, topic, 40)
    df = read(spark, cluster, subscribe=topic)
    assert df.rdd.getNumPartitions() == os.cpu_count()  # one task per core, not per queue
    rows = df.collect()

    assert len(rows) == 40
    assert {r.msgId for r in rows} == {s.msg_id for s in sent}
    by_id = {r.msgId: r for r in rows}
    assert {r.broker for r in rows} == {"broker-a", "broker-b"}
    for i, result in enumerate(sent):
        row = by_id[result.msg_id]
        assert row.value == f"m-{i}".encode()
        assert row.topic == topic
        assert row.broker == result.message_queue.broker_name
        assert row.queueId == result.message_queue.queue_id
        assert row.queueOffset == result.queue_offset
        assert row.key == f"m-key-{i}"
        assert row.keys == f"m-key-{i} extra-{i}"
        assert row.tags == ("even" if i % 2 == 0 else "odd")
        assert row.properties["seq"] == str(i)
        assert row.properties["UNIQ_KEY"] == result.msg_id
        assert row.timestampType == 1
        assert row.reconsumeTimes == 0
        assert row.storeHost.startswith("127.0.0.1:")
        assert row.commitLogOffset >= 0
        assert row.timestamp.timestamp() * 1000 >= before_ms - 1000
        assert row.bornTimestamp <= row.timestamp


def test_starting_and_ending_offsets_as_json_select_exact_ranges_per_queue(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 40)  # 10 per queue, offsets 0..9
    start = {topic: {"broker-a": {"0": 3, "1": -2}, "broker-b": {"0": -1}}}
    end = {topic: {"broker-a": {"0": 7}, "broker-b": {"1": 5}}}
    df = read(
        spark,
        cluster,
        subscribe=topic,
        startingOffsets=json.dumps(start),
        endingOffsets=json.dumps(end),
    )
    got = sorted((r.broker, r.queueId, r.queueOffset) for r in df.collect())
    expected = (
        [("broker-a", 0, o) for o in range(3, 7)]
        + [("broker-a", 1, o) for o in range(10)]
        + [("broker-b", 1, o) for o in range(5)]
    )
    assert got == sorted(expected)


def test_max_records_per_partition_splits_ranges_without_losing_or_repeating_rows(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 40)
    df = read(spark, cluster, subscribe=topic, maxRecordsPerPartition=3, minPartitions=20)
    assert df.rdd.getNumPartitions() >= 20
    offsets = [(r.broker, r.queueId, r.queueOffset) for r in df.collect()]
    assert len(offsets) == 40
    assert len(set(offsets)) == 40


def test_tag_filter_reads_only_matching_messages(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 40)
    rows = read(spark, cluster, subscribe=topic, subExpression="odd").collect()
    assert len(rows) == 20
    assert {r.tags for r in rows} == {"odd"}


def test_an_sql92_filter_reads_only_messages_whose_properties_match(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 40)  # property seq = 0..39
    rows = read(
        spark, cluster, subscribe=topic, subExpressionType="SQL92", subExpression="seq >= 30"
    ).collect()
    assert sorted(int(r.properties["seq"]) for r in rows) == list(range(30, 40))


def test_starting_timestamp_starts_at_the_first_message_stored_at_or_after_it(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 8, prefix="old")
    rows = read(spark, cluster, subscribe=topic).collect()
    cut_ms = max(int(r.timestamp.timestamp() * 1000) for r in rows) + 1
    while int(time.time() * 1000) <= cut_ms:  # store times are in ms: step past the cut
        time.sleep(0.002)
    send_many(producer, topic, 8, prefix="new")
    late = read(spark, cluster, subscribe=topic, startingTimestamp=cut_ms).collect()
    assert sorted(r.value for r in late) == sorted(f"new-{i}".encode() for i in range(8))


def test_subscribe_pattern_and_assign_choose_the_queues(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 8)
    by_pattern = read(spark, cluster, subscribePattern=f"{topic}|NoSuchTopic.*")
    assert by_pattern.count() == 8
    assign = json.dumps({topic: {"broker-b": [1]}})
    rows = read(spark, cluster, assign=assign).collect()
    assert {(r.broker, r.queueId) for r in rows} == {("broker-b", 1)}
    assert len(rows) == 2


def test_a_temporary_view_using_rocketq_reads_the_topic(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 6)
    spark.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW v_{topic} USING rocketq"
        f" OPTIONS (nameServer '{cluster.namesrv_addr}', subscribe '{topic}')"
    )
    assert spark.sql(f"SELECT count(*) AS n FROM v_{topic}").first().n == 6


def test_unknown_and_contradictory_options_are_refused_by_name(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    with pytest.raises(Exception, match=r"(?i)unknown read option.*startingofsets"):
        read(spark, cluster, subscribe=topic, startingOfsets="earliest").collect()
    with pytest.raises(Exception, match="subscribe, assign"):
        read(spark, cluster, subscribe=topic, assign="{}").collect()
    with pytest.raises(Exception, match="startingOffsets=latest"):
        read(spark, cluster, subscribe=topic, startingOffsets="latest").collect()


def test_ending_timestamps_end_before_the_first_message_stored_at_or_after_them(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 8, prefix="old")  # two per queue, then two "new" per queue
    rows = read(spark, cluster, subscribe=topic).collect()
    cut_ms = max(int(r.timestamp.timestamp() * 1000) for r in rows) + 1
    while int(time.time() * 1000) <= cut_ms:  # store times are in ms: step past the cut
        time.sleep(0.002)
    send_many(producer, topic, 8, prefix="new")
    early = read(spark, cluster, subscribe=topic, endingTimestamp=cut_ms).collect()
    assert sorted(r.value for r in early) == sorted(f"old-{i}".encode() for i in range(8))
    one_queue = json.dumps({topic: {"broker-a": {"0": cut_ms}}})  # the others: latest
    rows = read(spark, cluster, subscribe=topic, endingOffsetsByTimestamp=one_queue).collect()
    assert len(rows) == 14
    assert {r.value[:3] for r in rows if (r.broker, r.queueId) == ("broker-a", 0)} == {b"old"}
