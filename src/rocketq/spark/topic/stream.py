"""A micro-batch's tasks: small queue ranges packed into few partitions (docs/spark.md).

Theory of operation. A micro-batch of a Python data source pays a fixed cost per task: the
JVM ships the pickled reader and the partition to a Python worker, the worker answers with
Arrow batches, and ``local[N]`` runs at most N tasks at once. At a steady trickle (200
messages/s over 8 queues, a few dozen messages per queue and trigger) that per-task cost,
not the pulls, is most of a trigger, and one task per queue pays it eight times in four
waves on two cores. So the stream reader packs the batch's ranges, in queue order, into
partitions of at most ``PACKED_RECORDS`` offsets (and at most ``maxRecordsPerPartition``);
a range that alone reaches the cap stays alone, so a backlog still spreads over the cores.
``minPartitions`` keeps one range per partition, as in a batch read.

Packing changes only which task reads a range: each range is still read exactly, from its
planned start to its planned end, acknowledging nothing, so a retried task or a replayed
batch reads the same messages (``range_reader``).
"""

from __future__ import annotations

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


def read_packed(partition: PackedPartition) -> Iterator[Any]:
    """The Arrow batches of every range of ``partition``, in range order.

    A lone range streams. Packed ranges (at most ``PACKED_RECORDS`` offsets in all) are
    read at once, one thread each waiting on its own pulls, so a task costs about one
    round trip to the brokers rather than one per queue; their batches are yielded in
    range order once each is complete."""
    from rocketq.spark.topic.range_reader import read_range

    settings = partition.settings
    if len(partition.ranges) == 1:
        yield from read_range(partition.ranges[0], settings)
        return
    workers = min(len(partition.ranges), RANGES_READ_AT_ONCE)
    with ThreadPoolExecutor(workers, thread_name_prefix="rocketq-packed") as pool:
        reads = [pool.submit(_read_all, r, settings) for r in partition.ranges]
        for read in reads:
            yield from read.result()


def _read_all(r: QueueRange, settings: ReadSettings) -> list[Any]:
    from rocketq.spark.topic.range_reader import read_range

    return list(read_range(r, settings))
