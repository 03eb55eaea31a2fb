"""Arrow record batches from decoded store records (executor side; imports pyarrow).

``message_batches`` turns ``MessageExt`` objects (the store's one decoder) into rows of
``store_schema.STORE_COLUMNS``; ``dispatch_batches`` turns ``DispatchRequest``s (the reput
thread's view of a record) into rows of ``DISPATCH_COLUMNS``, which the rebuild job uses.
Rows are collected column by column and cut into batches of ``batch_rows``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rocketq.common.message import Host, MessageExt
from rocketq.common.message_const import (
    KEY_SEPARATOR,
    PROPERTY_KEYS,
    PROPERTY_TAGS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
)
from rocketq.spark.schema import arrow_schema
from rocketq.spark.store_schema import DISPATCH_COLUMNS, STORE_COLUMNS
from rocketq.store.commitlog import DispatchRequest

DEFAULT_BATCH_ROWS = 8192


def host_text(host: Host) -> str:
    ip, port = host
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def message_row(msg: MessageExt, broker: str) -> tuple[Any, ...]:
    """The values of one row of ``STORE_COLUMNS``, in order."""
    props = msg.properties
    keys = props.get(PROPERTY_KEYS)
    first_key = next((k for k in keys.split(KEY_SEPARATOR) if k), None) if keys else None
    return (
        msg.topic,
        broker,
        msg.queue_id,
        msg.queue_offset,
        msg.commitlog_offset,
        props.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg.msg_id,
        first_key,
        keys,
        props.get(PROPERTY_TAGS),
        msg.body,
        list(props.items()),
        msg.born_timestamp * 1000,
        msg.store_timestamp * 1000,
        host_text(msg.born_host),
        host_text(msg.store_host),
        msg.reconsume_times,
        msg.sys_flag,
        msg.store_size,
    )


def dispatch_row(req: DispatchRequest, broker: str) -> tuple[Any, ...]:
    return (
        broker,
        req.topic,
        req.queue_id,
        req.consume_queue_offset,
        req.commit_log_offset,
        req.msg_size,
        req.tags_code,
        req.store_timestamp,
        req.keys or None,
        req.uniq_key,
        req.sys_flag,
    )


def message_batches(
    msgs: Iterable[MessageExt], broker: str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[Any]:
    return _batches((message_row(m, broker) for m in msgs), STORE_COLUMNS, batch_rows)


def dispatch_batches(
    reqs: Iterable[DispatchRequest], broker: str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[Any]:
    return _batches((dispatch_row(r, broker) for r in reqs), DISPATCH_COLUMNS, batch_rows)


def _batches(
    rows: Iterable[tuple[Any, ...]], columns: tuple[tuple[str, str], ...], batch_rows: int
) -> Iterator[Any]:
    import pyarrow as pa

    schema = arrow_schema(columns)
    chunk: list[tuple[Any, ...]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= batch_rows:
            yield _to_batch(pa, schema, chunk)
            chunk = []
    if chunk:
        yield _to_batch(pa, schema, chunk)


def _to_batch(pa: Any, schema: Any, chunk: list[tuple[Any, ...]]) -> Any:
    arrays = [
        pa.array(list(values), type=field.type)
        for values, field in zip(zip(*chunk, strict=True), schema, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
