"""OffsetReader: the driver's view of a topic read (KafkaOffsetReader's role).

It lists the queues a read selects (``subscribe``, ``subscribePattern`` re-listed on every call,
``assign``), resolves start and end positions to concrete ConsumeQueue indices (earliest,
latest, -2/-1 in JSON, by timestamp through SEARCH_OFFSET_BY_TIMESTAMP), checks planned
offsets against what the broker still holds (``failOnDataLoss``), and cuts ``[start, end)``
ranges into ``QueueRange``s for the executors. Every call is a cheap metadata request through
the process's cached ``rocketq.admin.AdminClient`` (``admin_for``), the library API RocketMQ's
tools use; only the executors' pulls go through the client (``pull_client``).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from rocketq.admin import AdminClient
from rocketq.common import topic as topics
from rocketq.common.message import MessageQueue
from rocketq.errors import ClientError, DataLossError, SparkOptionError, TopicNotExistError
from rocketq.spark.topic.offsets import EARLIEST, LATEST, OffsetMap
from rocketq.spark.topic.options import ReadOptions

log = logging.getLogger(__name__)

SIZE_CHUNK_UNITS = 256
ADMIN_TIMEOUT_S = 10.0
QUEUE_CALLS_IN_FLIGHT = 32

_admins: dict[str, AdminClient] = {}
_admins_lock = threading.Lock()


def admin_for(name_server: str) -> AdminClient:
    """The process's AdminClient for ``name_server``, started on first use. A Spark driver
    keeps one per name server: a stream reader's process lives as long as its query."""
    with _admins_lock:
        admin = _admins.get(name_server)
        if admin is None:
            admin = AdminClient(name_server, timeout_s=ADMIN_TIMEOUT_S)
            admin.start()
            _admins[name_server] = admin
        return admin


def close_admins() -> None:
    with _admins_lock:
        admins = list(_admins.values())
        _admins.clear()
    for admin in admins:
        admin.shutdown()


atexit.register(close_admins)


@dataclass(frozen=True, slots=True)
class QueueRange:
    """What one Spark task reads: queue offsets ``[start, end)`` of one queue."""

    topic: str
    broker: str
    queue_id: int
    start: int
    end: int

    @property
    def mq(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker, self.queue_id)

    @property
    def size(self) -> int:
        return self.end - self.start


def _internal_topic(topic: str) -> bool:
    """Not a topic a pattern subscribes to: a system topic, or a group's retry or DLQ topic."""
    group_topic = topics.is_retry_topic(topic) or topics.is_dlq_topic(topic)
    return group_topic or topics.is_system_topic(topic)


class OffsetReader:
    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    @property
    def admin(self) -> AdminClient:
        return admin_for(self.options.name_server)

    # ------------------------------------------------------------------ queues

    def topics(self) -> list[str]:
        opts = self.options
        if opts.assign:
            return sorted({mq.topic for mq in opts.assign})
        if opts.subscribe_pattern is not None:
            pattern = re.compile(opts.subscribe_pattern)
            return [
                t
                for t in sorted(self.admin.fetch_all_topic_list())
                if pattern.fullmatch(t) and not _internal_topic(t)
            ]
        return list(opts.subscribe)

    def queues(self) -> list[MessageQueue]:
        if self.options.assign:
            return list(self.options.assign)
        return sorted(mq for topic in self.topics() for mq in self._queues_of(topic))

    def _queues_of(self, topic: str) -> set[MessageQueue]:
        """The readable queues of ``topic``; none when it has no route."""
        try:
            return self.admin.fetch_subscribe_message_queues(topic)
        except TopicNotExistError:
            return set()

    def min_offset(self, mq: MessageQueue) -> int:
        """The queue's first offset; a queue never written (the broker says -1) starts at 0."""
        return max(0, self.admin.min_offset(mq))

    def earliest(self, mqs: list[MessageQueue]) -> OffsetMap:
        """First offsets (never below 0) of ``mqs``, asked of the brokers all at once."""
        return {mq: max(0, low) for mq, low in self._per_queue(mqs, self.admin.impl.min_offset)}

    def latest(self, mqs: list[MessageQueue]) -> OffsetMap:
        """Max offsets of ``mqs``, asked of the brokers all at once."""
        return dict(self._per_queue(mqs, self.admin.impl.max_offset))

    def _per_queue(
        self, mqs: list[MessageQueue], call: Callable[[MessageQueue], Awaitable[int]]
    ) -> list[tuple[MessageQueue, int]]:
        """``call`` for every queue, up to ``QUEUE_CALLS_IN_FLIGHT`` in flight on the admin's
        loop: a stream's trigger asks every queue, and one round trip after another made
        ``latestOffset`` and ``partitions`` grow with the number of queues."""
        if not mqs:
            return []
        admin = self.admin
        gate = asyncio.Semaphore(QUEUE_CALLS_IN_FLIGHT)

        async def one(mq: MessageQueue) -> int:
            async with gate:
                return await call(mq)

        async def every() -> list[int]:
            return list(await asyncio.gather(*(one(mq) for mq in mqs)))

        return list(zip(mqs, admin.loop.run(every()), strict=True))

    # ------------------------------------------------------------------ resolution

    def resolve_start(self, mqs: list[MessageQueue], default: str) -> OffsetMap:
        """Concrete start offsets; timestamps win over ``startingOffsets`` (Kafka's rule)."""
        opts = self.options
        out: OffsetMap = {}
        for mq in mqs:
            ts = (opts.starting_by_timestamp or {}).get(mq, opts.starting_timestamp_ms)
            if ts is not None:
                out[mq] = self._by_timestamp(mq, ts, opts.timestamp_strategy)
                continue
            spec = opts.starting
            wanted = spec.get(mq, default) if isinstance(spec, dict) else spec
            out[mq] = self._position(mq, wanted)
        return out

    def resolve_end(self, mqs: list[MessageQueue]) -> OffsetMap:
        opts = self.options
        out: OffsetMap = {}
        for mq in mqs:
            ts = (opts.ending_by_timestamp or {}).get(mq, opts.ending_timestamp_ms)
            if ts is not None:
                out[mq] = self._by_timestamp(mq, ts, "latest")
                continue
            spec = opts.ending
            wanted = spec.get(mq, "latest") if isinstance(spec, dict) else spec
            out[mq] = self._position(mq, wanted)
        return out

    def _position(self, mq: MessageQueue, wanted: str | int) -> int:
        if wanted in ("earliest", EARLIEST):
            return self.min_offset(mq)
        if wanted in ("latest", LATEST):
            return self.admin.max_offset(mq)
        assert isinstance(wanted, int)
        return wanted

    def _by_timestamp(self, mq: MessageQueue, timestamp_ms: int, strategy: str) -> int:
        found = self.admin.search_offset(mq, timestamp_ms)
        latest = self.admin.max_offset(mq)
        if found >= latest and strategy == "error":
            raise SparkOptionError(
                f"no message of {mq} has a store time at or after {timestamp_ms}; set"
                " startingOffsetsByTimestampStrategy=latest to start at the end instead"
            )
        return min(found, latest)

    # ------------------------------------------------------------------ data loss

    def check_ranges(
        self, start: Mapping[MessageQueue, int], end: Mapping[MessageQueue, int]
    ) -> OffsetMap:
        """Starts moved past data the broker no longer holds, or DataLossError (failOnDataLoss)."""
        checked: OffsetMap = {}
        lows = self.earliest([mq for mq, begin in start.items() if mq in end and begin < end[mq]])
        for mq, begin in start.items():
            if mq not in end:
                continue
            low = lows.get(mq, begin)
            if begin < low:
                self.report_loss(f"{mq}: offsets [{begin}, {low}) were deleted before being read")
                begin = low
            if end[mq] < begin:
                self.report_loss(f"{mq}: the end offset {end[mq]} is before the start {begin}")
                begin = end[mq]
            checked[mq] = begin
        return checked

    def report_loss(self, what: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLossError(
                f"{what}. Data may have been lost (retention, a deleted topic or queue). Set"
                " failOnDataLoss=false to skip ahead instead of failing the query"
            )
        log.warning("skipping lost data: %s", what)

    def byte_limit(
        self, begin: Mapping[MessageQueue, int], end: Mapping[MessageQueue, int], max_bytes: int
    ) -> OffsetMap:
        """Ends that admit at most ``max_bytes`` of messages (sizes from the consume queues).

        Queues take turns, a chunk of units each; at least one message is admitted even when
        it alone is larger than the budget, so a stream never stalls on a big message.
        """
        out = {mq: begin.get(mq, end[mq]) for mq in end}
        active = [mq for mq in sorted(end) if end[mq] > out[mq]]
        masters = {
            t: self.admin.master_addrs_of_topic(t) for t in sorted({mq.topic for mq in active})
        }
        budget = max_bytes
        while active:
            for mq in list(active):
                count = min(SIZE_CHUNK_UNITS, end[mq] - out[mq])
                taken = 0
                for size in self._unit_sizes(masters[mq.topic], mq, out[mq], count):
                    if size > budget and (budget < max_bytes or taken):
                        break
                    budget -= size
                    taken += 1
                out[mq] += taken
                if taken < count or out[mq] >= end[mq]:
                    active.remove(mq)
        return out

    def _unit_sizes(
        self, masters: Mapping[str, str], mq: MessageQueue, index: int, count: int
    ) -> list[int]:
        """The message sizes of ``count`` ConsumeQueue units of ``mq`` from ``index``, read from
        the consume queue's 20-byte units (QUERY_CONSUME_QUEUE): no message body is fetched."""
        addr = masters.get(mq.broker_name)
        if addr is None:
            raise ClientError(f"the broker {mq.broker_name} is not in the route of {mq.topic}")
        body = self.admin.query_consume_queue(addr, mq.topic, mq.queue_id, index, count)
        return [unit.physic_size for unit in body.queue_data]

    # ------------------------------------------------------------------ planning

    def plan(
        self, start: Mapping[MessageQueue, int], end: Mapping[MessageQueue, int]
    ) -> list[QueueRange]:
        ranges = [
            QueueRange(mq.topic, mq.broker_name, mq.queue_id, start[mq], end[mq])
            for mq in sorted(start)
            if mq in end and end[mq] > start[mq]
        ]
        return split_ranges(
            ranges, self.options.max_records_per_partition, self.options.min_partitions
        )


def split_ranges(
    ranges: list[QueueRange], max_records: int | None, min_partitions: int | None
) -> list[QueueRange]:
    """Cut ranges to at most ``max_records`` each, then halve the largest to ``min_partitions``."""
    out: list[QueueRange] = []
    for r in ranges:
        parts = math.ceil(r.size / max_records) if max_records else 1
        out.extend(_cut(r, parts))
    while min_partitions and out and len(out) < min_partitions:
        largest = max(out, key=lambda r: r.size)
        if largest.size < 2:
            break
        index = out.index(largest)
        out[index : index + 1] = _cut(largest, 2)
    return out


def _cut(r: QueueRange, parts: int) -> list[QueueRange]:
    step, extra = divmod(r.size, parts)
    pieces = []
    begin = r.start
    for i in range(parts):
        stop = begin + step + (1 if i < extra else 0)
        pieces.append(QueueRange(r.topic, r.broker, r.queue_id, begin, stop))
        begin = stop
    return pieces
