"""The sink's ``delayLevel`` column (at least once): delayed per the broker's delay levels.

The broker runs with ``messageDelayLevel=1s 3s``, so the test takes seconds. A delayed row
is stored first in SCHEDULE_TOPIC_XXXX and re-put into its topic when due; the re-put gets a
new store time, so ``timestamp - bornTimestamp`` of every delivered row is at least its
level's delay: delivered after the delay, never before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AdminClient
from rocketq.common.message import MessageQueue
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.wait import until_sync
from tests.spark.conftest import SMALL_STORE

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]
DELAYS_MS = {1: 1000, 2: 3000, 7: 3000}  # above the last level: the last (RocketMQ's rule)


def write(df: Any, namesrv: str, topic: str) -> None:
    df.write.format("rocketq").mode("append").option("nameServer", namesrv).option(
        "topic", topic
    ).save()


def read(spark: Any, namesrv: str, topic: str) -> list[Any]:
    reader = spark.read.format("rocketq").option("nameServer", namesrv)
    return reader.option("subscribe", topic).load().collect()


def stored(namesrv: str, topic: str) -> int:
    with AdminClient(namesrv) as admin:
        return sum(admin.max_offset(MessageQueue(topic, "broker-a", q)) for q in range(4))


def test_rows_with_a_delay_level_are_delivered_after_their_delay_and_not_before(
    spark: Any, tmp_path: Path
) -> None:
    props = {**SMALL_STORE, "messageDelayLevel": "1s 3s"}
    with BackgroundCluster(tmp_path / "c", ("broker-a",), props) as cluster:
        topic = "SparkDelayedTopic"
        cluster.create_topic(topic, queues=4)
        # None and 0: at once; 1: one second; 2: three seconds on one sharding key; 7: as 2
        rows = [
            (f"v{i}", [None, 0, 1, 2, 7][i % 5], "k" if i % 5 == 3 else None) for i in range(40)
        ]
        df = spark.createDataFrame(rows, "value STRING, delayLevel INT, shardingKey STRING")
        write(df.repartition(2), cluster.namesrv_addr, topic)

        assert until_sync(lambda: stored(cluster.namesrv_addr, topic) >= 40, 60, 0.1)
        got = read(spark, cluster.namesrv_addr, topic)
    assert sorted(r.value.decode() for r in got) == sorted(v for v, _, _ in rows)
    level_of = {v: level or 0 for v, level, _ in rows}
    for row in got:
        level = level_of[row.value.decode()]
        waited_ms = (row.timestamp - row.bornTimestamp).total_seconds() * 1000
        assert waited_ms >= DELAYS_MS.get(level, 0), (row.value, level, waited_ms)
    sharded = {(r.broker, r.queueId) for r in got if level_of[r.value.decode()] == 2}
    assert len(sharded) == 1  # the sharding key's queue, kept through the delay


def test_a_negative_or_non_integer_delay_level_is_refused_and_nothing_is_sent(
    spark: Any, cluster: BackgroundCluster, topic: str
) -> None:
    rows = [("a", 1), ("b", -1), ("c", None)]
    bad = spark.createDataFrame(rows, "value STRING, delayLevel INT").coalesce(1)
    with pytest.raises(Exception, match=r"delayLevel -1 is not a delay level"):
        write(bad, cluster.namesrv_addr, topic)
    text = spark.createDataFrame([("a", "2")], "value STRING, delayLevel STRING")
    with pytest.raises(Exception, match=r"column delayLevel must be integer or long or short"):
        write(text, cluster.namesrv_addr, topic)
    assert read(spark, cluster.namesrv_addr, topic) == []
