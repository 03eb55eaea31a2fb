"""What the broker's statistics and /metrics cost.

    .venv/bin/python bench/ops_bench.py --topics 200 --scrapes 20

Rows (one JSON line each): the per-message cost of BrokerStatsManager's put and get recording
(record_put + record_put_latency, record_get) in process; and a /metrics scrape of an
in-process broker holding ``--topics`` topics with two consumer groups each (p50 and p99 ms,
bytes), over HTTP on loopback. Bounded by the counts given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.testing.broker import run_broker


def record_cost(count: int) -> dict[str, object]:
    stats = BrokerStatsManager("bench")
    topics = [f"T{i}" for i in range(100)]
    started = time.perf_counter()
    for i in range(count):
        stats.record_put(topics[i % 100], 1, 300)
        stats.record_put_latency(0.2)
    put_ns = (time.perf_counter() - started) * 1e9 / count
    started = time.perf_counter()
    for i in range(count):
        stats.record_get("G", topics[i % 100], i % 4, 1, 300, i)
    get_ns = (time.perf_counter() - started) * 1e9 / count
    return {
        "row": "stats recording",
        "count": count,
        "put_ns": round(put_ns),
        "get_ns": round(get_ns),
    }


async def scrape_cost(topics: int, scrapes: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        async with run_broker(
            Path(tmp) / "store",
            metrics_exporter_type="PROM",
            metrics_prom_exporter_host="127.0.0.1",
            metrics_prom_exporter_port=0,
        ) as broker:
            stats, offsets = broker.broker_stats_manager, broker.consumer_offset_manager
            for i in range(topics):
                for group in ("GA", "GB"):
                    for qid in range(4):
                        stats.record_get(group, f"T{i}", qid, 1, 100, 1)
                        offsets.commit_offset("bench", group, f"T{i}", qid, 0)
                stats.record_put(f"T{i}", 1, 100)
            assert broker.metrics_exporter is not None
            url = broker.metrics_exporter.url

            def one() -> tuple[float, int]:
                started = time.perf_counter()
                with urllib.request.urlopen(url, timeout=30) as response:
                    size = len(response.read())
                return (time.perf_counter() - started) * 1000, size

            times, size = [], 0
            for _ in range(scrapes):
                ms, size = await asyncio.to_thread(one)
                times.append(ms)
    times.sort()
    return {
        "row": "/metrics scrape",
        "topics": topics,
        "groups_per_topic": 2,
        "scrapes": scrapes,
        "p50_ms": round(statistics.median(times), 1),
        "p99_ms": round(times[int(len(times) * 0.99) - 1 if len(times) > 1 else 0], 1),
        "bytes": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(record_cost(args.count)))
    print(json.dumps(asyncio.run(scrape_cost(args.topics, args.scrapes))))


if __name__ == "__main__":
    main()
