"""The read schema of a topic: one row per message, Kafka-like names where the meaning matches.

The topic source (``rocketq``) emits exactly ``TOPIC_COLUMNS``; the store-file source
(``rocketq-store``) emits the same columns followed by ``STORE_EXTRA_COLUMNS``. Rows cross to
the JVM as Arrow record batches (twice the rate of tuples, docs/spark.md), built by
``RecordBatchBuilder`` from ``MessageExt`` objects. pyarrow is imported only when a batch is
built, never at import time (Spark imports ``pyspark_*`` modules on every lookup).

| column          | type                 | from                                              |
|-----------------|----------------------|---------------------------------------------------|
| key             | string               | first of the KEYS property                        |
| value           | binary               | body                                              |
| topic           | string               |                                                   |
| broker          | string               | broker name (part of the queue's identity)        |
| queueId         | int                  |                                                   |
| queueOffset     | bigint               | ConsumeQueue index: what offsets checkpoint       |
| commitLogOffset | bigint               | physical offset                                   |
| msgId           | string               | UNIQ_KEY when present, else the offset msgId      |
| keys            | string               | the KEYS property as stored (space separated)     |
| tags            | string               | TAGS property                                     |
| properties      | map<string,string>   | every property                                    |
| bornTimestamp   | timestamp            |                                                   |
| timestamp       | timestamp            | store time (Kafka's LogAppendTime)                |
| timestampType   | int                  | always 1 (log-append), for Kafka-shaped code      |
| bornHost        | string               | ``ip:port``                                       |
| storeHost       | string               | ``ip:port``                                       |
| reconsumeTimes  | int                  |                                                   |
| sysFlag         | int                  | store source only                                 |
| storeSize       | int                  | store source only (the record's TOTALSIZE)        |
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_id import Host

TIMESTAMP_TYPE_LOG_APPEND = 1

TOPIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "STRING"),
    ("value", "BINARY"),
    ("topic", "STRING"),
    ("broker", "STRING"),
    ("queueId", "INT"),
    ("queueOffset", "BIGINT"),
    ("commitLogOffset", "BIGINT"),
    ("msgId", "STRING"),
    ("keys", "STRING"),
    ("tags", "STRING"),
    ("properties", "MAP<STRING, STRING>"),
    ("bornTimestamp", "TIMESTAMP"),
    ("timestamp", "TIMESTAMP"),
    ("timestampType", "INT"),
    ("bornHost", "STRING"),
    ("storeHost", "STRING"),
    ("reconsumeTimes", "INT"),
)
STORE_EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sysFlag", "INT"),
    ("storeSize", "INT"),
)


def ddl(columns: Iterable[tuple[str, str]]) -> str:
    """Spark's DDL text for ``columns`` (what ``DataSource.schema()`` returns)."""
    return ", ".join(f"`{name}` {kind}" for name, kind in columns)


TOPIC_SCHEMA_DDL = ddl(TOPIC_COLUMNS)
STORE_SCHEMA_DDL = ddl(TOPIC_COLUMNS + STORE_EXTRA_COLUMNS)


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {
        "STRING": pa.string(),
        "BINARY": pa.binary(),
        "INT": pa.int32(),
        "BIGINT": pa.int64(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "MAP<STRING, STRING>": pa.map_(pa.string(), pa.string()),
    }[kind]


def arrow_schema(columns: Iterable[tuple[str, str]] = TOPIC_COLUMNS) -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(kind)) for name, kind in columns])


def host_text(host: Host) -> str:
    ip, port = host
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def topic_row(msg: MessageExt, broker: str) -> tuple[Any, ...]:
    """One message as the values of ``TOPIC_COLUMNS`` (timestamps in microseconds)."""
    props = msg.properties
    keys = props.get(mc.PROPERTY_KEYS)
    return (
        keys.split(mc.KEY_SEPARATOR)[0] if keys else None,
        msg.body,
        msg.topic,
        broker,
        msg.queue_id,
        msg.queue_offset,
        msg.commitlog_offset,
        msg.uniq_key or msg.msg_id or msg.offset_msg_id,
        keys,
        props.get(mc.PROPERTY_TAGS),
        list(props.items()),
        msg.born_timestamp * 1000,
        msg.store_timestamp * 1000,
        TIMESTAMP_TYPE_LOG_APPEND,
        host_text(msg.born_host),
        host_text(msg.store_host),
        msg.reconsume_times,
    )


def store_row(msg: MessageExt, broker: str) -> tuple[Any, ...]:
    """``topic_row`` plus the store source's ``sysFlag`` and ``storeSize``."""
    return (*topic_row(msg, broker), msg.sys_flag, msg.store_size)


class RecordBatchBuilder:
    """Collects rows column-wise and cuts pyarrow ``RecordBatch``es of the given schema."""

    def __init__(self, columns: tuple[tuple[str, str], ...] = TOPIC_COLUMNS) -> None:
        self.schema = arrow_schema(columns)
        self._columns: list[list[Any]] = [[] for _ in columns]

    def __len__(self) -> int:
        return len(self._columns[0])

    def append(self, row: tuple[Any, ...]) -> None:
        for column, value in zip(self._columns, row, strict=True):
            column.append(value)

    def flush(self) -> Any:
        """The rows collected so far as one RecordBatch; the builder starts empty again."""
        import pyarrow as pa

        arrays = [
            pa.array(values, type=field.type)
            for values, field in zip(self._columns, self.schema, strict=True)
        ]
        self._columns = [[] for _ in self._columns]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
