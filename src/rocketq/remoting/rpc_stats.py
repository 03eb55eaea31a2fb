"""RpcLatencyStats: how long each request code took to answer, by response code, kept as the
bucket counts of RocketMQ 5's ``rocketmq_rpc_latency`` histogram (RemotingMetricsManager).

A server's response listener feeds it; the Prometheus collectors of the broker and the name
server read ``snapshot()`` at scrape time, so nothing is counted twice.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from operator import attrgetter

from rocketq.remoting import native_frames
from rocketq.remoting.native_frames import RPC_LATENCIES
from rocketq.remoting.protocol.command import RemotingCommand

_CODE = attrgetter("code")

# upper bounds in milliseconds (RemotingMetricsManager's rpc latency view)
RPC_LATENCY_BUCKETS_MS = (1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 1000.0, 2000.0, 3000.0, 10000.0)


@dataclass(slots=True)
class LatencyHistogram:
    """Cumulative-later bucket counts (one count per bucket, +Inf last) and the sum in ms."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(RPC_LATENCY_BUCKETS_MS) + 1))
    sum_ms: float = 0.0

    def observe(self, value_ms: float) -> None:
        # the first bucket whose bound is >= the value (+Inf past the last): one per answer
        self.counts[bisect.bisect_left(RPC_LATENCY_BUCKETS_MS, value_ms)] += 1
        self.sum_ms += value_ms

    def cumulative(self) -> list[tuple[str, int]]:
        """(le, cumulative count) pairs as a Prometheus histogram exposes them."""
        total, out = 0, []
        for bound, count in zip((*RPC_LATENCY_BUCKETS_MS, float("inf")), self.counts, strict=True):
            total += count
            out.append(("+Inf" if bound == float("inf") else repr(bound), total))
        return out

    def copy(self) -> LatencyHistogram:
        return LatencyHistogram(list(self.counts), self.sum_ms)


_UNUSED = LatencyHistogram()  # a placeholder, replaced before the first observe


class RpcLatencyStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_code: dict[tuple[int, int], LatencyHistogram] = {}

    def on_response(
        self, request: RemotingCommand, response: RemotingCommand, elapsed_s: float
    ) -> None:
        key = (request.code, response.code)
        with self._lock:
            histogram = self._by_code.get(key)
            if histogram is None:
                histogram = self._by_code[key] = LatencyHistogram()
            histogram.observe(elapsed_s * 1000.0)

    def on_responses(
        self, requests: list[RemotingCommand], response: RemotingCommand, elapsed_s: list[float]
    ) -> None:
        """``on_response`` for each of ``requests`` (answered together), under one lock."""
        code = response.code
        table = self._by_code
        native = native_frames.FRAMES
        with self._lock:
            if (  # a flush's burst (one request code): the loop below in one C call
                native is not None
                and requests
                and len(requests) == len(elapsed_s)
                and (len(requests) == 1 or len(set(map(_CODE, requests))) == 1)
            ):
                key = (requests[0].code, code)
                histogram = table.get(key) or table.setdefault(key, LatencyHistogram())
                total = native.count_figures(
                    histogram.counts,
                    RPC_LATENCY_BUCKETS_MS,
                    elapsed_s,
                    1000.0,
                    RPC_LATENCIES,
                    histogram.sum_ms,
                )
                if total is not None:
                    histogram.sum_ms = total
                    return
            last: int | None = None
            histogram = _UNUSED
            counts = histogram.counts
            bounds = RPC_LATENCY_BUCKETS_MS
            for request, elapsed in zip(requests, elapsed_s, strict=True):
                if request.code != last:  # a burst is mostly one request code
                    last = request.code
                    histogram = table.get((last, code)) or table.setdefault(
                        (last, code), LatencyHistogram()
                    )
                    counts = histogram.counts
                value_ms = elapsed * 1000.0  # LatencyHistogram.observe's steps, inline
                counts[bisect.bisect_left(bounds, value_ms)] += 1
                histogram.sum_ms += value_ms

    def snapshot(self) -> dict[tuple[int, int], LatencyHistogram]:
        """(request code, response code) -> a copy of its histogram."""
        with self._lock:
            return {key: h.copy() for key, h in self._by_code.items()}
