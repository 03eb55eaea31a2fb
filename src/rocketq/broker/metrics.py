"""BrokerMetricsCollector: the broker's figures as RocketMQ 5's metrics (BrokerMetricsConstant,
DefaultStoreMetricsConstant, RemotingMetricsConstant), read at scrape time.

Every series carries ``cluster``, ``node_type`` ("broker") and ``node_id`` (the broker name).
Counters come from ``BrokerStatsManager``; consumer lag and in-flight from the committed
offsets against each queue's max offset and the last pull offset; store gauges from the
store and its file system; ``rocketmq_rpc_latency`` from the server's ``RpcLatencyStats``.

A master also serves rocketmq-exporter's names (``exporter_metrics``, ``exporter_runtime``,
``client_metrics``), each with the exporter's own labels and definition; docs/operating.md
sets the two lag definitions side by side.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from rocketq.broker.broker_stats_manager import (
    GROUP_GET_NUMS,
    GROUP_GET_SIZE,
    MESSAGE_SIZE_BOUNDS,
)
from rocketq.broker.client_metrics import ClientRuntimeFamilies
from rocketq.broker.exporter_metrics import ExporterFamilies
from rocketq.broker.exporter_runtime import runtime_families
from rocketq.broker.runtime_info import broker_runtime_info
from rocketq.common.topic import is_dlq_topic, is_retry_topic, is_system_topic
from rocketq.remoting.metrics_exporter import NODE_LABELS, MetricsExporter, rpc_latency_family
from rocketq.store.config import BrokerRole

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

__all__ = ["BrokerMetricsCollector", "MetricsExporter", "rpc_latency_family"]

log = logging.getLogger(__name__)


def _is_system(topic: str) -> str:
    return "true" if is_system_topic(topic) or is_dlq_topic(topic) else "false"


def _is_retry(topic: str) -> str:
    return "true" if is_retry_topic(topic) else "false"


class BrokerMetricsCollector(Collector):
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        try:  # built by the broker's start, on its loop: client running info is asked there
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self.clients = ClientRuntimeFamilies(controller, loop)

    @property
    def node(self) -> tuple[str, str, str]:
        cfg = self.broker.config
        return (cfg.broker_cluster_name, "broker", cfg.broker_name)

    def collect(self) -> Iterator[Metric]:
        try:
            yield from self._messages()
            yield from self._consumers()
            yield from self._broker()
            yield from self._timer()
            yield from self._pop()
            yield rpc_latency_family(self.broker.rpc_latency_stats, self.node)
            if self.broker.config.broker_role is not BrokerRole.SLAVE:
                yield from self._exporter()
        except Exception:  # a scrape must not take the exporter down; say why in the log
            log.exception("collecting broker metrics failed")
            raise

    def _exporter(self) -> Iterator[Metric]:
        """rocketmq-exporter's families, which it reads from masters only."""
        yield from ExporterFamilies(self.broker).collect()
        table = broker_runtime_info(self.broker)
        cluster = self.broker.config.broker_cluster_name
        yield from runtime_families(table, cluster, self.broker.broker_addr)
        yield from self.clients.collect()

    def _messages(self) -> Iterator[Metric]:
        node, stats = self.node, self.broker.broker_stats_manager
        labels = (*NODE_LABELS, "topic", "message_type", "is_system")
        msgs_in = CounterMetricFamily(
            "rocketmq_messages_in", "Messages put into the broker", labels=labels
        )
        bytes_in = CounterMetricFamily(
            "rocketmq_throughput_in", "Bytes put into the broker", labels=labels
        )
        for (topic, message_type), (count, size) in sorted(dict(stats.put_by_type).items()):
            values = [*node, topic, message_type, _is_system(topic)]
            msgs_in.add_metric(values, count)
            bytes_in.add_metric(values, size)
        out_labels = (*NODE_LABELS, "topic", "consumer_group", "is_retry", "is_system")
        msgs_out = CounterMetricFamily(
            "rocketmq_messages_out", "Messages pulled from the broker", labels=out_labels
        )
        bytes_out = CounterMetricFamily(
            "rocketmq_throughput_out", "Bytes pulled from the broker", labels=out_labels
        )
        for family, name in ((msgs_out, GROUP_GET_NUMS), (bytes_out, GROUP_GET_SIZE)):
            for item in sorted(stats.sets[name].items(), key=lambda i: i.stats_key):
                topic, _, group = item.stats_key.partition("@")
                values = [*node, topic, group, _is_retry(topic), _is_system(topic)]
                family.add_metric(values, item.value)
        sizes = HistogramMetricFamily(
            "rocketmq_message_size",
            "Size of the messages put, in bytes",
            labels=(*NODE_LABELS, "topic"),
        )
        put_by_type = dict(stats.put_by_type)
        for topic, counts in sorted(dict(stats.message_sizes).items()):
            total_bytes = sum(size for (t, _), (_, size) in put_by_type.items() if t == topic)
            cumulative, buckets = 0, []
            for bound, count in zip((*MESSAGE_SIZE_BOUNDS, float("inf")), counts, strict=True):
                cumulative += count
                buckets.append(("+Inf" if bound == float("inf") else str(bound), cumulative))
            sizes.add_metric([*node, topic], buckets=buckets, sum_value=total_bytes)
        yield from (msgs_in, bytes_in, msgs_out, bytes_out, sizes)

    def _consumers(self) -> Iterator[Metric]:
        node = self.node
        labels = (*NODE_LABELS, "topic", "consumer_group", "is_retry")
        lag = GaugeMetricFamily(
            "rocketmq_consumer_lag_messages", "Messages not yet consumed", labels=labels
        )
        inflight = GaugeMetricFamily(
            "rocketmq_consumer_inflight_messages",
            "Messages pulled but not yet committed",
            labels=labels,
        )
        ready = GaugeMetricFamily(
            "rocketmq_consumer_ready_messages", "Messages ready to be pulled", labels=labels
        )
        pulled = dict(self.broker.broker_stats_manager.pull_offsets)
        table = self.broker.consumer_offset_manager.encode()["offsetTable"]
        store = self.broker.message_store
        for key, queues in sorted(table.items()):
            topic, _, group = key.partition("@")
            total_lag = total_inflight = 0
            for queue_id, committed in queues.items():
                max_offset = store.get_max_offset_in_queue(topic, queue_id)
                total_lag += max(0, max_offset - committed)
                total_inflight += max(
                    0, min(pulled.get((topic, group, queue_id), 0), max_offset) - committed
                )
            values = [*node, topic, group, _is_retry(topic)]
            lag.add_metric(values, total_lag)
            inflight.add_metric(values, total_inflight)
            ready.add_metric(values, total_lag - total_inflight)
        connections = GaugeMetricFamily(
            "rocketmq_consumer_connections",
            "Consumers connected, by group",
            labels=(*NODE_LABELS, "consumer_group"),
        )
        for group, info in sorted(dict(self.broker.consumer_manager.consumer_table).items()):
            connections.add_metric([*node, group], len(info.channel_info_table))
        producers = GaugeMetricFamily(
            "rocketmq_producer_connections",
            "Producers connected, by group",
            labels=(*NODE_LABELS, "producer_group"),
        )
        for group, channels in sorted(
            dict(self.broker.producer_manager.group_channel_table).items()
        ):
            producers.add_metric([*node, group], len(channels))
        yield from (lag, inflight, ready, connections, producers)

    def _broker(self) -> Iterator[Metric]:
        node, store = self.node, self.broker.message_store
        permission = GaugeMetricFamily(
            "rocketmq_broker_permission", "The broker's permission bits", labels=NODE_LABELS
        )
        permission.add_metric(list(node), self.broker.config.broker_permission)
        info = store.get_runtime_info()
        store_labels = (*NODE_LABELS, "storage_type", "storage_medium")
        store_values = [*node, "local", "disk"]
        size = GaugeMetricFamily(
            "rocketmq_storage_size", "Bytes held by the commit log", labels=store_labels
        )
        max_offset = int(info.get("commitLogMaxOffset", "0") or 0)
        min_offset = int(info.get("commitLogMinOffset", "0") or 0)
        size.add_metric(store_values, max(0, max_offset - min_offset))
        dispatch = GaugeMetricFamily(
            "rocketmq_storage_dispatch_behind_bytes",
            "Commit log bytes not yet dispatched to consume queues and index",
            labels=store_labels,
        )
        dispatch.add_metric(store_values, int(info.get("dispatchBehindBytes", "0") or 0))
        topics = GaugeMetricFamily(
            "rocketmq_topic_number", "Topics the broker holds", labels=NODE_LABELS
        )
        topics.add_metric(list(node), len(self.broker.topic_config_manager.topic_config_table))
        groups = GaugeMetricFamily(
            "rocketmq_consumer_group_number",
            "Subscription groups the broker holds",
            labels=NODE_LABELS,
        )
        groups.add_metric(
            list(node), len(self.broker.subscription_group_manager.subscription_group_table)
        )
        yield from (permission, size, dispatch, topics, groups)

    def _timer(self) -> Iterator[Metric]:
        """DefaultStoreMetricsManager's timer series, from the timer's own counts."""
        timer = self.broker.message_store.timer_message_store
        if timer is None:
            return
        node = self.node
        topic_labels = (*NODE_LABELS, "topic")
        timing = GaugeMetricFamily(
            "rocketmq_timing_messages", "Current message number in timing", labels=topic_labels
        )
        for topic, count in sorted(dict(timer.timing_count).items()):
            timing.add_metric([*node, topic], count)
        enqueued = CounterMetricFamily(
            "rocketmq_timer_enqueue", "Total number of timer enqueue", labels=topic_labels
        )
        for topic, count in sorted(dict(timer.enqueue_total).items()):
            enqueued.add_metric([*node, topic], count)
        dequeued = CounterMetricFamily(
            "rocketmq_timer_dequeue", "Total number of timer dequeue", labels=topic_labels
        )
        for topic, count in sorted(dict(timer.dequeue_total).items()):
            dequeued.add_metric([*node, topic], count)
        dequeue_lag = GaugeMetricFamily(
            "rocketmq_timer_dequeue_lag", "Timer dequeue messages lag", labels=NODE_LABELS
        )
        dequeue_lag.add_metric(list(node), timer.dequeue_lag())
        enqueue_lag = GaugeMetricFamily(
            "rocketmq_timer_enqueue_lag", "Timer enqueue messages lag", labels=NODE_LABELS
        )
        enqueue_lag.add_metric(list(node), timer.enqueue_lag())
        yield from (timing, enqueued, dequeued, dequeue_lag, enqueue_lag)

    def _pop(self) -> Iterator[Metric]:
        """PopMetricsManager's revive series: records behind and ms behind per revive queue,
        revived messages by (topic, group, put status)."""
        revive = self.broker.pop_service.revive
        node = self.node
        queue_labels = (*NODE_LABELS, "queue_id")
        lag = GaugeMetricFamily(
            "rocketmq_pop_revive_lag", "The processing lag of revive topic", labels=queue_labels
        )
        latency = GaugeMetricFamily(
            "rocketmq_pop_revive_latency",
            "The processing latency of revive topic",
            labels=queue_labels,
        )
        for queue in revive.queues:
            lag.add_metric([*node, str(queue.queue_id)], revive.lag(queue))
            latency.add_metric([*node, str(queue.queue_id)], revive.latency_ms(queue))
        retried = CounterMetricFamily(
            "rocketmq_pop_revive_retry_messages",
            "Total number of retry message",
            labels=(*NODE_LABELS, "topic", "consumer_group", "put_status"),
        )
        for (topic, group, status), count in sorted(revive.retry_messages_total.items()):
            retried.add_metric([*node, topic, group, status], count)
        yield from (lag, latency, retried)
