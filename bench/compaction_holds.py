"""How long a topics.json compaction holds the GIL at a stretch (issue 22, topic create's
tail): the figure a create on the event loop waits for when a compaction runs beside it.

    .venv/bin/python bench/compaction_holds.py --topics 50000,100000
    .venv/bin/python bench/compaction_holds.py --topics 100000 --shuffled  # names not in order

In one process: a TopicConfigManager filled to half the size and compacted, then to the size
(so the compaction merges as many new names as it keeps), then one compaction (``persist``)
timed. The compaction lets the GIL go by ``time.sleep`` between its pieces; the bench times
the compacting thread's CPU (``time.thread_time``: user and system, so a loaded machine's
waits are not counted) between two sleeps and prints the longest stretches. A stretch can
include a system call that lets the GIL go (a write, an fsync): an upper bound of the GIL's
hold. The peer in the same run: the compaction's whole CPU time, what one GIL-holding call
would cost. Run it with another tree's ``src`` on PYTHONPATH to measure that tree.
"""

from __future__ import annotations

import argparse
import gc
import random
import tempfile
import time
import types

from rocketq.broker import topic_config_text
from rocketq.broker.config import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig

BATCH = 1000


def measure(size: int, shuffled: bool) -> tuple[float, float, int, list[float]]:
    """(CPU ms, wall ms, GIL releases, the three longest stretches' CPU ms)."""
    stretches: list[float] = []
    last = [time.thread_time()]

    def sleep(seconds: float) -> None:
        stretches.append((time.thread_time() - last[0]) * 1000)
        time.sleep(seconds)
        last[0] = time.thread_time()

    # the module's sleeps counted: its ``time`` seen through a shim (every tree has one)
    shim = types.SimpleNamespace(sleep=sleep, perf_counter=time.perf_counter, time=time.time)
    topic_config_text.time = shim  # type: ignore[assignment]
    names = [f"Scale{i:07d}" for i in range(size)]
    if shuffled:
        random.Random(7).shuffle(names)
    gc.disable()  # the collector's pauses are another figure (scale_bench --gc-trace)
    with tempfile.TemporaryDirectory() as tmp:
        m = TopicConfigManager(BrokerConfig(), tmp)
        m.compact_min_entries = 1 << 40  # the timed compaction only
        for half, stop in ((0, size // 2), (size // 2, size)):
            for i in range(half, stop, BATCH):
                m.update_topic_config_list(
                    TopicConfig(topic_name=n, read_queue_nums=8, write_queue_nums=8)
                    for n in names[i : min(stop, i + BATCH)]
                )
            if half == 0:
                m.persist()
        stretches.clear()
        cpu, wall = time.thread_time(), time.perf_counter()
        last[0] = cpu
        m.persist()
        stretches.append((time.thread_time() - last[0]) * 1000)
        cpu_ms = (time.thread_time() - cpu) * 1000
        wall_ms = (time.perf_counter() - wall) * 1000
    gc.enable()
    return cpu_ms, wall_ms, len(stretches) - 1, sorted(stretches)[-3:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", default="50000,100000")
    ap.add_argument("--shuffled", action="store_true", help="names created in random order")
    args = ap.parse_args()
    print("| topics | compaction CPU ms | wall ms | GIL releases | longest stretches CPU ms |")
    print("|---|---|---|---|---|")
    for size in (int(s) for s in args.topics.split(",")):
        cpu, wall, releases, longest = measure(size, args.shuffled)
        stretches = ", ".join(f"{s:.1f}" for s in reversed(longest))
        print(f"| {size:,} | {cpu:.0f} | {wall:.0f} | {releases} | {stretches} |")


if __name__ == "__main__":
    main()
