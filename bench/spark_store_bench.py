"""Spark benchmark of the store-file jobs on ``local[2]`` (the ``store`` row of spark_bench).

Store-file scan to Parquet: a store of ``--mib`` MiB is written through
the real MessageStore (64 MiB segments, 4 topics x 4 queues, random bodies of 200-2,000 bytes,
1 % of them carrying a magic code), then exported to Parquet partitioned by topic and UTC
date as ``rocketq spark export`` does (``jobs.write_dated_parquet``): by the ``rocketq-store``
source with splits of ``--split-mib`` (the source's default, one per segment here) and of
16 MiB, and by Spark's built-in JSON source from a JSON-lines copy of the same records
(bodies in base64, an explicit schema, so no inference pass) into the same columns through
the same writer. Reported: commitlog MiB/s of each, MiB per CPU-second (this process, the
JVM and its Python workers) and the ratio; each figure is the best of ``--runs`` (the runs
of the four figures interleaved) after a warm-up export through each source (the JIT
compiles the writer once, for both). Then the CPU split: the Python decode measured in
process, the rest of the noop scan, and Parquet.

Run: ``.venv/bin/python bench/spark_store_bench.py [--mib 256] [--runs 3] [--dir DIR]``.
Bounded by the store size: about 2 minutes for 256 MiB on 2 cores.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rocketq.common.message import MessageExt
from rocketq.common.record_layout import MESSAGE_MAGIC_CODE
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore

MIB = 1024 * 1024
SEGMENT_BYTES = 64 * MIB
SMALL_SPLIT_MIB = 16  # byte-range splits inside segments: 4 tasks per segment
TOPICS = ("BenchOrders", "BenchPayments", "BenchAudit", "BenchClicks")
JSON_DDL = (
    "topic STRING, broker STRING, queueId INT, queueOffset BIGINT, commitLogOffset BIGINT,"
    " msgId STRING, key STRING, keys STRING, tags STRING, value STRING,"
    " properties MAP<STRING, STRING>, bornMs BIGINT, storeMs BIGINT, bornHost STRING,"
    " storeHost STRING, reconsumeTimes INT, sysFlag INT, storeSize INT"
)


def write_store(root: Path, mib: int) -> int:
    """Messages until the commitlog holds ``mib`` MiB; returns the message count."""
    config = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=SEGMENT_BYTES,
        message_index_enable=False,
    )
    rng = random.Random(42)
    magic = MESSAGE_MAGIC_CODE.to_bytes(4, "big")
    store = MessageStore(config)
    store.load()
    store.start()
    n = 0
    try:
        while store.get_max_phy_offset() < mib * MIB:
            body = rng.randbytes(rng.randint(200, 2000))
            if n % 100 == 7:
                body = body[:100] + magic + body[100:]
            msg = MessageExt(
                topic=TOPICS[n % 4],
                body=body,
                properties={"KEYS": f"k{n}", "TAGS": f"T{n % 5}", "UNIQ_KEY": f"U{n:012d}"},
                queue_id=n // 4 % 4,
                born_timestamp=1_700_000_000_000 + n,
                born_host=("10.0.0.1", 40000),
                store_host=("127.0.0.1", 10911),
            )
            assert store.put_message(msg).status.name == "PUT_OK"
            n += 1
        store.wait_for_dispatch(60.0)
    finally:
        store.shutdown()
    return n


def write_json_copy(root: Path, out: Path, files: int = 4) -> None:
    """The same records as JSON lines, through the store source's own row function."""
    from rocketq.spark.store.options import StoreOptions
    from rocketq.spark.store.split import iter_split, message_decoder, plan_splits

    opts = StoreOptions.parse({"path": str(root)})
    splits = plan_splits(list(opts.stores), SEGMENT_BYTES)
    out.mkdir(parents=True)
    with contextlib.ExitStack() as stack:
        sinks = [
            stack.enter_context(open(out / f"part-{i}.jsonl", "w", encoding="utf-8"))
            for i in range(files)
        ]
        for i, split in enumerate(splits):
            sink = sinks[i % files]
            for msg in iter_split(split, message_decoder(True)):
                sink.write(json.dumps(json_row(msg, split.broker)) + "\n")


def json_row(msg: MessageExt, broker: str) -> dict[str, Any]:
    """The columns of ``JSON_DDL``: the store source's row with the body in base64."""
    from rocketq.spark.schema import host_text

    props = msg.properties
    keys = props.get("KEYS")
    return {
        "topic": msg.topic,
        "broker": broker,
        "queueId": msg.queue_id,
        "queueOffset": msg.queue_offset,
        "commitLogOffset": msg.commitlog_offset,
        "msgId": props.get("UNIQ_KEY") or msg.msg_id,
        "key": keys.split(" ")[0] if keys else None,
        "keys": keys,
        "tags": props.get("TAGS"),
        "value": base64.b64encode(msg.body).decode("ascii"),
        "properties": props,
        "bornMs": msg.born_timestamp,
        "storeMs": msg.store_timestamp,
        "bornHost": host_text(msg.born_host),
        "storeHost": host_text(msg.store_host),
        "reconsumeTimes": msg.reconsume_times,
        "sysFlag": msg.sys_flag,
        "storeSize": msg.store_size,
    }


def store_frame(spark: Any, root: Path, split_mib: int) -> Any:
    from rocketq.spark.store.jobs import read_store

    return read_store(spark, [str(root)], split_bytes=split_mib * MIB)


def export_store(spark: Any, root: Path, out: Path, split_mib: int) -> None:
    """What ``rocketq spark export`` does: the source, a date column, the export's writer."""
    from rocketq.spark.store.jobs import write_dated_parquet

    write_dated_parquet(store_frame(spark, root, split_mib), str(out), "overwrite")


def scan_noop(spark: Any, root: Path, split_mib: int) -> None:
    store_frame(spark, root, split_mib).write.format("noop").mode("overwrite").save()


def decode_in_process(root: Path, split_mib: int, columnar: bool) -> float:
    """CPU seconds of this process turning every split into Arrow batches (no Spark)."""
    from rocketq.spark.store.options import StoreOptions
    from rocketq.spark.store.rows import message_batches
    from rocketq.spark.store.source import read_split
    from rocketq.spark.store.split import iter_split, message_decoder, plan_splits

    opts = StoreOptions.parse({"path": str(root)})
    started = time.process_time()
    for split in plan_splits(list(opts.stores), split_mib * MIB):
        if columnar:
            batches = read_split(split, opts)
        else:
            batches = message_batches(iter_split(split, message_decoder(True)), split.broker)
        for _ in batches:
            pass
    return time.process_time() - started


def export_json(spark: Any, src: Path, out: Path) -> None:
    """The same columns from the JSON-lines copy, through the export's writer."""
    from rocketq.spark.store.jobs import write_dated_parquet

    df = spark.read.schema(JSON_DDL).json(str(src))
    df = df.selectExpr(
        "key",
        "unbase64(value) AS value",
        "topic",
        "broker",
        "queueId",
        "queueOffset",
        "commitLogOffset",
        "msgId",
        "keys",
        "tags",
        "properties",
        "timestamp_millis(bornMs) AS bornTimestamp",
        "timestamp_millis(storeMs) AS timestamp",
        "1 AS timestampType",
        "bornHost",
        "storeHost",
        "reconsumeTimes",
        "sysFlag",
        "storeSize",
    )
    write_dated_parquet(df, str(out), "overwrite")


def tree_cpu_seconds(root_pid: int) -> float:
    """User + system CPU of ``root_pid`` and its descendants, reaped ones included (/proc)."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(name)] = int(fields[1])
        ticks[int(name)] = sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    total = 0
    for pid, t in ticks.items():
        p = pid
        while p > 1 and p != root_pid:
            p = parent.get(p, 0)
        if p == root_pid:
            total += t
    return total / os.sysconf("SC_CLK_TCK")


class Meter:
    """Wall time and the CPU seconds of this process plus the JVM and its Python workers."""

    def __init__(self, spark: Any) -> None:
        self.jvm_pid = int(spark.sparkContext._gateway.proc.pid)

    def cpu(self) -> float:
        own = time.process_time()
        return own + tree_cpu_seconds(self.jvm_pid)

    def runs(self, count: int, fn: Any, *args: Any) -> list[tuple[float, float]]:
        out = []
        for _ in range(count):
            wall, cpu = time.perf_counter(), self.cpu()
            fn(*args)
            out.append((time.perf_counter() - wall, self.cpu() - cpu))
        return out


def report(label: str, mib: float, runs: list[tuple[float, float]]) -> float:
    """Prints the best wall rate and the CPU cost; returns the best wall time."""
    best = min(w for w, _ in runs)
    cpu = min(c for _, c in runs)
    walls = [round(w, 2) for w, _ in runs]
    print(
        f"{label}: {mib / best:.1f} MiB/s (best of {walls} s); "
        f"{mib / cpu:.1f} MiB per CPU-second ({cpu:.1f} CPU-s)",
        flush=True,
    )
    return best


def bench_store(args: argparse.Namespace, spark: Any, work: Path) -> None:
    root = work / "broker-a"
    t0 = time.perf_counter()
    count = write_store(root, args.mib)
    stored = sum(p.stat().st_size for p in (root / "commitlog").iterdir())
    from rocketq.spark.store.jobs import planned_bytes

    scanned = planned_bytes([str(root)], args.split_mib * MIB)
    print(
        f"store: {count} messages, {scanned / MIB:.1f} MiB of records "
        f"({stored / MIB:.0f} MiB of segments) in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    t0 = time.perf_counter()
    write_json_copy(root, work / "jsonl")
    json_mib = sum(p.stat().st_size for p in (work / "jsonl").iterdir()) / MIB
    print(f"json copy: {json_mib:.0f} MiB in {time.perf_counter() - t0:.1f} s", flush=True)
    # warm-up: Python workers started and the JVM's JIT through both paths, so that
    # neither source pays the Parquet writer's compilation for the other
    export_store(spark, root, work / "out-store", args.split_mib)
    export_json(spark, work / "jsonl", work / "out-json")
    meter = Meter(spark)
    mib = scanned / MIB
    split = args.split_mib
    noop: list[tuple[float, float]] = []
    mine: list[tuple[float, float]] = []
    small: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for _ in range(args.runs):  # interleaved, so that a burst of load hits every figure alike
        noop += meter.runs(1, scan_noop, spark, root, split)
        mine += meter.runs(1, export_store, spark, root, work / "out-store", split)
        theirs += meter.runs(1, export_json, spark, work / "jsonl", work / "out-json")
        small += meter.runs(1, export_store, spark, root, work / "out-small", SMALL_SPLIT_MIB)
    for out in ("out-store", "out-small", "out-json"):
        rows = spark.read.parquet(str(work / out)).count()
        assert rows == count, (out, rows, count)
    report("store-file scan to the noop sink (decode + Arrow, no Parquet)", mib, noop)
    best_mine = report(f"store-file scan to Parquet, local[2], {split} MiB splits", mib, mine)
    report(f"store-file scan to Parquet, {SMALL_SPLIT_MIB} MiB splits", mib, small)
    best_theirs = report("JSON-lines copy to Parquet (built-in json source)", mib, theirs)
    cpu_ratio = min(c for _, c in theirs) / min(c for _, c in mine)
    print(
        f"ratio store source / json source: {best_theirs / best_mine:.2f}x wall, "
        f"{cpu_ratio:.2f}x CPU",
        flush=True,
    )
    rows_cpu = decode_in_process(root, split, columnar=False)
    cols_cpu = decode_in_process(root, split, columnar=True)
    noop_cpu, export_cpu = min(c for _, c in noop), min(c for _, c in mine)
    per = 100 / mib
    print(
        f"CPU-s per 100 MiB: Python decode {per * cols_cpu:.2f} in process (the row decoder:"
        f" {per * rows_cpu:.2f}); the rest of the noop scan (IPC, Arrow to rows, Spark's Python"
        f" worker and tasks) {per * (noop_cpu - cols_cpu):.2f}; Parquet"
        f" {per * (export_cpu - noop_cpu):.2f}; whole export {per * export_cpu:.2f}",
        flush=True,
    )
    check_exact(spark, root)


def check_exact(spark: Any, root: Path) -> None:
    """Record offsets read with 1 MiB and (4 MiB + 777)-byte splits against the walk."""
    from rocketq.store.dump import RecordInfo, iter_commitlog_records

    walked = [r.offset for r in iter_commitlog_records(str(root)) if isinstance(r, RecordInfo)]
    for split_bytes in (MIB, 4 * MIB + 777):
        df = spark.read.format("rocketq-store").option("splitBytes", str(split_bytes))
        rows = df.load(str(root)).select("commitLogOffset").collect()
        got = sorted(r[0] for r in rows)
        parts = df.load(str(root)).rdd.getNumPartitions()
        verdict = "exact" if got == walked else "MISMATCH"
        print(
            f"splits of {split_bytes} bytes ({parts} partitions): {len(got)} records, "
            f"sequential walk {len(walked)}: {verdict}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="commitlog size to write")
    parser.add_argument(
        "--split-mib", type=int, default=64, help="store source split size (its default)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary one)")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="spark-bench-", dir=args.dir))
    try:
        bench_store(args, spark, work)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
