"""Promises of issue 10 that no other test pins: reads acknowledge nothing, sends are checked.

A read pulls planned ranges and commits no offset for its pull group, so nothing on the
broker changes when a task is retried or a batch replayed. A send the broker refuses fails
the write (the task checks every send before it returns) instead of being counted as stored.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AdminClient
from rocketq.client.blocking import Producer
from rocketq.common.message import MessageQueue
from rocketq.common.topic_config import PERM_READ, TopicConfig
from rocketq.spark.topic.pull_client import PULL_GROUP
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import SMALL_STORE, send_many

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def read(spark: Any, namesrv: str, topic: str) -> list[Any]:
    reader = spark.read.format("rocketq").option("nameServer", namesrv)
    return reader.option("subscribe", topic).load().collect()


def test_a_read_commits_no_offset_on_the_brokers(
    spark: Any, cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 12)
    assert len(read(spark, cluster.namesrv_addr, topic)) == 12
    for broker in cluster.brokers.values():  # the brokers' own offset tables
        assert broker.consumer_offset_manager.query_offsets(PULL_GROUP, topic) == {}


def test_a_send_the_broker_refuses_fails_the_write_with_the_brokers_reason(
    spark: Any, tmp_path: Path
) -> None:
    # the name server must keep routing sends to the topic while the broker refuses them: a
    # broker of its own that re-registers only when asked (a periodic registration would carry
    # the read-only perm to the name server, and the sink would fail for want of a route)
    with BackgroundCluster(
        tmp_path / "c", ("broker-a",), SMALL_STORE, register_name_server_period_ms=3_600_000
    ) as cluster:
        topic = "SparkRefusedTopic"
        cluster.create_topic(topic, queues=2)
        broker = cluster.brokers["broker-a"]
        config = TopicConfig(
            topic_name=topic, read_queue_nums=2, write_queue_nums=2, perm=PERM_READ
        )
        cluster.run(asyncio.to_thread(broker.topic_config_manager.update_topic_config, config))
        df = spark.createDataFrame([(f"v{i}",) for i in range(3)], "value STRING").coalesce(1)
        writer = df.write.format("rocketq").mode("append")
        writer = writer.option("nameServer", cluster.namesrv_addr).option("topic", topic)
        with pytest.raises(Exception, match=rf"the topic\[{topic}\] sending message is forbidden"):
            writer.save()
        with AdminClient(cluster.namesrv_addr) as admin:
            mqs = [MessageQueue(topic, "broker-a", q) for q in (0, 1)]
            assert sum(admin.max_offset(mq) for mq in mqs) == 0
