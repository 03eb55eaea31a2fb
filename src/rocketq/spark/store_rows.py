"""Arrow record batches from decoded store records (executor side; imports pyarrow).

``message_batches`` turns ``MessageExt`` objects (the store's one decoder) into rows of
``store_schema.STORE_COLUMNS`` with the shared ``schema.store_row``; ``dispatch_batches``
turns ``DispatchRequest``s (the reput thread's view of a record) into rows of
``DISPATCH_COLUMNS``, which the rebuild job uses. Batches hold ``batch_rows`` rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from rocketq.common.message import MessageExt
from rocketq.spark.schema import RecordBatchBuilder, store_row
from rocketq.spark.store_schema import DISPATCH_COLUMNS, STORE_COLUMNS
from rocketq.store.commitlog import DispatchRequest

DEFAULT_BATCH_ROWS = 8192
T = TypeVar("T")


def dispatch_row(req: DispatchRequest, broker: str) -> tuple[Any, ...]:
    """The values of one row of ``DISPATCH_COLUMNS``, in order."""
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
    return _batches(msgs, store_row, broker, STORE_COLUMNS, batch_rows)


def dispatch_batches(
    reqs: Iterable[DispatchRequest], broker: str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[Any]:
    return _batches(reqs, dispatch_row, broker, DISPATCH_COLUMNS, batch_rows)


def _batches(
    items: Iterable[T],
    row: Callable[[T, str], tuple[Any, ...]],
    broker: str,
    columns: tuple[tuple[str, str], ...],
    batch_rows: int,
) -> Iterator[Any]:
    builder = RecordBatchBuilder(columns)
    append = builder.append
    for item in items:
        append(row(item, broker))
        if len(builder) >= batch_rows:
            yield builder.flush()
    if len(builder):
        yield builder.flush()
