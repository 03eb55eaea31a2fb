"""rocketmq-exporter's names on the broker's /metrics: every metric and label the exporter's two
Grafana dashboards query (tests/broker/exporter_dashboard_metrics.json, taken from their JSON)
is in a live scrape, and the group lag agrees between ``rocketmq_group_diff``, mqadmin
consumerProgress (GET_CONSUME_STATS), our dashboard's figure and the overview dashboard's own
expression, all counting a queue with no committed offset from 0, while RocketMQ 5's
``rocketmq_consumer_lag_messages`` keeps counting such a queue as 0."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rocketq.admin import AsyncAdminClient, ConsumerRunningInfo, ProcessQueueInfo
from rocketq.broker.client_metrics import reports_topic
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.testing.cluster import FAST_CLIENT, collecting_consumer
from rocketq.testing.wait import until
from tests.broker.metrics_cluster import metrics_cluster, scrape

TOPIC = "MetricsTopic"  # metrics_cluster made it: 1 queue, 8 messages, MetricsGroup at 5
LAG_GROUP = "MetricsGroup"
LIVE_GROUP = "ExporterLiveGroup"
DASHBOARDS = json.loads((Path(__file__).parent / "exporter_dashboard_metrics.json").read_text())

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def values(samples: Samples, name: str, **labels: str) -> list[float]:
    return [v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items()]


def one(samples: Samples, name: str, **labels: str) -> float:
    found = values(samples, name, **labels)
    assert len(found) == 1, (name, labels, found)
    return found[0]


def to_queue(queue_id: int) -> Any:
    return lambda mqs, msg, arg: next(mq for mq in mqs if mq.queue_id == queue_id)


async def backlog_on_a_queue_the_group_never_committed(cluster: Any) -> None:
    """MetricsTopic grows to 3 queues; 2 messages go to queue 0 and 3 to the new queue 2."""
    broker = cluster.broker
    broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=TOPIC, read_queue_nums=3, write_queue_nums=3)
    )
    dlq = TopicConfig(topic_name=f"%DLQ%{LAG_GROUP}", read_queue_nums=1, write_queue_nums=1)
    broker.topic_config_manager.update_topic_config(dlq)
    await broker.register_broker_all()
    async with Producer("ExporterProducer", namesrv_addr=cluster.namesrv.addr, **FAST_CLIENT) as p:
        for queue_id, count in ((0, 2), (2, 3)):
            for i in range(count):
                await p.send(
                    Message(TOPIC, f"q{queue_id}-{i}".encode()), selector=to_queue(queue_id)
                )
    store = broker.message_store
    assert await until(lambda: store.get_max_offset_in_queue(TOPIC, 2) == 3, 30)


async def test_every_dashboard_metric_and_label_is_in_a_live_scrape_and_the_lags_agree(
    tmp_path: Path,
) -> None:
    async with metrics_cluster(tmp_path) as cluster:
        await backlog_on_a_queue_the_group_never_committed(cluster)
        consumer, got = collecting_consumer(LIVE_GROUP, cluster.namesrv.addr, TOPIC)
        await consumer.start()
        try:
            assert await until(lambda: len(got) == 13, 30)
            # off the loop: the broker (same loop) asks its consumers during the scrape
            samples = await asyncio.to_thread(scrape, cluster.broker_metrics_url)
        finally:
            await consumer.shutdown()
        async with AsyncAdminClient(cluster.namesrv.addr) as admin:
            progress = await admin.examine_consume_stats(LAG_GROUP, TOPIC)
            whole_group = await admin.examine_consume_stats(LAG_GROUP)
    missing = [
        (name, labels)
        for name, labels in DASHBOARDS["metrics"].items()
        if not any(n == name and set(labels) <= dict(ls).keys() for n, ls in samples)
    ]
    assert not missing, missing
    # committed 5 of 10 on queue 0, nothing on queue 1 (empty) nor on queue 2 (3 messages)
    diff = one(samples, "rocketmq_group_diff", group=LAG_GROUP, topic=TOPIC)
    assert diff == progress.compute_total_diff() == 8
    overview = sum(values(samples, "rocketmq_producer_offset", topic=TOPIC)) - sum(
        values(samples, "rocketmq_consumer_offset", topic=TOPIC, group=LAG_GROUP)
    )
    assert overview == diff  # rocketmq_exporter_overview.json's lag expression
    group_total = sum(values(samples, "rocketmq_group_diff", group=LAG_GROUP)) + sum(
        values(samples, "rocketmq_group_retrydiff", group=LAG_GROUP)
    )
    assert group_total == whole_group.compute_total_diff()  # our dashboard's group figure
    lag5 = one(samples, "rocketmq_consumer_lag_messages", consumer_group=LAG_GROUP, topic=TOPIC)
    assert lag5 == 5  # RocketMQ 5: queue 2, never committed, counts 0
    assert one(samples, "rocketmq_group_diff", group=LAG_GROUP, msgModel="1") == 8
    assert one(samples, "rocketmq_group_get_latency_by_storetime", group=LAG_GROUP, topic=TOPIC) > 0
    assert one(samples, "rocketmq_topic_dlq_offset", group=LAG_GROUP) == 0
    assert one(samples, "rocketmq_client_consumer_pull_tps", group=LIVE_GROUP, topic=TOPIC) > 0
    assert one(samples, "rocketmq_producer_tps", topic=TOPIC) > 0
    puts = sum(values(samples, "rocketmq_messages_in_total"))
    assert one(samples, "rocketmq_brokeruntime_msg_put_total_today_now") == puts == 13
    assert one(samples, "rocketmq_brokeruntime_commitlog_maxoffset") > 0
    pmdt = [k for k in DASHBOARDS["metrics"] if k.startswith("rocketmq_brokeruntime_pmdt_")]
    assert sum(one(samples, name) for name in pmdt) == 13  # one put latency per send


def test_the_dashboard_list_names_the_exporter_families_it_was_taken_from() -> None:
    names = set(DASHBOARDS["metrics"])
    assert len(names) == 56
    assert DASHBOARDS["metrics"]["rocketmq_group_diff"] == ["group", "topic"]
    assert DASHBOARDS["scrape_config_labels"] == ["Cluster", "Env"]


def test_one_broker_reports_a_clients_topic_the_first_by_name_among_its_queues() -> None:
    def info(*queues: tuple[str, str]) -> ConsumerRunningInfo:
        table = {
            MessageQueueData(topic=topic, broker_name=name, queue_id=0): ProcessQueueInfo()
            for topic, name in queues
        }
        return ConsumerRunningInfo(mq_table=table)

    both = info(("T", "broker-b"), ("T", "broker-a"), ("U", "broker-c"))
    assert [reports_topic(both, "T", b) for b in ("broker-a", "broker-b")] == [True, False]
    assert reports_topic(both, "U", "broker-c")
    assert not reports_topic(both, "U", "broker-a")
    # holds no queue of the topic (more consumers than queues): the first of any topic reports
    assert reports_topic(both, "%RETRY%G", "broker-a")
    assert not reports_topic(both, "%RETRY%G", "broker-c")
    assert reports_topic(info(), "T", "broker-z")  # holds nothing: every broker
