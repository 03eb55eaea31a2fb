"""A read's tasks: queue ranges packed into few partitions (docs/spark.md, "Reading").

Theory of operation. A micro-batch of a Python data source pays a fixed cost per task: the
JVM ships the pickled reader and the partition to a Python worker, the worker answers with
Arrow batches, and ``local[N]`` runs at most N tasks at once. At a steady trickle (200
messages/s over 8 queues, a few dozen messages per queue and trigger) that per-task cost,
not the pulls, is most of a trigger, and one task per queue pays it eight times in four
waves on two cores. So the stream reader packs the batch's ranges, in queue order, into
partitions of at most ``PACKED_RECORDS`` offsets (and at most ``maxRecordsPerPartition``);
a range that alone reaches the cap stays alone, so a backlog still spreads over the cores.
``minPartitions`` keeps one range per partition.

A batch read spreads its offsets evenly over one task per core of the planning machine
(``spread_ranges``), cutting a queue's range where a share ends, for the same reason: the
Python worker round trip is paid per task (about 1 CPU-s per 100,000 rows with a task per
queue), and ``local[N]`` runs N tasks at once anyway. ``minPartitions`` or
``maxRecordsPerPartition`` ask for a split instead, and get one range per task.

Packing changes only which task reads a range: each range is still read exactly, from its
planned start to its planned end, acknowledging nothing, so a retried task or a replayed
batch reads the same messages (``range_reader``).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import InputPartition

if TYPE_CHECKING:  # the client is imported by the first read, not by Spark's module scan
    from rocketq.spark.topic.offset_reader import QueueRange
    from rocketq.spark.topic.options import ReadOptions
    from rocketq.spark.topic.range_reader import ReadSettings

PACKED_RECORDS = 4096
RANGES_READ_AT_ONCE = 8
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


@dataclass
class PackedPartition(InputPartition):
    """One task of a micro-batch: queue ranges read together (no live client)."""

    ranges: tuple[QueueRange, ...]
    settings: ReadSettings


def pack_ranges(
    ranges: Sequence[QueueRange], max_records: int | None = None
) -> list[tuple[QueueRange, ...]]:
    """``ranges`` in order, grouped so no group but a lone range exceeds the cap."""
    cap = min(PACKED_RECORDS, max_records) if max_records else PACKED_RECORDS
    groups: list[tuple[QueueRange, ...]] = []
    group: list[QueueRange] = []
    size = 0
    for r in ranges:
        if group and size + r.size > cap:
            groups.append(tuple(group))
            group, size = [], 0
        group.append(r)
        size += r.size
    if group:
        groups.append(tuple(group))
    return groups


def stream_partitions(
    ranges: Sequence[QueueRange], settings: ReadSettings, options: ReadOptions
) -> list[InputPartition]:
    """The micro-batch's partitions for ``ranges`` under the read's split options."""
    if options.min_partitions:
        return [PackedPartition((r,), settings) for r in ranges]
    groups = pack_ranges(ranges, options.max_records_per_partition)
    return [PackedPartition(group, settings) for group in groups]


def spread_ranges(ranges: Sequence[QueueRange], tasks: int) -> list[tuple[QueueRange, ...]]:
    """``ranges`` in order, cut into ``tasks`` groups of (within one) equal offset counts."""
    total = sum(r.size for r in ranges)
    tasks = max(1, min(tasks, total))
    groups: list[tuple[QueueRange, ...]] = []
    group: list[QueueRange] = []
    filled = 0
    for r in ranges:
        start = r.start
        while start < r.end:
            share = total * (len(groups) + 1) // tasks - filled
            stop = min(r.end, start + share)
            group.append(dataclasses.replace(r, start=start, end=stop))
            filled += stop - start
            start = stop
            if filled == total * (len(groups) + 1) // tasks:
                groups.append(tuple(group))
                group = []
    if group:
        groups.append(tuple(group))
    return groups


def batch_partitions(
    ranges: Sequence[QueueRange], settings: ReadSettings, options: ReadOptions
) -> list[InputPartition]:
    """A batch read's partitions: one per core, or one per range when a split is asked."""
    if options.min_partitions or options.max_records_per_partition:
        return [PackedPartition((r,), settings) for r in ranges]
    groups = spread_ranges(ranges, os.cpu_count() or 1)
    return [PackedPartition(group, settings) for group in groups]


def read_packed(partition: PackedPartition) -> Iterator[Any]:
    """The Arrow batches of every range of ``partition``, in range order.

    A lone range streams, and so do the ranges of a larger partition (a batch read's share
    of a core), one after another, each with its own pulls in flight. Small packed ranges
    (at most ``PACKED_RECORDS`` offsets in all) are read at once, one thread each waiting on
    its own pulls, so a micro-batch's task costs about one round trip to the brokers rather
    than one per queue; their batches are yielded in range order once each is complete."""
    from rocketq.spark.topic.range_reader import read_range

    settings = partition.settings
    if len(partition.ranges) == 1 or sum(r.size for r in partition.ranges) > PACKED_RECORDS:
        for r in partition.ranges:
            yield from read_range(r, settings)
        return
    pool = _packed_pool()
    reads = [pool.submit(_read_all, r, settings) for r in partition.ranges]
    try:
        for read in reads:
            yield from read.result()
    finally:
        for read in reads:  # a task stopped early (a limit, a failure) leaves no read queued
            read.cancel()


def _packed_pool() -> ThreadPoolExecutor:
    """The process's pool for packed ranges, started once: a pool per task started its
    threads on every micro-batch (about 1 ms each, 8 ms a trigger at a trickle)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(RANGES_READ_AT_ONCE, thread_name_prefix="rocketq-packed")
        return _pool


def _read_all(r: QueueRange, settings: ReadSettings) -> list[Any]:
    from rocketq.spark.topic.range_reader import read_range

    return list(read_range(r, settings))
