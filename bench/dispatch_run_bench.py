"""Wall time of one dispatch run (``ReputMessageService.dispatch_now``), in process.

    PYTHONPATH=<tree>/src .venv/bin/python bench/dispatch_run_bench.py [--runs 3000] [--held]

A store (ASYNC_FLUSH, 256 MiB commitlog files, RocketMQ's default consume queue and index
sizes, its reput thread stopped) gets ``--per-run`` 1 KiB messages on topic BenchTopic
(four queues, a UNIQ_KEY and TAGS each, as a producer sends them), then one dispatch run
is timed; repeated ``--runs`` times, for a run of 1 (a lone send's flush) and of 32 (sync
32's). A listener is attached with nobody waiting (the broker between pulls), or with
``--held`` someone waiting all along (a held pull: the latency phase; the listener does
nothing, so the run's own cost of telling it is what is timed). Printed: the
median and mean run, and the median a record. Run it with two trees' ``src`` on
``PYTHONPATH``, alternated, to compare them on a loaded machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rocketq.store import FlushDiskType
from rocketq.testing.store import new_msg, open_store


def run(per_run: int, runs: int, held: bool = False) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="rocketq-dispatch-bench-") as root:
        store = open_store(
            Path(root),
            flush_disk_type=FlushDiskType.ASYNC_FLUSH,
            mapped_file_size_commit_log=256 << 20,
            mapped_file_size_consume_queue=300_000 * 20,
            max_hash_slot_num=5_000_000,
            max_index_num=20_000_000,
        )
        try:
            store.reput_service.shutdown()
            store.message_arriving_listener = lambda *a: None
            store.reput_service.arrival_wanted = lambda: held
            body = b"x" * 1024
            times: list[int] = []
            for i in range(runs):
                for k in range(per_run):
                    props = {"UNIQ_KEY": f"AC11{i * per_run + k:020d}", "TAGS": "TagA"}
                    msg = new_msg(topic="BenchTopic", queue_id=k % 4, body=body, properties=props)
                    store.put_message(msg)
                t0 = time.perf_counter_ns()
                store.reput_service.dispatch_now()
                times.append(time.perf_counter_ns() - t0)
        finally:
            store.shutdown()
    kept = times[runs // 10 :]  # after the warm-up
    return statistics.median(kept) / 1000, statistics.fmean(kept) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--per-run", type=int, nargs="*", default=[1, 32])
    parser.add_argument("--held", action="store_true", help="someone waits for an arrival")
    args = parser.parse_args()
    for per_run in args.per_run:
        median, mean = run(per_run, max(10, min(args.runs, 100_000)), args.held)
        print(
            f"run of {per_run:2d}: median {median:7.1f} us, mean {mean:7.1f} us"
            f" ({median / per_run:.2f} us a record)"
        )


if __name__ == "__main__":
    main()
