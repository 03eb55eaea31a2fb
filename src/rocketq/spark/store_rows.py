"""Arrow record batches from decoded store records (executor side; imports pyarrow).

``message_batches`` turns ``MessageExt`` objects (the store's one decoder) into rows of
``store_schema.STORE_COLUMNS`` with the shared ``schema.store_row``; ``dispatch_batches``
turns ``DispatchRequest``s (the reput thread's view of a record) into rows of
``DISPATCH_COLUMNS``, which the rebuild job uses. Batches hold ``batch_rows`` rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from rocketq.common.message import MessageExt
from rocketq.spark.schema import arrow_schema, store_row
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
    """Rows cut into batches; columns come from one C-level transpose (``zip(*rows)``)."""
    import pyarrow as pa

    schema = arrow_schema(columns)
    types = [field.type for field in schema]
    it = iter(items)
    while rows := [row(item, broker) for item in itertools.islice(it, batch_rows)]:
        transposed = zip(*rows, strict=True)
        arrays = [pa.array(col, type=kind) for col, kind in zip(transposed, types, strict=True)]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
