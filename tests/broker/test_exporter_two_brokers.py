"""rocketmq-exporter's names over two brokers: each reports its own queues, so the dashboards'
sums (``sum(rocketmq_group_diff) by (group, topic)``) give consumerProgress's total, and a
consumer's own figures (``rocketmq_client_*``) come from one broker only, not from both."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, collecting_consumer
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from tests.broker.metrics_cluster import scrape

TOPIC = "Spread"
METRICS: dict[str, Any] = {
    "metrics_exporter_type": "PROM",
    "metrics_prom_exporter_host": "127.0.0.1",
    "metrics_prom_exporter_port": 0,
    "store_properties": small_store_properties(),
}


def to_queue(broker_name: str, queue_id: int) -> Any:
    return lambda mqs, msg, arg: next(
        mq for mq in mqs if (mq.broker_name, mq.queue_id) == (broker_name, queue_id)
    )


async def consume_all(namesrv: str, group: str, count: int) -> None:
    consumer, got = collecting_consumer(group, namesrv, TOPIC)
    await consumer.start()
    try:
        assert await until(lambda: len(got) == count, 30)
    finally:
        await consumer.shutdown()


def total(samples: list[Any], name: str, **labels: str) -> float:
    return float(
        sum(
            value
            for scraped in samples
            for (n, ls), value in scraped.items()
            if n == name and labels.items() <= dict(ls).items()
        )
    )


@pytest.mark.timeout(60)
async def test_two_brokers_sum_to_consumer_progress_and_count_a_client_once(
    tmp_path: Path,
) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(tmp_path / "a", namesrv_addr=ns.addr, **METRICS) as a,
        run_broker(tmp_path / "b", namesrv_addr=ns.addr, broker_name="broker-b", **METRICS) as b,
        AsyncAdminClient(ns.addr) as admin,
    ):
        spread = TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2)
        await admin.create_and_update_topic_config_in_cluster("DefaultCluster", spread)
        async with Producer("SpreadProducer", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
            for i in range(8):
                await producer.send(Message(TOPIC, f"m{i}".encode()))
        await consume_all(ns.addr, "LagGroup", 8)
        offsets = [br.consumer_offset_manager for br in (a, b)]
        assert await until(
            lambda: sum(sum(o.query_offsets("LagGroup", TOPIC).values()) for o in offsets) == 8,
            15,
        )
        # broker-b grows a queue LagGroup never commits on; 3 there, 2 more on broker-a's queue 0
        b.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=3, write_queue_nums=3)
        )
        await b.register_broker_all()
        async with Producer("SpreadProducer2", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
            for name, queue_id, count in (("broker-b", 2, 3), ("broker-a", 0, 2)):
                for _ in range(count):
                    await producer.send(Message(TOPIC, b"x"), selector=to_queue(name, queue_id))
        consumer, got = collecting_consumer("LiveGroup", ns.addr, TOPIC)
        await consumer.start()
        try:
            assert await until(lambda: len(got) == 13, 30)
            urls = [br.metrics_exporter.url for br in (a, b) if br.metrics_exporter is not None]
            samples = [await asyncio.to_thread(scrape, url) for url in urls]
        finally:
            await consumer.shutdown()
        progress = await admin.examine_consume_stats("LagGroup", TOPIC)
    assert total(samples, "rocketmq_group_diff", group="LagGroup", topic=TOPIC) == 5
    assert progress.compute_total_diff() == 5
    per_broker = [total([s], "rocketmq_group_diff", group="LagGroup") for s in samples]
    assert per_broker == [2, 3]
    assert total(samples, "rocketmq_consumer_lag_messages", consumer_group="LagGroup") == 2
    assert total(samples, "rocketmq_producer_offset", topic=TOPIC) == 13
    pull_tps = [
        [ls for (n, ls) in s if n == "rocketmq_client_consumer_pull_tps" and ("topic", TOPIC) in ls]
        for s in samples
    ]
    assert [len(series) for series in pull_tps] == [1, 0]  # broker-a reports, broker-b does not
    assert dict(pull_tps[0][0])["group"] == "LiveGroup"
