"""Writing DataFrames to topics: batch and streaming, at least once, checked sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def read_topic(spark: Any, cluster: BackgroundCluster, topic: str) -> list[Any]:
    return (
        spark.read.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
        .load()
        .collect()
    )


def write(df: Any, cluster: BackgroundCluster, **options: Any) -> None:
    writer = df.write.format("rocketq").mode("append").option("nameServer", cluster.namesrv_addr)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def test_write_then_read_round_trips_value_keys_tags_and_properties(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    rows = [
        (f"v{i}", f"k{i}", "a b" if i % 2 else None, f"t{i % 3}", {"seq": str(i)})
        for i in range(300)
    ]
    df = spark.createDataFrame(
        rows, "value STRING, key STRING, keys STRING, tags STRING, properties MAP<STRING,STRING>"
    ).repartition(3)
    write(df, cluster, topic=topic)

    got = read_topic(spark, cluster, topic)
    assert len(got) == 300
    by_value = {r.value.decode(): r for r in got}
    for value, key, keys, tags, props in rows:
        row = by_value[value]
        assert row.key == key
        assert row.keys == (f"{key} {keys}" if keys else key)
        assert row.tags == tags
        assert row.properties["seq"] == props["seq"]


def test_rows_with_one_sharding_key_land_in_one_queue_in_order(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    rows = [(bytes([i]), "order-7" if i % 2 else "order-8") for i in range(60)]
    df = spark.createDataFrame(rows, "value BINARY, shardingKey STRING").coalesce(1)
    write(df, cluster, topic=topic)

    got = read_topic(spark, cluster, topic)
    for parity in (0, 1):
        mine = sorted((r for r in got if r.value[0] % 2 == parity), key=lambda r: r.queueOffset)
        assert len({(r.broker, r.queueId) for r in mine}) == 1
        assert [r.value[0] for r in mine] == list(range(parity, 60, 2))


def test_the_topic_option_wins_over_the_topic_column(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    df = spark.createDataFrame([("x", "ElsewhereTopic")], "value STRING, topic STRING")
    write(df, cluster, topic=topic)
    assert [r.value for r in read_topic(spark, cluster, topic)] == [b"x"]


def test_bad_input_is_refused_before_anything_is_sent(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    with pytest.raises(Exception, match=r"does not know the column.*colour"):
        write(
            spark.createDataFrame([("x", "red")], "value STRING, colour STRING"),
            cluster,
            topic=topic,
        )
    with pytest.raises(Exception, match="needs a value column"):
        write(spark.createDataFrame([("x",)], "body STRING"), cluster, topic=topic)
    one = spark.createDataFrame([("x",)], "value STRING")
    with pytest.raises(Exception, match="exactly_once needs the checkpointLocation option"):
        write(one, cluster, topic=topic, deliveryGuarantee="exactly_once")
    overwrite = one.write.format("rocketq").mode("overwrite").option("topic", topic)
    with pytest.raises(Exception, match="append-only"):
        overwrite.option("nameServer", cluster.namesrv_addr).save()
    with pytest.raises(Exception, match="null value"):
        write(spark.createDataFrame([(None,)], "value STRING"), cluster, topic=topic)
    assert read_topic(spark, cluster, topic) == []


def test_a_stream_mirrored_from_topic_to_topic_carries_every_message(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 50)
    target = f"{topic}Mirror"
    cluster.create_topic(target, queues=2)
    query = (
        spark.readStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select("value", "key", "tags")
        .writeStream.format("rocketq")
        .option("nameServer", cluster.namesrv_addr)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None
    mirrored = read_topic(spark, cluster, target)
    assert sorted(r.value for r in mirrored) == sorted(f"m-{i}".encode() for i in range(50))
    assert {r.tags for r in mirrored} == {"even", "odd"}
