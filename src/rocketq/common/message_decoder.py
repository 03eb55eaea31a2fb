"""CommitLog record codec (RocketMQ's MessageExtEncoder + MessageDecoder) and batch bodies.

The record layout is ``record_layout``'s; this module turns a ``MessageExt`` into those bytes
and back. ``encode_message`` and ``decode_messages`` hand the work to the C extension when
``native_record`` selects it; the code here is the reference and decides every record the C
walk leaves to it (corrupt, compressed, bad UTF-8). Batch body record (RocketMQ's
MessageDecoder#encodeMessage)::

    0 TOTALSIZE i4 | 4 MAGIC i4 (0) | 8 BODYCRC i4 (0) | 12 FLAG i4 | 16 BODYLENGTH i4
    20 BODY n | PROPLEN i2 | PROPS p   = 22 + n + p
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

from rocketq.common import native_record
from rocketq.common.message import Message, MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_id import bytes_to_host, host_to_bytes, message_id_from_host_bytes
from rocketq.common.properties import decode_properties, encode_properties
from rocketq.common.record_layout import (
    FIXED_V4_SIZE,
    FIXED_V4_STRUCT,
    HEAD_STRUCT,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
    PROPERTIES_LENGTH_SIZE,
    STORE_TIMESTAMP_STRUCT,
    TAIL_STRUCT,
    V1_TOPIC_MAX_BYTES,
    body_length_position,
    calc_msg_length,
    fixed_size,
    locate_topic_and_properties,
    unpack_fixed,
)
from rocketq.errors import DecodeError

BATCH_HEAD_STRUCT = struct.Struct(
    ">i"  # TOTALSIZE
    "i"  # MAGICCODE (0)
    "i"  # BODYCRC (0)
    "i"  # FLAG
    "i"  # BODYLENGTH
)
BATCH_HEAD_SIZE = BATCH_HEAD_STRUCT.size
assert BATCH_HEAD_SIZE == 20
_UINT8 = struct.Struct(">B")
_V6_FLAGS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def body_crc(body: bytes | bytearray | memoryview) -> int:
    """CRC32 of the stored body masked with 0x7FFFFFFF (UtilAll#crc32)."""
    return zlib.crc32(body) & 0x7FFFFFFF if body else 0


# ---------------------------------------------------------------------- encode


def encode_message(msg: MessageExt, properties: bytes | None = None) -> bytearray:
    """A whole commitlog record from ``msg``'s fields; the host flags follow the host addresses.
    ``properties``, when given, is the record's properties string as bytes (a broker passing
    the producer's string through) instead of ``msg.properties`` encoded.

    Raises ``ValueError`` (or ``struct.error``) for a value that does not fit its field, e.g.
    properties over 32,767 bytes.
    """
    compiled = native_record.RECORD
    if compiled is not None and properties is None and type(msg.properties) is dict:
        return compiled.encode_message_ext(msg, host_to_bytes)
    body = msg.body or b""
    born = host_to_bytes(msg.born_host)
    store = host_to_bytes(msg.store_host)
    sys_flag = msg.sys_flag & ~(
        MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    )
    if len(born) == 20:
        sys_flag |= MessageSysFlag.BORNHOST_V6_FLAG
    if len(store) == 20:
        sys_flag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    if compiled is not None:  # given properties bytes, or another Mapping type: encoded here
        props_in = encode_properties(msg.properties) if properties is None else properties
        return compiled.encode_record(
            msg.topic,
            body,
            props_in,
            born,
            store,
            sys_flag,
            msg.queue_id,
            msg.flag,
            msg.queue_offset,
            msg.commitlog_offset,
            msg.born_timestamp,
            msg.store_timestamp,
            msg.reconsume_times,
            msg.prepared_transaction_offset,
        )
    topic = msg.topic.encode("utf-8")
    props = encode_properties(msg.properties) if properties is None else properties
    v2 = len(topic) > V1_TOPIC_MAX_BYTES
    total = calc_msg_length(sys_flag, len(body), len(topic), len(props), v2=v2)
    magic = MESSAGE_MAGIC_CODE_V2 if v2 else MESSAGE_MAGIC_CODE
    head = (
        total,
        magic,
        body_crc(body),
        msg.queue_id,
        msg.flag,
        msg.queue_offset,
        msg.commitlog_offset,
        sys_flag,
        msg.born_timestamp,
    )
    tail = (msg.reconsume_times, msg.prepared_transaction_offset, len(body))
    if len(born) == 8 and len(store) == 8:
        record = bytearray(FIXED_V4_STRUCT.pack(*head, born, msg.store_timestamp, store, *tail))
    else:
        record = bytearray(HEAD_STRUCT.pack(*head))
        record += born
        record += STORE_TIMESTAMP_STRUCT.pack(msg.store_timestamp)
        record += store
        record += TAIL_STRUCT.pack(*tail)
    record += body
    record += _INT16.pack(len(topic)) if v2 else _UINT8.pack(len(topic))
    record += topic
    record += _INT16.pack(len(props))
    record += props
    return record


# ---------------------------------------------------------------------- decode


def decode_message(
    buf: bytes | bytearray | memoryview,
    offset: int = 0,
    *,
    check_crc: bool = True,
    read_body: bool = True,
    decompress: bool = False,
) -> MessageExt:
    """Decode the record at ``offset``; DecodeError says what is wrong and where."""
    msg, _size = _decode_at(buf, offset, check_crc, read_body, decompress)
    return msg


def decode_messages(
    buf: bytes | bytearray | memoryview,
    *,
    check_crc: bool = False,
    read_body: bool = True,
    decompress: bool = False,
) -> list[MessageExt]:
    """Back-to-back records, as in a PULL response body (MessageDecoder.decodes)."""
    compiled = native_record.RECORD
    out: list[MessageExt] = []
    pos = 0
    end = len(buf)
    while pos < end:
        if compiled is not None:
            # the C walk stops at a record it leaves to _decode_at (corrupt: it raises there)
            msgs, pos, stopped = compiled.decode_records(
                buf, pos, check_crc, read_body, decompress, MessageExt, bytes_to_host
            )
            out.extend(msgs)
            if not stopped:
                break
        msg, size = _decode_at(buf, pos, check_crc, read_body, decompress)
        out.append(msg)
        pos += size
    return out


def decode_record_properties(buf: bytes | bytearray | memoryview) -> dict[str, str]:
    """Only the properties of the record at the start of ``buf`` (the broker's SQL92 filter):
    the lengths on the way are read, nothing else is decoded; DecodeError when they disagree.
    """
    head = HEAD_STRUCT.unpack_from(buf, 0)
    total, magic, sys_flag = head[0], head[1], head[7]
    end = min(total, len(buf))
    p = body_length_position(sys_flag)
    (body_len,) = _INT32.unpack_from(buf, p)
    body_end = p + _INT32.size + body_len
    if body_len < 0 or body_end > end:
        raise DecodeError(f"BODYLENGTH {body_len} runs past the record end ({total} bytes)")
    _, _, props_pos, props_len = locate_topic_and_properties(buf, 0, body_end, magic, end)
    return decode_properties(buf[props_pos : props_pos + props_len])


def _decode_at(
    buf: bytes | bytearray | memoryview,
    offset: int,
    check_crc: bool,
    read_body: bool,
    decompress: bool,
) -> tuple[MessageExt, int]:
    limit = len(buf)
    if limit - offset < MIN_RECORD_SIZE:
        left = limit - offset
        raise DecodeError(f"{left} bytes left, a record needs at least {MIN_RECORD_SIZE}", offset)
    # one unpack for the usual two IPv4 hosts; its head fields are right for any record
    fixed = FIXED_V4_STRUCT.unpack_from(buf, offset)
    (total, magic, crc, queue_id, flag, queue_offset, phy, sys_flag, born_ts) = fixed[:9]
    if magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2:
        raise DecodeError(f"bad magic code 0x{magic:08X}", offset)
    end = offset + total
    if total < MIN_RECORD_SIZE or end > limit:
        raise DecodeError(f"TOTALSIZE {total} outside the {limit - offset} bytes left", offset)
    p = offset + FIXED_V4_SIZE
    if sys_flag & _V6_FLAGS:
        if total < fixed_size(sys_flag) + MIN_RECORD_SIZE - FIXED_V4_SIZE:
            raise DecodeError(f"TOTALSIZE {total} is too small for IPv6 hosts", offset)
        fixed, p = unpack_fixed(buf, offset, sys_flag)
    born_raw, store_ts, store_raw, reconsume, prepared, body_len = fixed[9:]
    if body_len < 0 or p + body_len > end:
        raise DecodeError(f"BODYLENGTH {body_len} runs past the record end", offset)
    body = b""
    if check_crc and body_crc(buf[p : p + body_len]) != crc:
        raise DecodeError(f"body CRC mismatch (stored {crc})", offset)
    if read_body:
        body = bytes(buf[p : p + body_len])
        if decompress and sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            body = _decompress(body, sys_flag, offset)
    try:
        topic_pos, topic_len, props_pos, props_len = locate_topic_and_properties(
            buf, offset, p + body_len, magic, end
        )
        topic = bytes(buf[topic_pos : topic_pos + topic_len]).decode("utf-8")
        props = decode_properties(buf[props_pos:end]) if props_len else {}
    except DecodeError as exc:
        raise DecodeError(exc.reason, offset) from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"topic or properties are not UTF-8: {exc}", offset) from exc
    msg = MessageExt(
        topic=topic,
        body=body,
        flag=flag,
        properties=props,
        queue_id=queue_id,
        store_size=total,
        queue_offset=queue_offset,
        sys_flag=sys_flag,
        born_timestamp=born_ts,
        born_host=bytes_to_host(born_raw),
        store_timestamp=store_ts,
        store_host=bytes_to_host(store_raw),
        msg_id=message_id_from_host_bytes(store_raw, phy),
        commitlog_offset=phy,
        body_crc=crc,
        reconsume_times=reconsume,
        prepared_transaction_offset=prepared,
    )
    return msg, total


def _decompress(body: bytes, sys_flag: int, offset: int) -> bytes:
    kind = sys_flag & MessageSysFlag.COMPRESSION_TYPE_MASK
    if kind not in (0, MessageSysFlag.COMPRESSION_ZLIB):
        raise DecodeError(f"unsupported compression type {kind >> 8}", offset)
    try:
        return zlib.decompress(body)
    except zlib.error as exc:
        raise DecodeError(f"body does not inflate: {exc}", offset) from exc


# ---------------------------------------------------------------------- batch bodies


def encode_batch_message(msg: Message) -> bytes:
    props = encode_properties(msg.properties)
    body = msg.body or b""
    total = BATCH_HEAD_SIZE + len(body) + PROPERTIES_LENGTH_SIZE + len(props)
    return b"".join(
        (
            BATCH_HEAD_STRUCT.pack(total, 0, 0, msg.flag, len(body)),
            body,
            _INT16.pack(len(props)),
            props,
        )
    )


def encode_batch_messages(msgs: Iterable[Message]) -> bytes:
    """The SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessages)."""
    return b"".join(encode_batch_message(m) for m in msgs)


def decode_batch_messages(body: bytes | bytearray | memoryview, topic: str = "") -> list[Message]:
    """Inverse of :func:`encode_batch_messages`; DecodeError on a truncated or bad record."""
    out: list[Message] = []
    pos = 0
    end = len(body)
    while pos < end:
        if end - pos < BATCH_HEAD_SIZE + PROPERTIES_LENGTH_SIZE:
            raise DecodeError(f"{end - pos} trailing bytes do not hold a batch record", pos)
        total, _magic, _crc, flag, body_len = BATCH_HEAD_STRUCT.unpack_from(body, pos)
        p = pos + BATCH_HEAD_SIZE
        if body_len < 0 or p + body_len + PROPERTIES_LENGTH_SIZE > end:
            raise DecodeError(f"batch BODYLENGTH {body_len} runs past the body", pos)
        data = bytes(body[p : p + body_len])
        p += body_len
        (props_len,) = _INT16.unpack_from(body, p)
        p += PROPERTIES_LENGTH_SIZE
        if props_len < 0 or p + props_len > end:
            raise DecodeError(f"batch PROPERTIESLENGTH {props_len} runs past the body", pos)
        try:
            props = decode_properties(body[p : p + props_len])
        except UnicodeDecodeError as exc:
            raise DecodeError(f"batch properties are not UTF-8: {exc}", pos) from exc
        p += props_len
        if total != p - pos:
            raise DecodeError(f"batch TOTALSIZE {total} disagrees with its fields ({p - pos})", pos)
        msg = Message(topic, data, flag=flag)
        msg.properties = props  # as they came, system ones too (MessageAccessor.setProperties)
        out.append(msg)
        pos = p
    return out
