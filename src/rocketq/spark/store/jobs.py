"""Spark jobs over store directories: export to Parquet and statistics (rebuild is in
``rebuild``). Each takes a SparkSession the caller owns and reads through the
``rocketq-store`` source, so the executors do the decoding; only small results reach the
driver. Dates and hours are UTC, whatever the session's time zone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocketq.spark.store.source import SOURCE_NAME, StoreDataSource

MIB = 1024 * 1024
Progress = Callable[[str], None]
TRANSACTION_SKIPPED = "(sysFlag & 12) IN (4, 12)"  # prepared or rolled back: no queue offset


def read_store(
    spark: Any,
    stores: Sequence[str],
    *,
    broker_names: Sequence[str] = (),
    split_bytes: int | None = None,
    verify_crc: bool = True,
    skip_corrupt: bool = False,
    output: str = "messages",
    extra: dict[str, str] | None = None,
) -> Any:
    """A DataFrame over ``stores`` (registers the source on sessions that lack it)."""
    spark.dataSource.register(StoreDataSource)
    reader = spark.read.format(SOURCE_NAME).option("paths", ",".join(stores))
    if broker_names:
        reader = reader.option("brokerNames", ",".join(broker_names))
    if split_bytes is not None:
        reader = reader.option("splitBytes", str(split_bytes))
    reader = reader.option("verifyCrc", str(verify_crc).lower())
    reader = reader.option("onCorruptRecord", "skip" if skip_corrupt else "fail")
    reader = reader.option("output", output)
    for key, value in (extra or {}).items():
        reader = reader.option(key, value)
    return reader.load()


# ---------------------------------------------------------------------- export


@dataclass(frozen=True, slots=True)
class ExportResult:
    rows: int
    commitlog_bytes: int
    seconds: float

    @property
    def mib_per_s(self) -> float:
        return self.commitlog_bytes / MIB / self.seconds if self.seconds > 0 else 0.0


def export_parquet(
    spark: Any,
    stores: Sequence[str],
    out: str,
    *,
    overwrite: bool = False,
    progress: Progress | None = None,
    **read_options: Any,
) -> ExportResult:
    """Write every record as Parquet under ``out``, partitioned by topic and UTC date."""
    df = read_store(spark, stores, **read_options)
    scanned = planned_bytes(stores, read_options.get("split_bytes"))
    if progress is not None:
        progress(f"export: {scanned / MIB:.1f} MiB of commitlog from {len(stores)} store(s)")
    started = time.monotonic()
    with StageProgress(spark, progress, "export"):
        write_dated_parquet(df, out, "overwrite" if overwrite else "errorifexists")
    seconds = time.monotonic() - started
    rows = spark.read.parquet(out).count()
    return ExportResult(rows, scanned, seconds)


#: The UTC date of the store time: the export's second partition column.
DATE_SQL = "date_from_unix_date(CAST(floor(unix_millis(timestamp) / 86400000) AS INT))"
#: Columns with (nearly) one value per record: a Parquet dictionary only costs the writer
#: time before it falls back to plain pages (bodies alone: about 1 CPU-s per 256 MiB).
UNIQUE_COLUMNS = (
    "value",
    "msgId",
    "key",
    "keys",
    "commitLogOffset",
    "queueOffset",
    "bornTimestamp",
    "timestamp",
)
EXPORT_WRITE_OPTIONS = {f"parquet.enable.dictionary#{c}": "false" for c in UNIQUE_COLUMNS}


def write_dated_parquet(df: Any, out: str, mode: str) -> None:
    """``df`` with a ``date`` column, as Parquet partitioned by topic and date (the export's
    layout and writer settings; the benchmark writes its JSON reference through it too)."""
    from pyspark.sql import functions as F

    writer = df.withColumn("date", F.expr(DATE_SQL)).write.mode(mode)
    for key, value in EXPORT_WRITE_OPTIONS.items():
        writer = writer.option(key, value)
    writer.partitionBy("topic", "date").parquet(out)


def planned_bytes(stores: Sequence[str], split_bytes: int | None = None) -> int:
    """Commitlog bytes the splits of ``stores`` cover (the scan's input size)."""
    from rocketq.spark.store.split import DEFAULT_SPLIT_BYTES, StoreInput, plan_splits

    inputs = [StoreInput(s, str(i)) for i, s in enumerate(stores)]
    splits = plan_splits(inputs, split_bytes or DEFAULT_SPLIT_BYTES)
    return sum(s.size_bytes for s in splits)


class StageProgress:
    """Reports the running stages' finished tasks every ``interval_s`` while a job runs."""

    def __init__(self, spark: Any, report: Progress | None, label: str, interval_s: float = 1.0):
        self._tracker = spark.sparkContext.statusTracker()
        self._report = report
        self._label = label
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{label}-progress", daemon=True)
        self._last = ""

    def __enter__(self) -> StageProgress:
        if self._report is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        assert self._report is not None
        while not self._stop.wait(self._interval_s):
            parts = []
            for stage_id in sorted(self._tracker.getActiveStageIds()):
                info = self._tracker.getStageInfo(stage_id)
                if info is not None:
                    parts.append(f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks}")
            line = f"{self._label}: " + ", ".join(parts) if parts else ""
            if line and line != self._last:
                self._report(line)
                self._last = line


# ---------------------------------------------------------------------- stats


@dataclass(slots=True)
class StoreStats:
    """Messages and bytes per topic, (topic, tag) and (topic, UTC hour); queue gaps."""

    topics: list[tuple[str, int, int]] = field(default_factory=list)
    tags: list[tuple[str, str, int, int]] = field(default_factory=list)
    hours: list[tuple[str, int, int, int]] = field(default_factory=list)  # hour as epoch ms
    queues: list[tuple[str, str, int, int, int, int]] = field(default_factory=list)
    gaps: list[tuple[str, str, int, int, int]] = field(default_factory=list)  # first..last missing


def store_stats(spark: Any, stores: Sequence[str], **read_options: Any) -> StoreStats:
    """One scan (cached columns without bodies), four small aggregations."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    df = read_store(spark, stores, **read_options).select(
        "broker",
        "topic",
        "queueId",
        "queueOffset",
        F.coalesce("tags", F.lit("")).alias("tag"),
        "storeSize",
        "sysFlag",
        (F.floor(F.unix_millis("timestamp") / 3_600_000) * 3_600_000).alias("hourMs"),
    )
    df = df.persist()
    try:
        stats = StoreStats()
        by = _count_bytes(df, "topic")
        stats.topics = [(r.topic, r.messages, r.bytes) for r in by]
        by = _count_bytes(df, "topic", "tag")
        stats.tags = [(r.topic, r.tag, r.messages, r.bytes) for r in by]
        by = _count_bytes(df, "topic", "hourMs")
        stats.hours = [(r.topic, int(r.hourMs), r.messages, r.bytes) for r in by]
        queued = df.where(f"NOT {TRANSACTION_SKIPPED}")
        q = ["broker", "topic", "queueId"]
        summary = queued.groupBy(*q).agg(
            F.count("*").alias("n"),
            F.min("queueOffset").alias("lo"),
            F.max("queueOffset").alias("hi"),
        )
        stats.queues = [
            (r.broker, r.topic, r.queueId, r.n, r.lo, r.hi) for r in summary.orderBy(*q).collect()
        ]
        w = Window.partitionBy(*q).orderBy("queueOffset")
        gaps = (
            queued.select(*q, "queueOffset", F.lag("queueOffset").over(w).alias("prev"))
            .where("queueOffset - prev > 1")
            .orderBy(*q, "queueOffset")
        )
        stats.gaps = [
            (r.broker, r.topic, r.queueId, r.prev + 1, r.queueOffset - 1) for r in gaps.collect()
        ]
        return stats
    finally:
        df.unpersist()


def _count_bytes(df: Any, *cols: str) -> list[Any]:
    from pyspark.sql import functions as F

    agg = df.groupBy(*cols).agg(F.count("*").alias("messages"), F.sum("storeSize").alias("bytes"))
    return list(agg.orderBy(*cols).collect())
