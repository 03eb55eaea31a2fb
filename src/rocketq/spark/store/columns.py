"""The columnar reader of a commitlog split: Arrow columns straight from the mapped bytes.

Theory of operation. ``split.walk_heads`` lists the record starts of a split (a Python
loop over 8-byte heads, well under a microsecond a record). A chunk of starts is then decoded
with no per-record Python objects: fixed-width fields are gathered with numpy fancy indexing
over the mapped segment (big-endian dtypes whose field offsets come from ``record_layout``),
and variable fields (body, topic, properties, hosts) become Arrow binary and string arrays
made of an offsets buffer and one gathered data buffer. The properties map is parsed in the
same vectorised way: separators found with numpy, entries cut where RocketMQ's
``string2messageProperties`` cuts them (``rocketq.spark.fields`` and ``rocketq.spark.properties``,
shared with the topic reader; ``rocketq.spark.record_columns`` makes the columns).

Every check the store's row decoder (``decode_message`` plus ``split.message_decoder``)
makes is made here as a mask over the chunk. The reader keeps the rows before the first record
that fails any of them (or that it does not represent the same way: duplicate property names,
where a dict keeps one) and hands that record's position to the row reader, which continues
the split exactly as it always did: it raises ``CorruptionError`` or, with ``skip_corrupt``,
steps over the record. So the two readers give the same rows and the same errors by
construction; tests hold them equal row for row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rocketq.spark.fields import RecordFields, gather_fields
from rocketq.spark.record_columns import record_arrays
from rocketq.spark.schema import arrow_schema
from rocketq.spark.store.rows import message_batches
from rocketq.spark.store.schema import STORE_COLUMNS
from rocketq.spark.store.split import (
    CommitLogSplit,
    MappedSegment,
    iter_split,
    message_decoder,
    walk_heads,
)

Ints = npt.NDArray[np.int64]
#: a chunk's record bytes stay well inside the int32 offsets of Arrow's binary type
CHUNK_MAX_BYTES = 256 << 20


def columnar_batches(
    split: CommitLogSplit,
    *,
    verify_crc: bool,
    skip_corrupt: bool = False,
    topics: frozenset[str] | None = None,
    batch_rows: int = 8192,
) -> Iterator[Any]:
    """The ``STORE_COLUMNS`` record batches of ``split``, equal to the row reader's."""
    schema = arrow_schema(STORE_COLUMNS)
    walked = False
    with MappedSegment(split.path) as (mm, view):
        seg = np.frombuffer(view, dtype=np.uint8)
        try:
            starts_list, stop = walk_heads(split, mm, view)
            starts = np.array(starts_list, dtype=np.int64)
            for lo, hi in _chunks(starts, batch_rows):
                chunk = starts[lo:hi]
                fields = gather_fields(seg, view, chunk, split.base, verify_crc)
                if fields.count:
                    walked = True
                    batch = _batch(fields, split.broker, schema)
                    batch = batch if topics is None else _only(batch, topics)
                    if batch.num_rows:
                        yield batch
                if fields.count < len(chunk):
                    stop = int(chunk[fields.count])
                    break
        finally:
            del seg
    # the record at ``stop`` (if any) and everything after it: the row reader, as before
    msgs = iter_split(
        split, message_decoder(verify_crc), skip_corrupt=skip_corrupt, resume=(stop, walked)
    )
    if topics is not None:
        msgs = (m for m in msgs if m.topic in topics)
    yield from message_batches(msgs, split.broker, batch_rows)


def _chunks(starts: Ints, rows: int) -> Iterator[tuple[int, int]]:
    """[lo, hi) index ranges of at most ``rows`` records and about CHUNK_MAX_BYTES."""
    lo = 0
    while lo < len(starts):
        hi = min(lo + rows, len(starts))
        far = int(np.searchsorted(starts, starts[lo] + CHUNK_MAX_BYTES, side="left"))
        hi = max(lo + 1, min(hi, far))
        yield lo, hi
        lo = hi


def _only(batch: Any, topics: frozenset[str]) -> Any:
    keep = pc.is_in(batch.column("topic"), value_set=pa.array(sorted(topics), pa.string()))
    return batch.filter(keep)


def _batch(f: RecordFields, broker: str, schema: Any) -> Any:
    return pa.RecordBatch.from_arrays(record_arrays(f, broker), schema=schema)
