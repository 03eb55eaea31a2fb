"""NamesrvMetricsCollector: the name server's ``/metrics``, read at scrape time.

``rocketmq_rpc_latency`` (RemotingMetricsConstant) for every request it answered, and two
gauges of its route table that RocketMQ does not export under a standard name:
``rocketmq_namesrv_live_brokers`` and ``rocketmq_namesrv_topics``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.remoting.metrics_exporter import NODE_LABELS, rpc_latency_family
from rocketq.remoting.rpc_stats import RpcLatencyStats


class NamesrvState(Protocol):
    """What the collector reads of the name server (NamesrvController has it)."""

    route_info_manager: RouteInfoManager
    rpc_latency_stats: RpcLatencyStats

    @property
    def addr(self) -> str: ...


class NamesrvMetricsCollector(Collector):
    def __init__(self, controller: NamesrvState) -> None:
        self.namesrv = controller

    def collect(self) -> Iterator[Metric]:
        node = ("", "nameserver", self.namesrv.addr)
        yield rpc_latency_family(self.namesrv.rpc_latency_stats, node)
        routes = self.namesrv.route_info_manager
        brokers = GaugeMetricFamily(
            "rocketmq_namesrv_live_brokers", "Brokers registered and alive", labels=NODE_LABELS
        )
        brokers.add_metric(list(node), len(dict(routes.broker_live_table)))
        topics = GaugeMetricFamily(
            "rocketmq_namesrv_topics", "Topics in the route table", labels=NODE_LABELS
        )
        topics.add_metric(list(node), len(dict(routes.topic_queue_table)))
        yield from (brokers, topics)
