"""MetricsExporter: ``/metrics`` in Prometheus' text format over HTTP, for one server.

Each broker or name server gets its own ``CollectorRegistry`` holding one collector that reads
the server's counters at scrape time (prometheus_client's custom-collector pattern), so two
servers in one process never share series. The HTTP server is prometheus_client's, on its own
thread; port 0 picks a free port (``port`` tells which).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from rocketq.errors import IllegalStateError
from rocketq.remoting.rpc_stats import RpcLatencyStats

log = logging.getLogger(__name__)

# the labels every series of a node carries (BrokerMetricsConstant)
NODE_LABELS = ("cluster", "node_type", "node_id")


def rpc_latency_family(stats: RpcLatencyStats, node: tuple[str, str, str]) -> Metric:
    """RemotingMetricsConstant's ``rocketmq_rpc_latency`` histogram (milliseconds)."""
    family = HistogramMetricFamily(
        "rocketmq_rpc_latency",
        "Time to answer a remoting request, in milliseconds",
        labels=(*NODE_LABELS, "protocol_type", "request_code", "response_code"),
    )
    for (request_code, response_code), histogram in sorted(stats.snapshot().items()):
        family.add_metric(
            [*node, "remoting", str(request_code), str(response_code)],
            buckets=histogram.cumulative(),
            sum_value=histogram.sum_ms,
        )
    return family


class MetricsExporter:
    def __init__(self, collector: Collector) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.host = ""
        self.port = 0

    def start(self, host: str, port: int) -> int:
        if self._server is not None:
            raise IllegalStateError("the metrics exporter is already started")
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        self.host, self.port = host, int(self._server.server_port)
        log.info("metrics on http://%s:%d/metrics", host, self.port)
        return self.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def stop(self) -> None:
        server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
