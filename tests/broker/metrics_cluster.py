"""A name server and a broker with their /metrics on (metricsExporterType=PROM, port 0), and
traffic through them: messages produced, a group that consumed some of them, then more sent."""

from __future__ import annotations

import contextlib
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from rocketq.broker.controller import BrokerController
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController, start_namesrv
from rocketq.testing.broker import run_broker
from rocketq.testing.cluster import FAST_CLIENT, collecting_consumer
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

TOPIC = "MetricsTopic"
GROUP = "MetricsGroup"
CONSUMED = 5
BEHIND = 3


@dataclass
class MetricsCluster:
    namesrv: NamesrvController
    broker: BrokerController

    @property
    def broker_metrics_url(self) -> str:
        assert self.broker.metrics_exporter is not None
        return str(self.broker.metrics_exporter.url)

    @property
    def namesrv_metrics_url(self) -> str:
        assert self.namesrv.metrics_exporter is not None
        return self.namesrv.metrics_exporter.url


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value of every sample at ``url``."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def sample(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    found = [
        v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items()
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0]


async def send(namesrv_addr: str, count: int) -> None:
    async with Producer("MetricsProducer", namesrv_addr=namesrv_addr, **FAST_CLIENT) as producer:
        for i in range(count):
            await producer.send(Message(TOPIC, f"m{i}".encode()))


@contextlib.asynccontextmanager
async def metrics_cluster(tmp: Path) -> AsyncIterator[MetricsCluster]:
    config = NamesrvConfig(metrics_exporter_type="PROM", metrics_prom_exporter_port=0)
    namesrv = await start_namesrv(config=config)
    try:
        async with run_broker(
            tmp / "store",
            namesrv_addr=namesrv.addr,
            store_properties=small_store_properties(),
            metrics_exporter_type="PROM",
            metrics_prom_exporter_host="127.0.0.1",
            metrics_prom_exporter_port=0,
        ) as broker:
            cluster = MetricsCluster(namesrv, broker)
            await traffic(cluster)
            yield cluster
    finally:
        await namesrv.shutdown()


async def traffic(cluster: MetricsCluster) -> None:
    from rocketq.broker.topic_config import TopicConfig

    broker = cluster.broker
    broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=TOPIC, read_queue_nums=1, write_queue_nums=1)
    )
    await broker.register_broker_all()
    await send(cluster.namesrv.addr, CONSUMED)
    consumer, got = collecting_consumer(GROUP, cluster.namesrv.addr, TOPIC)
    await consumer.start()
    try:
        assert await until(lambda: len(got) == CONSUMED, 30)
        offsets = broker.consumer_offset_manager
        assert await until(lambda: offsets.query_offset(GROUP, TOPIC, 0) == CONSUMED, 30)
    finally:
        await consumer.shutdown()
    await send(cluster.namesrv.addr, BEHIND)
    # a send is answered once appended; the lag reads the consume queue, which the reput
    # thread fills right after
    store = broker.message_store
    total = CONSUMED + BEHIND
    assert await until(lambda: store.get_max_offset_in_queue(TOPIC, 0) == total, 30)
