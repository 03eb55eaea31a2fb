"""``lowLatency=true``: a micro-batch read in the planner process, no task reads it.

Theory of operation (docs/spark.md, "Streaming latency"). PySpark runs a streaming Python data
source's ``latestOffset``/``partitions``/``commit`` in one long-lived planner process; a
``DataSourceStreamReader``'s rows are then read by tasks, each a Python worker round trip
inside the trigger's ``addBatch``. A ``SimpleDataSourceStreamReader``
instead returns a batch's rows from ``read(start)`` in the planner process, and PySpark hands
them to the JVM as Arrow batches along with the plan (``_SimpleStreamReaderWrapper`` in
pyspark/sql/datasource_internal.py, "prefetch and cache"): the micro-batch's job runs no
Python worker at all.

``PrefetchStreamReader`` is that reader over the same planning as ``TopicStreamReader``
(source.py): ``read(start)`` asks it for the batch's end (admission control included:
``maxOffsetsPerTrigger``, ``maxBytesPerTrigger``, ``minOffsetsPerTrigger``, AvailableNow),
then reads exactly the planned ranges (``read_packed``) before answering, so the end Spark
logs is the end of the rows it was given. A replayed batch (a restart; PySpark's cache lives in
the planner process) is read by a task through ``readBetweenOffsets``, from the same ranges:
deterministic as before. Every row goes through the driver, so a trigger is capped at
``PREFETCH_MAX_OFFSETS`` offsets unless ``maxOffsetsPerTrigger`` says otherwise; a backlog is
better read by tasks (the default).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from pyspark.sql.datasource import InputPartition, SimpleDataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow

from rocketq.spark.topic.options import ReadOptions

#: offsets per trigger a prefetching read takes when ``maxOffsetsPerTrigger`` is not set
PREFETCH_MAX_OFFSETS = 20_000


class StreamPlanner(Protocol):
    """What the prefetching reader asks of the planning reader (source.TopicStreamReader)."""

    options: ReadOptions

    def initialOffset(self) -> dict[str, Any]: ...
    def prepareForTriggerAvailableNow(self) -> None: ...
    def getDefaultReadLimit(self) -> ReadLimit: ...
    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, Any]: ...
    def partitions(
        self, start: dict[str, Any], end: dict[str, Any]
    ) -> Sequence[InputPartition]: ...
    def commit(self, end: dict[str, Any]) -> None: ...


def prefetch_options(options: ReadOptions) -> ReadOptions:
    """``options`` with a trigger cap: every prefetched row goes through the driver."""
    if options.max_offsets_per_trigger is not None:
        return options
    return dataclasses.replace(options, max_offsets_per_trigger=PREFETCH_MAX_OFFSETS)


class PrefetchStreamReader(SimpleDataSourceStreamReader, SupportsTriggerAvailableNow):
    """The rows of a micro-batch read while it is planned (``lowLatency=true``)."""

    def __init__(self, planner: StreamPlanner) -> None:
        self.planner = planner

    def initialOffset(self) -> dict[str, Any]:
        return self.planner.initialOffset()

    def prepareForTriggerAvailableNow(self) -> None:
        self.planner.prepareForTriggerAvailableNow()

    def read(self, start: dict[str, Any]) -> tuple[Iterator[Any], dict[str, Any]]:
        end = self.planner.latestOffset(start, self.planner.getDefaultReadLimit())
        if end == start:
            return iter(()), start
        # a list, whole before answering: PySpark copies the iterator of a cached batch
        return iter(self._batches(start, end)), end

    def readBetweenOffsets(self, start: dict[str, Any], end: dict[str, Any]) -> Iterator[Any]:
        return iter(self._batches(start, end))

    def _batches(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
        from rocketq.spark.topic.stream import PackedPartition, read_packed

        batches: list[Any] = []
        for partition in self.planner.partitions(start, end):
            if not isinstance(partition, PackedPartition):
                raise TypeError(f"not a rocketq partition: {partition!r}")
            batches.extend(read_packed(partition))
        return batches

    def commit(self, end: dict[str, Any]) -> None:
        self.planner.commit(end)
