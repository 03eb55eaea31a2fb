"""The fields of a chunk of commitlog records, gathered with numpy.

Shared by the two sources: the store-file reader (``store.columns``, records in a mapped
segment) and the topic reader (``topic.pull_body``, records back to back in a PULL_MESSAGE
body, the same layout: RocketMQ's ``MessageDecoder.decodes``).

Fixed-width fields are read as structured big-endian dtypes whose field offsets are
``record_layout``'s; where a field sits depends on the two IPv6 host bits of SYSFLAG, so its
position comes from a four-entry table built from ``record_layout``'s own position functions.
Each check of the row decoder (``decode_message`` and ``split.message_decoder``) is a
mask; ``gather_fields`` keeps the records before the first one that fails and says how many.
Variable fields are gathered only for the records kept, so no read leaves a record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import body_crc
from rocketq.common.record_layout import (
    BODY_CRC_POSITION,
    BODY_LENGTH_OFFSET_IN_TAIL,
    BORN_HOST_POSITION,
    BORN_TIMESTAMP_POSITION,
    HEAD_SIZE,
    MAGIC_CODE_POSITION,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
    PHYSICAL_OFFSET_POSITION,
    PROPERTIES_LENGTH_SIZE,
    QUEUE_ID_POSITION,
    QUEUE_OFFSET_POSITION,
    STORE_TIMESTAMP_STRUCT,
    SYSFLAG_POSITION,
    TAIL_SIZE,
    TOTAL_SIZE_POSITION,
    body_length_position,
    born_host_size,
    fixed_size,
    store_host_size,
    store_timestamp_position,
    topic_length_size,
)
from rocketq.spark.properties import PropertiesColumn, parse_properties

Ints = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.uint8]

HOST_BITS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
HOST_SHIFT = 4  # record_layout asserts the two host flags are 0x10 and 0x20
_FLAGS = [bits << HOST_SHIFT for bits in range(4)]
#: indexed by the host bits of SYSFLAG shifted down
BORN_HOST_SIZE = np.array([born_host_size(f) for f in _FLAGS], np.int64)
STORE_TS_POS = np.array([store_timestamp_position(f) for f in _FLAGS], np.int64)
STORE_HOST_SIZE = np.array([store_host_size(f) for f in _FLAGS], np.int64)
TAIL_POS = np.array([body_length_position(f) - BODY_LENGTH_OFFSET_IN_TAIL for f in _FLAGS])
MIN_SIZE = np.array([fixed_size(f) + MIN_RECORD_SIZE - fixed_size(0) for f in _FLAGS])

HEAD_DTYPE = np.dtype(
    {
        "names": ["total", "magic", "crc", "queue_id", "queue_offset", "phy", "sys_flag", "born"],
        "formats": [">i4", ">u4", ">i4", ">i4", ">i8", ">i8", ">i4", ">i8"],
        "offsets": [
            TOTAL_SIZE_POSITION,
            MAGIC_CODE_POSITION,
            BODY_CRC_POSITION,
            QUEUE_ID_POSITION,
            QUEUE_OFFSET_POSITION,
            PHYSICAL_OFFSET_POSITION,
            SYSFLAG_POSITION,
            BORN_TIMESTAMP_POSITION,
        ],
        "itemsize": HEAD_SIZE,
    }
)
TAIL_DTYPE = np.dtype(
    {
        "names": ["reconsume", "body_len"],
        "formats": [">i4", ">i4"],
        "offsets": [0, BODY_LENGTH_OFFSET_IN_TAIL],
        "itemsize": TAIL_SIZE,
    }
)
V2_TOPIC_LENGTH = topic_length_size(MESSAGE_MAGIC_CODE_V2)


@dataclass(frozen=True, slots=True)
class RecordFields:
    """The first ``count`` records of a chunk: numpy columns and Arrow arrays."""

    count: int
    total: Ints
    queue_id: Ints
    queue_offset: Ints
    phy: Ints
    sys_flag: Ints
    born_ts: Ints
    store_ts: Ints
    reconsume: Ints
    body: Any  # pa.BinaryArray
    topic: Any  # pa.StringArray
    born_host: Any  # pa.BinaryArray of the raw 8- or 20-byte hosts
    store_host: Any
    properties: PropertiesColumn


def gather_fields(
    seg: Bytes, view: memoryview, starts: Ints, base: int | None, verify_crc: bool
) -> RecordFields:
    """The records at ``starts`` (heads already walked) up to the first one the row decoder
    would refuse; ``count`` says how many that is. ``base`` is the physical offset of byte 0
    of ``seg`` (each record's PHYSICALOFFSET must match), None for a pull body, whose records
    come from anywhere in the commitlog."""
    head = records(seg, starts, HEAD_DTYPE)
    total = head["total"].astype(np.int64)
    sys_flag = head["sys_flag"].astype(np.int64)
    hosts = (sys_flag & HOST_BITS) >> HOST_SHIFT
    ends = starts + total
    placed = np.ones(len(starts), bool) if base is None else head["phy"] == base + starts
    n = first_false(placed & (total >= MIN_SIZE[hosts]))
    starts, ends, hosts = starts[:n], ends[:n], hosts[:n]
    store_ts_pos = starts + STORE_TS_POS[hosts]
    tail_pos = starts + TAIL_POS[hosts]
    tail = records(seg, tail_pos, TAIL_DTYPE)
    body_len = tail["body_len"].astype(np.int64)
    body_pos = tail_pos + TAIL_SIZE
    body_end = body_pos + body_len
    v2 = head["magic"][:n] == MESSAGE_MAGIC_CODE_V2
    topic_pos = body_end + np.where(v2, V2_TOPIC_LENGTH, 1)
    n = first_false((body_len >= 0) & (topic_pos + PROPERTIES_LENGTH_SIZE <= ends))
    b0 = seg[body_end[:n]].astype(np.int64)
    b1 = seg[body_end[:n] + 1].astype(np.int64)
    topic_len = np.where(v2[:n], b0 << 8 | b1, b0 - ((b0 & 0x80) << 1))  # v1: signed byte
    props_len_pos = topic_pos[:n] + topic_len
    n = first_false((topic_len >= 0) & (props_len_pos + PROPERTIES_LENGTH_SIZE <= ends[:n]))
    props_len = be_int16(seg, props_len_pos[:n])
    props_pos = props_len_pos[:n] + PROPERTIES_LENGTH_SIZE
    n = first_false((props_len >= 0) & (props_pos + props_len == ends[:n]))
    if verify_crc:
        crcs = head["crc"][:n].tolist()
        spans = zip(body_pos[:n].tolist(), body_end[:n].tolist(), crcs, strict=True)
        n = first_false(np.array([body_crc(view[a:b]) == c for a, b, c in spans], dtype=bool))
    topic = utf8_prefix(*take_ranges(seg, topic_pos[:n], topic_len[:n]))
    props = parse_properties(*take_ranges(seg, props_pos[:n], props_len[:n]))
    n = min(len(topic), props.count)
    born_pos = starts[:n] + BORN_HOST_POSITION
    return RecordFields(
        count=n,
        total=total[:n],
        queue_id=head["queue_id"][:n].astype(np.int64),
        queue_offset=head["queue_offset"][:n].astype(np.int64),
        phy=head["phy"][:n].astype(np.int64),
        sys_flag=sys_flag[:n],
        born_ts=head["born"][:n].astype(np.int64),
        store_ts=be_int64(seg, store_ts_pos[:n]),
        reconsume=tail["reconsume"][:n].astype(np.int64),
        body=binary(*take_ranges(seg, body_pos[:n], body_len[:n])),
        topic=topic[:n],
        born_host=binary(*take_ranges(seg, born_pos, BORN_HOST_SIZE[hosts[:n]])),
        store_host=binary(
            *take_ranges(
                seg, store_ts_pos[:n] + STORE_TIMESTAMP_STRUCT.size, STORE_HOST_SIZE[hosts[:n]]
            )
        ),
        properties=props.head(n),
    )


def first_false(ok: npt.NDArray[np.bool_]) -> int:
    """How many leading entries of ``ok`` are true."""
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else len(ok)


def records(seg: Bytes, at: Ints, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """``dtype.itemsize`` bytes at each of ``at``, viewed as one structured record each."""
    raw, _ = take_ranges(seg, at, np.full(len(at), dtype.itemsize, np.int64))
    out: npt.NDArray[Any] = raw.view(dtype).reshape(len(at))
    return out


def be_int64(seg: Bytes, at: Ints) -> Ints:
    return records(seg, at, np.dtype(">i8")).astype(np.int64)


def be_int16(seg: Bytes, at: Ints) -> Ints:
    return records(seg, at, np.dtype(">i2")).astype(np.int64)


def take_ranges(seg: Bytes, starts: Ints, lengths: Ints) -> tuple[Bytes, Ints]:
    """The bytes of each ``[start, start + length)`` back to back, and their offsets.

    The ranges are in order and apart (one field of each record), so ``seg`` cut at every
    start and end is an Arrow binary array whose even values are the ranges (``take`` reads
    only those, so a range may overlap the next); Arrow's ``take`` copies them out in C (a
    per-byte numpy index cost several times more). Ranges are bounds-checked first.
    """
    n = len(starts)
    if n == 0:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    bounds = np.empty(2 * n, np.int64)
    bounds[0::2] = starts
    bounds[1::2] = starts + lengths
    if int(lengths.min()) < 0 or int(starts.min()) < 0 or int(bounds.max()) > len(seg):
        raise IndexError(f"a range of {n} is outside the {len(seg)} bytes or negative")
    cut = pa.Array.from_buffers(
        pa.large_binary(), 2 * n - 1, [None, pa.py_buffer(bounds), pa.py_buffer(seg)]
    )
    picked = cut.take(pa.array(np.arange(0, 2 * n - 1, 2, dtype=np.int64)))
    del cut  # no view of ``seg`` (a mapped segment) outlives the call
    _, offsets_buf, data_buf = picked.buffers()
    offsets: Ints = np.frombuffer(offsets_buf, np.int64)[: n + 1]
    if data_buf is None or offsets[-1] == 0:
        return np.zeros(0, np.uint8), offsets - offsets[0]
    data: Bytes = np.frombuffer(data_buf, np.uint8)[offsets[0] : offsets[-1]]
    return data, offsets - offsets[0]


def binary(data: Bytes, offsets: Ints, kind: Any = None) -> Any:
    """An Arrow binary (or ``kind``) array over ``data`` cut at ``offsets``, no copy."""
    return pa.Array.from_buffers(
        kind or pa.binary(),
        len(offsets) - 1,
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
    )


def utf8_prefix(data: Bytes, offsets: Ints) -> Any:
    """A string array of the leading values that are valid UTF-8 (the row decoder refuses
    the first that is not)."""
    texts = binary(data, offsets, pa.string())
    try:
        texts.validate(full=True)
    except pa.ArrowInvalid:
        for i, raw in enumerate(binary(data, offsets).to_pylist()):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return texts[:i]
        raise
    return texts
