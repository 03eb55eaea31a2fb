"""A PULL_MESSAGE body straight to Arrow columns, without a Python object per record.

A pull's body holds the pulled records back to back in the commitlog's layout (RocketMQ's
``MessageDecoder.decodes`` reads it). ``record_starts`` walks their TOTALSIZE/MAGICCODE heads
(in C, ``_native``'s ``record_starts``, when built; this module's function is the reference);
``spark.fields.gather_fields`` (the store-file reader's columnar decoder) gathers the fields of
all of them with numpy; ``spark.record_columns`` makes the columns of ``TOPIC_COLUMNS``. It
runs in the Spark task's thread, never on the client's loop thread, which only receives the
bytes.

From the first record the columnar path does not take (a compressed body, which only the row
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

from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_messages
from rocketq.common.record_layout import (
    HEAD_SIZE,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
)
from rocketq.spark.fields import gather_fields
from rocketq.spark.record_columns import record_arrays
from rocketq.spark.schema import TOPIC_COLUMNS, RecordBatchBuilder, arrow_schema, topic_row

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
    starts, stop = record_start_array(body)
    batches = []
    if len(starts):
        view = memoryview(body)
        seg = np.frombuffer(view, dtype=np.uint8)
        fields = gather_fields(seg, view, starts, None, verify_crc=False)
        n = fields.count
        compressed = np.flatnonzero(fields.sys_flag & MessageSysFlag.COMPRESSED_FLAG)
        if len(compressed):
            n = int(compressed[0])
        if n:
            arrays = record_arrays(fields, broker)[:TOPIC_WIDTH]
            batch = pa.RecordBatch.from_arrays(arrays, schema=TOPIC_SCHEMA)
            batches.append(batch.slice(0, n) if n < fields.count else batch)
        stop = int(starts[n]) if n < len(starts) else stop
    if stop < len(body):
        builder = RecordBatchBuilder()
        for msg in decode_messages(memoryview(body)[stop:], decompress=True):
            builder.append(topic_row(msg, broker))
        batches.append(builder.flush())
    return batches
