"""``rocketmq_rpc_latency`` of the gRPC endpoint (the Java proxy's ProxyMetricsManager view):
one histogram in milliseconds per (RPC name, response ``Code`` name, is_long_polling), with
``protocol_type="grpc"``, read at scrape time by a collector beside the broker's own series.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from prometheus_client.core import HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from rocketq.remoting.rpc_stats import LatencyHistogram

NODE_LABELS = ("cluster", "node_type", "node_id")


class GrpcRpcStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_rpc: dict[tuple[str, str, bool], LatencyHistogram] = {}

    def observe(self, rpc: str, code: str, elapsed_s: float, *, long_polling: bool) -> None:
        key = (rpc, code, long_polling)
        with self._lock:
            histogram = self._by_rpc.get(key)
            if histogram is None:
                histogram = self._by_rpc[key] = LatencyHistogram()
            histogram.observe(elapsed_s * 1000.0)

    def snapshot(self) -> dict[tuple[str, str, bool], LatencyHistogram]:
        with self._lock:
            return {key: h.copy() for key, h in self._by_rpc.items()}


class GrpcMetricsCollector:
    """A prometheus_client collector of one endpoint's RPC latencies."""

    def __init__(self, stats: GrpcRpcStats, node: tuple[str, str, str]) -> None:
        self.stats = stats
        self.node = node

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(
            "rocketmq_rpc_latency",
            "Time to answer a gRPC request, in milliseconds",
            labels=(*NODE_LABELS, "protocol_type", "request_code", "response_code",
                    "is_long_polling"),
        )  # fmt: skip
        for (rpc, code, polling), histogram in sorted(self.stats.snapshot().items()):
            family.add_metric(
                [*self.node, "grpc", rpc, code, "true" if polling else "false"],
                buckets=histogram.cumulative(),
                sum_value=histogram.sum_ms,
            )
        yield family
