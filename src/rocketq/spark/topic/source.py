"""The ``rocketq`` data source: topics as DataFrames, batch and Structured Streaming.

Theory of operation (docs/spark.md, "Reading"). Reads are deterministic ranges of ConsumeQueue
offsets, planned on the driver and logged by Spark before any task runs; executors pull exactly
those ranges and acknowledge nothing, so a replayed batch reads the same messages.

Streaming offsets are ``rocketq.spark.topic.offsets`` JSON. Batch 0 is replay-safe: the resolved
start (``latest``, a timestamp...) travels inside batch 0's end offset as ``init``, and
``partitions`` prefers it over the start Spark hands in (Spark re-calls ``initialOffset`` on a
restart before batch 0 committed). Queues that appear later (a topic scaled out, a broker
added, a topic matching ``subscribePattern``) start at their minimum offset, recorded in
``init`` of the batch that first sees them, so replays of that batch agree too.

Admission control: ``maxOffsetsPerTrigger`` (ReadMaxRows, split across queues by backlog),
``minOffsetsPerTrigger`` + ``maxTriggerDelay`` (ReadMinRows, the delay kept here because the
reader process lives as long as its query), and ``Trigger.AvailableNow`` through
``SupportsTriggerAvailableNow``: the target is fixed when the query starts and never passed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkNotImplementedError
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    SimpleDataSourceStreamReader,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from rocketq.common.message import MessageQueue
from rocketq.errors import RocketQError
from rocketq.spark.schema import TOPIC_SCHEMA_DDL
from rocketq.spark.topic.offsets import (
    OffsetMap,
    init_of,
    is_initial,
    offsets_of,
    stream_offset,
)
from rocketq.spark.topic.options import EXACTLY_ONCE, ReadOptions, WriteOptions
from rocketq.spark.topic.stream import (
    PackedPartition,
    batch_partitions,
    read_packed,
    stream_partitions,
)

if TYPE_CHECKING:  # the client is imported by the first read, not by Spark's module scan
    from rocketq.spark.topic.offset_reader import OffsetReader
    from rocketq.spark.topic.range_reader import ReadSettings

log = logging.getLogger(__name__)

SOURCE_NAME = "rocketq"


def settings_of(opts: ReadOptions) -> ReadSettings:
    from rocketq.spark.topic.range_reader import ReadSettings

    return ReadSettings(
        name_server=opts.name_server,
        sub_expression=opts.sub_expression,
        sub_expression_type=opts.sub_expression_type,
        pull_batch_size=opts.pull_batch_size,
        poll_timeout_ms=opts.poll_timeout_ms,
        fail_on_data_loss=opts.fail_on_data_loss,
    )


class TopicSource(DataSource):
    """``spark.read.format("rocketq")`` / ``writeStream.format("rocketq")``."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return TOPIC_SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return TopicBatchReader(ReadOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = ReadOptions.parse(self.options, streaming=True)
        if options.low_latency:  # PySpark then asks simpleStreamReader (stream_prefetch.py)
            raise PySparkNotImplementedError(
                errorClass="NOT_IMPLEMENTED", messageParameters={"feature": "streamReader"}
            )
        return TopicStreamReader(options)

    def simpleStreamReader(self, schema: StructType) -> SimpleDataSourceStreamReader:
        from rocketq.spark.topic.stream_prefetch import PrefetchStreamReader, prefetch_options

        options = prefetch_options(ReadOptions.parse(self.options, streaming=True))
        return PrefetchStreamReader(TopicStreamReader(options))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = WriteOptions.parse(self.options)
        if options.delivery_guarantee == EXACTLY_ONCE:
            from rocketq.spark.topic.transactional_sink import TopicTxnBatchWriter

            return TopicTxnBatchWriter(options, schema, overwrite)
        from rocketq.spark.topic.sink import TopicBatchWriter

        return TopicBatchWriter(options, schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        options = WriteOptions.parse(self.options)
        if options.delivery_guarantee == EXACTLY_ONCE:
            from rocketq.spark.topic.transactional_sink import TopicTxnStreamWriter

            return TopicTxnStreamWriter(options, schema, overwrite)
        from rocketq.spark.topic.sink import TopicStreamWriter

        return TopicStreamWriter(options, schema, overwrite)


def read_partition(partition: InputPartition) -> Iterator[Any]:
    """A task's batches. With nothing to read (``partitions`` gave none), PySpark still runs
    one task, on a bare ``InputPartition(None)``: it reads nothing."""
    if isinstance(partition, PackedPartition):
        return read_packed(partition)
    if type(partition) is InputPartition and partition.value is None:
        return iter(())
    raise TypeError(f"not a rocketq partition: {partition!r}")


class TopicBatchReader(DataSourceReader):
    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        from rocketq.spark.topic.offset_reader import OffsetReader

        offsets = OffsetReader(self.options)
        mqs = offsets.queues()
        start = offsets.resolve_start(mqs, "earliest")
        end = offsets.resolve_end(mqs)
        start = offsets.check_ranges(start, end)
        return batch_partitions(offsets.plan(start, end), settings_of(self.options), self.options)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_partition(partition)


def rate_limit(begin: Mapping[MessageQueue, int], end: OffsetMap, max_offsets: int) -> OffsetMap:
    """Kafka's proportional split: ``max_offsets`` shared by backlog, remainders to the largest."""
    backlog = {mq: end[mq] - begin.get(mq, end[mq]) for mq in end}
    total = sum(b for b in backlog.values() if b > 0)
    if total <= max_offsets:
        return dict(end)
    share = {mq: max_offsets * b // total if b > 0 else 0 for mq, b in backlog.items()}
    left = max_offsets - sum(share.values())
    for mq in sorted(backlog, key=lambda m: (-(backlog[m] - share[m]), m)):
        if left <= 0:
            break
        if backlog[mq] > share[mq]:
            share[mq] += 1
            left -= 1
    return {mq: begin.get(mq, end[mq]) + share[mq] if backlog[mq] > 0 else end[mq] for mq in end}


class TopicStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._target: OffsetMap | None = None
        self._latest: OffsetMap = {}
        self._planned: OffsetMap = {}
        self._waiting_since_ms: float | None = None
        self._group_committed: OffsetMap = {}

    @property
    def offsets(self) -> OffsetReader:
        from rocketq.spark.topic.offset_reader import OffsetReader

        return OffsetReader(self.options)

    def initialOffset(self) -> dict[str, Any]:
        offsets = self.offsets
        start = offsets.resolve_start(offsets.queues(), "latest")
        return stream_offset(start, initial=True)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        if self.options.max_bytes_per_trigger is not None:
            return ReadMaxBytes(self.options.max_bytes_per_trigger)
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        offsets = self.offsets
        self._target = offsets.latest(offsets.queues())

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, Any]:
        if start is None:  # PySpark 4.0/4.1: no admission control
            raise NotImplementedError("the rocketq stream source needs PySpark 4.2 or later")
        begin = offsets_of(start)
        init = dict(begin) if is_initial(start) else {}
        if not init:
            self._commit_group(begin)
        offsets = self.offsets
        queues = sorted(self._target) if self._target is not None else offsets.queues()
        new = [mq for mq in queues if mq not in begin]
        for mq, low in offsets.earliest(new).items():
            if low > 0:
                offsets.report_loss(f"{mq} appeared with its first offset at {low}")
            init[mq] = low
        known = {**begin, **init}
        latest = self._target if self._target is not None else offsets.latest(queues)
        latest = {mq: max(latest[mq], known[mq]) for mq in queues}
        self._latest = {**known, **latest}
        end = self._admit(known, latest, limit)
        end = {**known, **end}
        self._planned = end
        if not init and end == begin:
            return start
        return stream_offset(end, init=init or None)

    def _admit(self, known: OffsetMap, latest: OffsetMap, limit: ReadLimit | None) -> OffsetMap:
        if limit is None or isinstance(limit, ReadAllAvailable):
            return latest
        opts = self.options
        available = sum(latest[mq] - known[mq] for mq in latest)
        if opts.min_offsets_per_trigger is not None and self._target is None:
            now_ms = time.monotonic() * 1000
            waiting_since = self._waiting_since_ms or now_ms
            delayed = now_ms - waiting_since >= opts.max_trigger_delay_ms
            if available < opts.min_offsets_per_trigger and not delayed:
                self._waiting_since_ms = waiting_since
                return {mq: known[mq] for mq in latest}
            self._waiting_since_ms = None
        end = latest
        if opts.max_offsets_per_trigger is not None:
            end = rate_limit(known, end, opts.max_offsets_per_trigger)
        if opts.max_bytes_per_trigger is not None:
            end = self.offsets.byte_limit(known, end, opts.max_bytes_per_trigger)
        return end

    def reportLatestOffset(self) -> dict[str, Any] | None:
        if not self._latest:
            return None
        lag = sum(self._latest[mq] - self._planned.get(mq, 0) for mq in self._latest)
        report = stream_offset(self._latest)
        return {"lag": max(lag, 0), **report}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin = {**offsets_of(start), **(init_of(end) or {})}
        stop = offsets_of(end)
        offsets = self.offsets
        begin = offsets.check_ranges({mq: begin.get(mq, v) for mq, v in stop.items()}, stop)
        return stream_partitions(offsets.plan(begin, stop), settings_of(self.options), self.options)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_partition(partition)

    def commit(self, end: dict[str, Any]) -> None:
        self._commit_group(offsets_of(end))

    def _commit_group(self, done: OffsetMap) -> None:
        """Copy committed offsets to ``consumerGroup`` on the brokers (lag tooling only).

        Spark calls ``commit`` only when it plans the next batch, so the last batch before a
        quiet spell would never show; ``latestOffset`` also passes its ``start``, which is the
        end of a batch Spark has already committed.
        """
        from rocketq.client import ClientConfig

        group = self.options.consumer_group
        if group is None:
            return
        admin = self.offsets.admin
        if not self._group_committed:
            try:  # first commit of this reader: make the group visible to admin tools
                client_id = ClientConfig(instance_name=f"spark-{id(self)}").build_client_id()
                admin.register_consumer_group(group, sorted({mq.topic for mq in done}), client_id)
            except (RocketQError, OSError) as exc:
                log.warning("could not announce %s to the brokers: %r", group, exc)
        masters: dict[str, dict[str, str]] = {}
        for mq, offset in done.items():
            if self._group_committed.get(mq) == offset:
                continue
            try:
                if mq.topic not in masters:
                    masters[mq.topic] = admin.master_addrs_of_topic(mq.topic)
                addr = masters[mq.topic][mq.broker_name]
                admin.update_consume_offset(addr, group, mq, offset)
                self._group_committed[mq] = offset
            except Exception as exc:  # noqa: BLE001 -- lag tooling only: the checkpoint is the truth
                log.warning("could not commit %s=%d for %s: %r", mq, offset, group, exc)

    def stop(self) -> None:
        from rocketq.spark.topic.offset_reader import close_admins
        from rocketq.spark.topic.pull_client import PullClient

        close_admins()
        PullClient.close_all()
