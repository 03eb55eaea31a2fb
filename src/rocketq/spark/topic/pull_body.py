"""A PULL_MESSAGE body straight to Arrow columns, without a Python object per record.

A pull's body holds the pulled records back to back in the commitlog's layout (RocketMQ's
``MessageDecoder.decodes`` reads it). When the native module is built, ``_native``'s
``pull_columns`` (``columns.c``) splits the records into Arrow buffers in one C pass, and
``native_batch`` wraps them, no copy. The numpy path is the reference the tests hold it equal
to: ``record_starts`` walks the TOTALSIZE/MAGICCODE heads, ``spark.fields.gather_fields`` (the
store-file reader's columnar decoder) gathers the fields of all of them with numpy, and
``spark.record_columns`` makes the columns of ``TOPIC_COLUMNS``. Either runs in the Spark
task's thread, never on the client's loop thread, which only receives the bytes.

From the first record the columnar paths do not take (a compressed body, which only the row
decoder inflates; a record whose head or fields the row decoder would refuse or read
differently, e.g. a repeated property name) the rest of the body goes through the client's
row decoder (``decode_messages`` then ``schema.topic_row``), which decodes it or raises as it
always did. ``range_reader.pull_range`` is that row path for whole ranges: the reference the
tests hold this one equal to.

The rows carry the message's own properties. The client's pull path also adds the pull's
MIN_OFFSET and MAX_OFFSET (``PullAPIWrapper.processPullResult``); neither path here does:
they describe one pull, not the message, and would differ between a task and its retry.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketq.common import native_record
from rocketq.common.message_const import KEY_SEPARATOR, MessageSysFlag
from rocketq.common.message_decoder import decode_messages
from rocketq.common.record_layout import (
    HEAD_SIZE,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
)
from rocketq.spark.fields import gather_fields
from rocketq.spark.properties import MAP_TYPE
from rocketq.spark.record_columns import (
    TIMESTAMP_TYPE,
    host_texts,
    offset_msg_ids,
    record_arrays,
)
from rocketq.spark.schema import (
    TIMESTAMP_TYPE_LOG_APPEND,
    TOPIC_COLUMNS,
    RecordBatchBuilder,
    arrow_schema,
    topic_row,
)

TOPIC_SCHEMA = arrow_schema(TOPIC_COLUMNS)
TOPIC_WIDTH = len(TOPIC_COLUMNS)
#: TOTALSIZE and MAGICCODE, the first two fields of ``record_layout.HEAD_STRUCT``
SIZE_MAGIC_STRUCT = struct.Struct(">iI")
MAGIC_CODES = frozenset((MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2))


def record_starts(body: bytes | memoryview) -> tuple[list[int], int]:
    """Where each record of ``body`` starts, up to the first head that is not a whole
    record, and where the last of them ends."""
    starts: list[int] = []
    pos, end = 0, len(body)
    unpack = SIZE_MAGIC_STRUCT.unpack_from
    while pos + HEAD_SIZE <= end:
        total, magic = unpack(body, pos)
        if magic not in MAGIC_CODES or total < MIN_RECORD_SIZE or pos + total > end:
            break
        starts.append(pos)
        pos += total
    return starts, pos


def record_start_array(body: bytes) -> tuple[Any, int]:
    """``record_starts`` as an int64 array, walked in C when the native module is in use."""
    compiled = native_record.RECORD
    if compiled is not None and hasattr(compiled, "record_starts"):  # not in a stale build
        raw, stop = compiled.record_starts(body)
        return np.frombuffer(raw, dtype=np.int64), stop
    walked, stop = record_starts(body)
    return np.array(walked, dtype=np.int64), stop


def body_batches(body: bytes, broker: str) -> list[Any]:
    """The records of ``body`` as ``TOPIC_COLUMNS`` record batches (one, or two when the row
    decoder takes over part way)."""
    compiled = native_record.RECORD
    if compiled is not None and hasattr(compiled, "pull_columns"):  # not in a stale build
        count, stop, buffers = compiled.pull_columns(body)
        batch = native_batch(count, buffers, broker) if count else None
    else:
        batch, stop = numpy_batch(body, broker)
    batches = [] if batch is None else [batch]
    if stop < len(body):
        builder = RecordBatchBuilder()
        for msg in decode_messages(memoryview(body)[stop:], decompress=True):
            builder.append(topic_row(msg, broker))
        batches.append(builder.flush())
    return batches


def numpy_batch(body: bytes, broker: str) -> tuple[Any, int]:
    """The leading records of ``body`` that the columnar path takes, as one batch (None when
    there are none), and where the rest starts: the reference of ``pull_columns``."""
    starts, stop = record_start_array(body)
    if not len(starts):
        return None, stop
    view = memoryview(body)
    seg = np.frombuffer(view, dtype=np.uint8)
    fields = gather_fields(seg, view, starts, None, verify_crc=False)
    n = fields.count
    compressed = np.flatnonzero(fields.sys_flag & MessageSysFlag.COMPRESSED_FLAG)
    if len(compressed):
        n = int(compressed[0])
    stop = int(starts[n]) if n < len(starts) else stop
    if not n:
        return None, stop
    arrays = record_arrays(fields, broker)[:TOPIC_WIDTH]
    batch = pa.RecordBatch.from_arrays(arrays, schema=TOPIC_SCHEMA)
    return (batch.slice(0, n) if n < fields.count else batch), stop


def native_batch(n: int, buffers: tuple[bytes, ...], broker: str) -> Any:
    """``pull_columns``'s buffers of ``n`` records as one ``TOPIC_COLUMNS`` batch."""
    (queue_id, queue_offset, phy, born_ts, store_ts, reconsume) = buffers[:6]
    body, born, store = (_varying(pa.binary(), n, *buffers[i : i + 2]) for i in (6, 10, 12))
    topic = _varying(pa.string(), n, *buffers[8:10])
    entries, (names, values), at = buffers[14], _pairs(buffers[15:19]), buffers[19:]
    keys, tags, uniq = (_lookup(values, raw) for raw in at)
    if uniq.null_count:
        phys = np.frombuffer(phy, np.int64)
        uniq = pc.coalesce(uniq, offset_msg_ids(uniq, store, phys))
    offsets = pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(entries)])
    arrays = [
        pc.list_element(pc.split_pattern(keys, KEY_SEPARATOR, max_splits=1), 0),
        body,
        topic,
        pa.repeat(pa.scalar(broker, pa.string()), n),
        _fixed(pa.int32(), n, queue_id),
        _fixed(pa.int64(), n, queue_offset),
        _fixed(pa.int64(), n, phy),
        uniq,
        keys,
        tags,
        pa.MapArray.from_arrays(offsets, names, values).cast(MAP_TYPE),
        _fixed(TIMESTAMP_TYPE, n, born_ts),
        _fixed(TIMESTAMP_TYPE, n, store_ts),
        pa.repeat(pa.scalar(TIMESTAMP_TYPE_LOG_APPEND, pa.int32()), n),
        host_texts(born),
        host_texts(store),
        _fixed(pa.int32(), n, reconsume),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=TOPIC_SCHEMA)


def _fixed(kind: Any, n: int, raw: bytes) -> Any:
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(raw)])


def _varying(kind: Any, n: int, offsets: bytes, data: bytes) -> Any:
    """A string or binary array of ``n`` values (the C walk checked strings are UTF-8)."""
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _pairs(buffers: tuple[bytes, ...]) -> tuple[Any, Any]:
    """The names and the values of every properties entry."""
    name_offsets, names, value_offsets, values = buffers
    count = len(name_offsets) // 4 - 1
    return (
        _varying(pa.string(), count, name_offsets, names),
        _varying(pa.string(), count, value_offsets, values),
    )


def _lookup(values: Any, raw: bytes) -> Any:
    """The value at each row's entry index in ``raw`` (int64s, -1: the row has none)."""
    index = np.frombuffer(raw, np.int64)
    return values.take(pa.array(index, mask=index < 0))
