"""``spark.read.format("rocketq-store")``: a batch data source over store directories.

The driver parses the options (``options``) and plans byte-range splits of every
commitlog segment (``split.plan_splits``, the data end snapshotted there); each split
is one Spark input partition. An executor maps its segment read-only, resynchronises on the
magic code plus the record's own physical offset, decodes it into Arrow record batches
(``columns``: equal to the store's own decoder row for row; ``rows`` for the
dispatch output). Nothing here writes to a store.

Registered automatically through the ``pyspark_rocketq_store`` module; in a notebook or over
Spark Connect, ``spark.dataSource.register(StoreDataSource)`` does the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from rocketq.spark.store.schema import DISPATCH_SCHEMA_DDL, STORE_SCHEMA_DDL

if TYPE_CHECKING:  # imported where used, so that Spark's data-source lookup stays cheap
    from rocketq.spark.store.options import StoreOptions
    from rocketq.spark.store.split import CommitLogSplit

SOURCE_NAME = "rocketq-store"


class SplitPartition(InputPartition):
    """One commitlog split; ``value`` is the ``CommitLogSplit``."""

    def __init__(self, split: CommitLogSplit) -> None:
        super().__init__(split)
        self.split = split


class StoreDataSource(DataSource):
    """Rows of the shared read schema plus sysFlag and storeSize, one per stored record."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        output = str(self.options.get("output", "messages")).strip().lower()
        return DISPATCH_SCHEMA_DDL if output == "dispatch" else STORE_SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        from rocketq.spark.store.options import StoreOptions

        return StoreReader(StoreOptions.parse(self.options))


class StoreReader(DataSourceReader):
    def __init__(self, options: StoreOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        from rocketq.spark.store.split import plan_splits

        opts = self.options
        splits = plan_splits(list(opts.stores), opts.split_bytes, opts.end_offset)
        return [SplitPartition(s) for s in splits]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        split = partition.split if isinstance(partition, SplitPartition) else partition.value
        if split is None:  # Spark's single empty partition of a store with no records
            return iter(())
        return read_split(split, self.options)


def read_split(split: CommitLogSplit, opts: StoreOptions) -> Iterator[Any]:
    """The Arrow batches of one split (also used by the jobs and the benchmark)."""
    from rocketq.spark.store.columns import columnar_batches
    from rocketq.spark.store.rows import dispatch_batches
    from rocketq.spark.store.split import dispatch_decoder, iter_split

    topics = opts.topics
    skip = opts.skip_corrupt
    if opts.output == "dispatch":
        decode = dispatch_decoder(opts.verify_crc, opts.delay_table())
        reqs = iter_split(split, decode, skip_corrupt=skip)
        if topics is not None:
            reqs = (r for r in reqs if r.topic in topics)
        return dispatch_batches(reqs, split.broker, opts.batch_rows)
    return columnar_batches(
        split,
        verify_crc=opts.verify_crc,
        skip_corrupt=skip,
        topics=topics,
        batch_rows=opts.batch_rows,
    )
