"""A micro-batch's small queue ranges share a task (``rocketq.spark.topic.stream``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.spark.topic.offset_reader import QueueRange
from rocketq.spark.topic.stream import PACKED_RECORDS, pack_ranges, spread_ranges
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many

QUERY_TIMEOUT_S = 180


def ranges_of(*sizes: int) -> list[QueueRange]:
    return [QueueRange("T", "broker-a", i, 100, 100 + size) for i, size in enumerate(sizes)]


def test_pack_ranges_groups_small_ranges_in_order_up_to_the_cap() -> None:
    ranges = ranges_of(10, 20, 30)
    assert pack_ranges(ranges) == [tuple(ranges)]
    half = PACKED_RECORDS // 2
    ranges = ranges_of(half, half, 1, PACKED_RECORDS + 5, 3)
    assert pack_ranges(ranges) == [
        (ranges[0], ranges[1]),
        (ranges[2],),
        (ranges[3],),
        (ranges[4],),
    ]


def test_pack_ranges_caps_a_group_at_max_records_per_partition() -> None:
    ranges = ranges_of(3, 3, 3, 3, 1)
    assert pack_ranges(ranges, max_records=6) == [
        (ranges[0], ranges[1]),
        (ranges[2], ranges[3]),
        (ranges[4],),
    ]
    assert pack_ranges([]) == []


def test_spread_ranges_cuts_a_batch_read_into_equal_shares_in_queue_order() -> None:
    ranges = ranges_of(10, 1, 5, 0)
    groups = spread_ranges(ranges, 2)
    assert [sum(r.size for r in g) for g in groups] == [8, 8]
    assert groups[0] == (QueueRange("T", "broker-a", 0, 100, 108),)
    assert groups[1] == (
        QueueRange("T", "broker-a", 0, 108, 110),
        QueueRange("T", "broker-a", 1, 100, 101),
        QueueRange("T", "broker-a", 2, 100, 105),
    )
    assert [sum(r.size for r in g) for g in spread_ranges(ranges, 3)] == [5, 5, 6]
    assert len(spread_ranges(ranges_of(2), 4)) == 2  # never an empty task
    assert spread_ranges([], 2) == []


def batches_of(spark: Any, cluster: BackgroundCluster, topic: str, cp: Path, **options: Any) -> Any:
    """Run an availableNow query; each batch's (partition count, queue keys) in order."""
    seen: list[tuple[int, list[tuple[str, int, int]]]] = []

    def sink(batch: Any, _batch_id: int) -> None:
        rows = batch.select("broker", "queueId", "queueOffset").collect()
        seen.append((batch.rdd.getNumPartitions(), [tuple(r) for r in rows]))

    reader = (
        spark.readStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(cp))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S), "the availableNow query did not finish"
    assert query.exception() is None
    return [b for b in seen if b[1]]


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_a_small_micro_batch_over_four_queues_runs_as_one_task_and_reads_each_message_once(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    sent = send_many(producer, topic, 20)
    assert len({s.message_queue for s in sent}) == 4
    [(partitions, keys)] = batches_of(spark, cluster, topic, tmp_path / "packed")
    assert partitions == 1
    expected = {
        (s.message_queue.broker_name, s.message_queue.queue_id, s.queue_offset) for s in sent
    }
    assert len(keys) == 20
    assert set(keys) == expected

    [(partitions, keys)] = batches_of(spark, cluster, topic, tmp_path / "split", minPartitions=4)
    assert partitions == 4
    assert set(keys) == expected
