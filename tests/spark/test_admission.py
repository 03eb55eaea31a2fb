"""The stream reader's driver side against a real cluster, without a SparkSession."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.spark.topic.offsets import offsets_of
from rocketq.spark.topic.options import ReadOptions
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable

from rocketq.spark.topic.source import TopicStreamReader

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]


def reader(cluster: BackgroundCluster, topic: str, **options: str) -> TopicStreamReader:
    raw = {"nameserver": cluster.namesrv_addr, "subscribe": topic, **options}
    return TopicStreamReader(ReadOptions.parse(raw, streaming=True))


def total(offset: dict[str, Any]) -> int:
    return sum(offsets_of(offset).values())


def test_min_offsets_per_trigger_holds_a_trigger_until_enough_or_the_delay_passes(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    source = reader(
        cluster, topic, startingoffsets="earliest", minoffsetspertrigger="10", maxtriggerdelay="2s"
    )
    limit = source.getDefaultReadLimit()
    # the delay counts from batch 0's trigger, as Kafka's from its lastTriggerMillis: a slow
    # send_many below eats into it
    started = time.monotonic()
    batch0 = source.latestOffset(source.initialOffset(), limit)
    assert "init" in batch0  # batch 0 always runs: it carries the resolved start
    send_many(producer, topic, 4)
    assert source.latestOffset(batch0, limit) is batch0  # 4 < 10: no new batch yet
    while (end := source.latestOffset(batch0, limit)) is batch0:
        assert time.monotonic() - started < 30, "maxTriggerDelay never fired"
        time.sleep(0.05)
    assert time.monotonic() - started >= 2.0
    assert total(end) == 4
    send_many(producer, topic, 10)
    assert total(source.latestOffset(end, limit)) == 14  # enough at once


def test_available_now_never_passes_the_target_fixed_at_query_start(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 8)
    source = reader(cluster, topic, startingoffsets="earliest", maxoffsetspertrigger="3")
    start = source.initialOffset()
    source.prepareForTriggerAvailableNow()
    send_many(producer, topic, 8, prefix="late")
    seen = []
    while True:
        end = source.latestOffset(start, source.getDefaultReadLimit())
        if end is start:
            break
        seen.append(total(end) - total(start))
        start = end
        assert len(seen) < 10
    assert seen == [3, 3, 2]
    assert total(source.latestOffset(start, ReadAllAvailable())) == 8


def test_latest_offset_report_shows_the_lag_behind_the_planned_end(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 12)
    source = reader(cluster, topic, startingoffsets="earliest", maxoffsetspertrigger="5")
    source.latestOffset(source.initialOffset(), source.getDefaultReadLimit())
    report = source.reportLatestOffset()
    assert report is not None
    assert report["lag"] == 7
    assert total(report) == 12


def test_starting_offsets_by_timestamp_resolve_per_queue_and_the_strategy_decides_past_the_end(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    from rocketq.common.message import MessageQueue
    from rocketq.errors import SparkOptionError
    from rocketq.spark.topic.offset_reader import OffsetReader

    sent = send_many(producer, topic, 8)
    mq = MessageQueue(topic, "broker-a", 0)
    mine = [s for s in sent if s.message_queue == mq]
    future_ms = int(time.time() * 1000) + 3_600_000
    by_ts = json.dumps({topic: {"broker-a": {"0": 0, "1": future_ms}}})
    options = {"nameserver": cluster.namesrv_addr, "subscribe": topic}
    strict = OffsetReader(
        ReadOptions.parse({**options, "startingoffsetsbytimestamp": by_ts}, streaming=False)
    )
    queues = [mq, MessageQueue(topic, "broker-a", 1)]
    with pytest.raises(SparkOptionError, match="startingOffsetsByTimestampStrategy=latest"):
        strict.resolve_start(queues, "earliest")
    lenient = OffsetReader(
        ReadOptions.parse(
            {
                **options,
                "startingoffsetsbytimestamp": by_ts,
                "startingoffsetsbytimestampstrategy": "latest",
            },
            streaming=False,
        )
    )
    start = lenient.resolve_start([*queues, MessageQueue(topic, "broker-b", 0)], "earliest")
    assert start[mq] == mine[0].queue_offset == 0  # timestamp 0: the first message
    assert start[queues[1]] == 2  # nothing that new: the end (2 messages in that queue)
    assert start[MessageQueue(topic, "broker-b", 0)] == 0  # not listed: the default


def test_max_bytes_per_trigger_admits_by_the_consume_queue_sizes(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    from rocketq.admin import AdminClient
    from rocketq.common.message import Message, MessageQueue
    from tests.spark.conftest import wait_visible

    mq = MessageQueue(topic, "broker-a", 0)
    sent = [producer.send(Message(topic, b"x" * 100), message_queue=mq) for _ in range(12)]
    wait_visible(producer, sent)
    with AdminClient(cluster.namesrv_addr) as admin:
        addr = admin.master_addrs_of_topic(topic)["broker-a"]
        units = admin.query_consume_queue(addr, topic, 0, 0, 12).queue_data
    sizes = [unit.physic_size for unit in units]
    assert len(sizes) == 12
    assert len(set(sizes)) == 1
    limit = sizes[0] * 3 + sizes[0] // 2
    source = reader(cluster, topic, startingoffsets="earliest", maxbytespertrigger=str(limit))
    start = source.initialOffset()
    source.prepareForTriggerAvailableNow()
    seen = []
    while (end := source.latestOffset(start, source.getDefaultReadLimit())) is not start:
        seen.append(total(end) - total(start))
        start = end
        assert len(seen) < 10
    assert seen == [3, 3, 3, 3]
    tiny = reader(cluster, topic, startingoffsets="earliest", maxbytespertrigger="1")
    first = tiny.latestOffset(tiny.initialOffset(), tiny.getDefaultReadLimit())
    assert total(first) == 1  # one message larger than the budget still moves the stream
