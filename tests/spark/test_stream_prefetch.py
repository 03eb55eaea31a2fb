"""``lowLatency=true``: micro-batches read in the planner process (``stream_prefetch``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rocketq.client.blocking import Producer
from rocketq.spark.topic.source import TopicSource
from rocketq.spark.topic.stream_prefetch import PREFETCH_MAX_OFFSETS, PrefetchStreamReader
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]
QUERY_TIMEOUT_S = 180


def stream(spark: Any, cluster: BackgroundCluster, topic: str, **options: Any) -> Any:
    reader = spark.readStream.format("rocketq").option("nameServer", cluster.namesrv_addr)
    for name, value in {"subscribe": topic, **options}.items():
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


def keys_in(out: Path) -> list[tuple[str, int, int]]:
    """The (broker, queueId, queueOffset) of every row in the Parquet files under ``out``."""
    return [(r["broker"], r["queueId"], r["queueOffset"]) for r in pq.read_table(out).to_pylist()]


def reader_of(cluster: BackgroundCluster, topic: str, **options: str) -> PrefetchStreamReader:
    opts = {"nameServer": cluster.namesrv_addr, "subscribe": topic, **options}
    reader = TopicSource(opts).simpleStreamReader(TopicSource(opts).schema())
    assert isinstance(reader, PrefetchStreamReader)
    return reader


def values_of(batches: Any) -> list[bytes]:
    return sorted(v for batch in batches for v in batch.column("value").to_pylist())


def test_read_returns_the_planned_rows_with_their_end_and_a_replay_reads_the_same(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    reader = reader_of(cluster, topic, maxOffsetsPerTrigger="6")
    start = reader.initialOffset()
    sent = send_many(producer, topic, 10)
    assert len({s.message_queue for s in sent}) == 4

    batches, end = reader.read(start)
    first = values_of(batches)
    assert len(first) == 6  # maxOffsetsPerTrigger holds in the planner's read too
    assert values_of(reader.readBetweenOffsets(start, end)) == first

    rest, last = reader.read(end)
    assert sorted(first + values_of(rest)) == sorted(f"m-{i}".encode() for i in range(10))
    empty, same = reader.read(last)
    assert list(empty) == []
    assert same == last


def test_a_read_without_max_offsets_per_trigger_is_capped() -> None:
    opts = {"nameServer": "127.0.0.1:9876", "subscribe": "t"}
    reader = TopicSource(opts).simpleStreamReader(TopicSource(opts).schema())
    assert isinstance(reader, PrefetchStreamReader)
    assert reader.planner.options.max_offsets_per_trigger == PREFETCH_MAX_OFFSETS
    capped = {**opts, "maxOffsetsPerTrigger": "5"}
    reader = TopicSource(capped).simpleStreamReader(TopicSource(capped).schema())
    assert isinstance(reader, PrefetchStreamReader)
    assert reader.planner.options.max_offsets_per_trigger == 5


def test_available_now_runs_the_admitted_batches_and_a_replayed_batch_reads_its_rows(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 40)
    df = stream(
        spark, cluster, topic, startingOffsets="earliest", maxOffsetsPerTrigger=12, lowLatency=True
    )
    cp, out = tmp_path / "cp", tmp_path / "out"
    assert [n for n in run_available_now(df, cp, out) if n] == [12, 12, 12, 4]
    keys = keys_in(out)
    assert len(keys) == len(set(keys)) == 40

    # the last batch planned but not committed: a restart reads it again, by a task this
    # time (PySpark's prefetched rows lived in the planner process that ended)
    last = max(int(p.name) for p in (cp / "commits").iterdir() if p.name.isdigit())
    (cp / "commits" / str(last)).unlink()
    (cp / "commits" / f".{last}.crc").unlink(missing_ok=True)
    shutil.rmtree(out)
    assert [n for n in run_available_now(df, cp, out) if n] == [4]
    replayed = keys_in(out)  # the files: the sink's own log now starts at the replayed batch
    assert len(replayed) == 4
    assert set(replayed) <= set(keys)
