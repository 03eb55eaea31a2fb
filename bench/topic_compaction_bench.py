"""What a topic create waits for while ``topics.json`` is compacted (issue 22, topic create
p99): one TopicConfigManager in this process, its table grown to ``--topics``; then creates
one after another, timed alone and while compactions run back to back in a thread (the worst
case: one compaction follows as many changes as the table has topics).

    .venv/bin/python bench/topic_compaction_bench.py --topics 100000

Printed: the compaction's seconds, joined from per-topic parts (``topic_config_text.py``)
against encoding the whole table as RocketMQ's TopicConfigManager#persist does (``encode``),
and create p50/p99 ms idle and during compactions. In-process: no network, no name server.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time

from rocketq.broker import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.fastjson import dumps_pretty


def topic(name: str) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=8, write_queue_nums=8)


def creates(m: TopicConfigManager, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        m.update_topic_config(topic(f"Create{time.time_ns()}"))
        out.append((time.perf_counter() - started) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--creates", type=int, default=200)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="topic-compaction-", dir=args.dir)
    try:
        m = TopicConfigManager(BrokerConfig(), root)
        m.load()
        m.compact_min_entries = 1 << 40  # compactions only where this bench runs them
        for k in range(0, args.topics, 1000):
            m.update_topic_config_list(topic(f"T{k + i:07d}") for i in range(1000))
        started = time.perf_counter()
        m.persist()
        ours = time.perf_counter() - started
        started = time.perf_counter()
        dumps_pretty(m.build_serialize_wrapper().to_json())
        whole = time.perf_counter() - started
        idle = creates(m, args.creates)
        stop = threading.Event()

        def compact() -> None:
            while not stop.is_set():
                m.persist()

        thread = threading.Thread(target=compact)
        thread.start()
        busy = creates(m, args.creates)
        stop.set()
        thread.join()
        print(f"{args.topics:,} topics")
        print(f"compaction s: joined parts {ours:.3f}, whole-table encode {whole:.3f}"
              f" (x{whole / ours:.1f})")  # fmt: skip
        for name, values in (("idle", idle), ("during compactions", busy)):
            print(
                f"create ms {name}: p50 {statistics.median(values):.2f} p99 {pct(values, 0.99):.2f}"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
