"""Writing DataFrames to topics (batch and streaming), at least once.

Input columns (checked on the driver before any task runs; an unknown column or a wrong type
is refused, never dropped):

| column      | type                       | becomes                                          |
|-------------|----------------------------|--------------------------------------------------|
| value       | string or binary, required | body (a string is UTF-8 encoded)                 |
| topic       | string                     | target topic; the ``topic`` option wins          |
| key         | string                     | KEYS (first key)                                 |
| keys        | string or array<string>    | KEYS (more keys; space-separated in a string)    |
| tags        | string                     | TAGS                                             |
| properties  | map<string,string>         | user properties (system names are skipped)       |
| shardingKey | string                     | orderly queue selection (SelectMessageQueueByHash)|
| delayLevel  | int (null/0 none, <0 bad)  | DELAY (sent one by one: a batch cannot delay)    |

Theory of operation: each task groups rows per (topic, queue) (queue chosen by the sharding
key, or by the producer for unkeyed rows), sends them as SEND_BATCH_MESSAGE batches of up to
``maxBatchMessages`` / ``maxBatchBytes`` with a few batches in flight, and waits for and checks
every send before ``write`` returns: a task that returns has its rows stored. A failed task is
retried by Spark and may send its rows twice (``at_least_once``); ``exactly_once`` is
``transactional_sink``. A delayed row goes to its sharding key's queue too (the broker keeps
it as REAL_QID while it waits in SCHEDULE_TOPIC_XXXX).
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
)

from rocketq.common import message_const as mc
from rocketq.common.message import Message, MessageQueue
from rocketq.errors import ClientError, SparkOptionError
from rocketq.spark.topic.options import WriteOptions

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 8
INPUT_COLUMNS: dict[str, tuple[type, ...]] = {
    "value": (StringType, BinaryType),
    "topic": (StringType,),
    "key": (StringType,),
    "keys": (StringType, ArrayType),
    "tags": (StringType,),
    "properties": (MapType,),
    "shardingKey": (StringType,),
    "delayLevel": (IntegerType, LongType, ShortType),
}


def check_input_schema(schema: StructType, options: WriteOptions) -> None:
    by_name = {f.name: f for f in schema.fields}
    if "value" not in by_name:
        raise SparkOptionError("the rocketq sink needs a value column (string or binary)")
    unknown = sorted(set(by_name) - set(INPUT_COLUMNS))
    if unknown:
        raise SparkOptionError(
            f"the rocketq sink does not know the column(s) {', '.join(unknown)}; it takes"
            f" {', '.join(INPUT_COLUMNS)} (select or rename columns before writing)"
        )
    if options.topic is None and "topic" not in by_name:
        raise SparkOptionError("name the target with the topic option or a topic column")
    for name, field in by_name.items():
        if not isinstance(field.dataType, INPUT_COLUMNS[name]):
            kinds = " or ".join(
                k.__name__.removesuffix("Type").lower() for k in INPUT_COLUMNS[name]
            )
            raise SparkOptionError(f"the column {name} must be {kinds}, not {field.dataType}")


def row_to_message(row: dict[str, Any], options: WriteOptions) -> tuple[Message, str | None]:
    """One input row as a Message, and its sharding key (None: any queue)."""
    value = row.get("value")
    if value is None:
        raise ClientError("a row has a null value; every row needs a body")
    topic = options.topic or row.get("topic")
    if not topic:
        raise ClientError("a row has no topic (null topic column and no topic option)")
    body = value.encode() if isinstance(value, str) else bytes(value)
    msg = Message(topic=topic, body=body)
    props = row.get("properties") or {}
    for name, text in props.items() if isinstance(props, dict) else props:
        if name not in mc.STRING_HASH_SET and text is not None:
            msg.properties[name] = str(text)
    keys = row.get("keys")
    more = keys.split(mc.KEY_SEPARATOR) if isinstance(keys, str) else list(keys or [])
    first = row.get("key")
    msg.keys = [k for k in [first, *more] if k]
    if row.get("tags"):
        msg.tags = row["tags"]
    level = row.get("delayLevel")
    if level:
        if level < 0:
            raise ClientError(
                f"delayLevel {level} is not a delay level: null or 0 sends at once, 1..N picks"
                " the N-th entry of the broker's messageDelayLevel (above the last: the last)"
            )
        msg.delay_time_level = int(level)
    return msg, row.get("shardingKey")


FAST_COLUMNS = frozenset({"value", "topic", "key", "tags"})


def batch_to_messages(batch: Any, options: WriteOptions) -> list[tuple[Message, str | None]]:
    """The messages of one Arrow record batch, column by column: the twin of
    :func:`row_to_message` (the reference, and the path for ``keys``, ``properties``,
    ``shardingKey`` and ``delayLevel``) without a dict or a ``str`` body per row. The same
    messages byte for byte (``tests/spark/test_sink_columns.py``); a null value or a missing
    topic fails the whole batch before it sends anything, as there."""
    names = batch.schema.names
    columns = {name: batch.column(i).to_pylist() for i, name in enumerate(names)}
    if not FAST_COLUMNS.issuperset(columns):
        return [
            row_to_message(dict(zip(names, values, strict=True)), options)
            for values in zip(*columns.values(), strict=True)
        ]
    nullable = _value_bytes(batch.column(names.index("value")))
    if None in nullable:
        raise ClientError("a row has a null value; every row needs a body")
    values = cast(list[bytes], nullable)
    topics = columns.get("topic") or [None] * len(values)
    if options.topic is not None:
        topics = [options.topic] * len(values)
    elif not all(topics):
        raise ClientError("a row has no topic (null topic column and no topic option)")
    properties = _fast_properties(columns.get("key"), columns.get("tags"), len(values))
    new = Message.__new__
    out: list[tuple[Message, str | None]] = []
    for topic, value, props in zip(topics, values, properties, strict=True):
        msg = new(Message)  # Message's fields, as Message(topic, body) sets them
        msg.topic = topic
        msg.body = value
        msg.flag = 0
        msg.properties = props
        msg.transaction_id = None
        out.append((msg, None))
    return out


def _value_bytes(column: Any) -> list[bytes | None]:
    """The value column as bytes: a string column is cast to binary in Arrow (its UTF-8
    bytes, no copy), not decoded to ``str`` and encoded again per row."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_string(kind):
        column = column.cast(pa.binary())
    elif pa.types.is_large_string(kind):
        column = column.cast(pa.large_binary())
    values: list[bytes | None] = column.to_pylist()
    return values


def _fast_properties(
    keys: list[str | None] | None, tags: list[str | None] | None, count: int
) -> list[dict[str, str]]:
    """KEYS then TAGS (row_to_message's order), each where the row has a non-empty one."""
    if keys is None and tags is None:
        return [{} for _ in range(count)]
    keys = keys or [None] * count
    tags = tags or [None] * count
    out: list[dict[str, str]] = []
    for key, tag in zip(keys, tags, strict=True):
        props: dict[str, str] = {}
        if key:
            props[mc.PROPERTY_KEYS] = key
        if tag:
            props[mc.PROPERTY_TAGS] = tag
        out.append(props)
    return out


class ProducerCache:
    """One started blocking Producer per (name server, group) in a Python worker."""

    _producers: ClassVar[dict[tuple[str, str], Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get(cls, options: WriteOptions) -> Any:
        from rocketq.client import Producer

        key = (options.name_server, options.producer_group)
        with cls._lock:
            producer = cls._producers.get(key)
            if producer is None:
                producer = Producer(
                    options.producer_group,
                    namesrv_addr=options.name_server,
                    send_msg_timeout_s=options.send_timeout_ms / 1000,
                    instance_name="spark-sink-" + re.sub(r"\W", "_", options.name_server),
                )
                producer.start()
                cls._producers[key] = producer
            return producer

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            producers, cls._producers = list(cls._producers.values()), {}
        for producer in producers:
            producer.shutdown()


atexit.register(ProducerCache.close_all)


@dataclass
class SinkCommitMessage(WriterCommitMessage):
    rows: int
    batches: int


class _TaskSender:
    """One task's sends: per-queue batches, a bounded window in flight, every result checked."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options
        self.producer = ProducerCache.get(options)
        self.pending: dict[tuple[str, MessageQueue | None], tuple[list[Message], int]] = {}
        self.in_flight: list[Future[Any]] = []
        self.queues: dict[str, list[MessageQueue]] = {}
        self.rows = 0
        self.batches = 0

    def add(self, msg: Message, sharding_key: str | None) -> None:
        self.rows += 1
        mq = None if sharding_key is None else self._queue_for(msg, sharding_key)
        if msg.delay_time_level > 0:  # a batch cannot be delayed: one SEND_MESSAGE each
            self._submit(self.producer.impl.send(msg, message_queue=mq))
            return
        msgs, size = self.pending.get((msg.topic, mq), ([], 0))
        msgs.append(msg)
        size += len(msg.body) + 64
        self.pending[(msg.topic, mq)] = (msgs, size)
        opts = self.options
        if len(msgs) >= opts.max_batch_messages or size >= opts.max_batch_bytes:
            self._send((msg.topic, mq))

    def _queue_for(self, msg: Message, sharding_key: str) -> MessageQueue:
        from rocketq.client import select_message_queue_by_hash

        mqs = self.queues.get(msg.topic)
        if mqs is None:
            mqs = self.queues[msg.topic] = self.producer.fetch_publish_message_queues(msg.topic)
        return select_message_queue_by_hash(mqs, msg, sharding_key)

    def _send(self, key: tuple[str, MessageQueue | None]) -> None:
        msgs, _size = self.pending.pop(key)
        self.batches += 1
        self._submit(self.producer.impl.send_batch(msgs, message_queue=key[1]))

    def _submit(self, coro: Any) -> None:
        self.in_flight.append(self.producer.loop.submit(coro))
        while len(self.in_flight) >= MAX_IN_FLIGHT:
            _check(self.in_flight.pop(0))

    def finish(self) -> SinkCommitMessage:
        for key in list(self.pending):
            self._send(key)
        while self.in_flight:
            _check(self.in_flight.pop(0))
        return SinkCommitMessage(rows=self.rows, batches=self.batches)


def _check(future: Future[Any]) -> None:
    from rocketq.client import SendStatus

    result = future.result()
    if result.status is not SendStatus.SEND_OK:
        raise ClientError(f"a send to {result.message_queue} ended {result.status.value}")


def write_batches(batches: Iterator[Any], options: WriteOptions) -> SinkCommitMessage:
    """Send every row of the Arrow record batches a task receives; checked before returning.

    Each record batch is converted whole before any of its rows is sent, so a bad row
    (null value, negative delayLevel) fails the task before that batch sends anything.
    """
    sender = _TaskSender(options)
    for batch in batches:
        for msg, sharding_key in batch_to_messages(batch, options):
            sender.add(msg, sharding_key)
    return sender.finish()


class TopicBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: WriteOptions, schema: StructType, overwrite: bool) -> None:
        if overwrite:
            raise SparkOptionError("a topic is append-only: use mode('append'), not overwrite")
        check_input_schema(schema, options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        return write_batches(iterator, self.options)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, SinkCommitMessage))
        log.info("rocketq sink: %d rows stored", rows)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, SinkCommitMessage))
        log.warning("rocketq sink aborted; %d rows of finished tasks stay stored", rows)


class TopicStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: WriteOptions, schema: StructType, overwrite: bool) -> None:
        check_input_schema(schema, options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        return write_batches(iterator, self.options)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, SinkCommitMessage))
        log.info("rocketq sink: batch %d, %d rows stored", batchId, rows)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning("rocketq sink: batch %d aborted; rows of finished tasks stay stored", batchId)
