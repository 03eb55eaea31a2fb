"""CommitLog record codec (RocketMQ's MessageExtEncoder + MessageDecoder), ids, batch bodies.

Record layout (store.md §2.1; IPv4 hosts, v1 magic)::

    0 TOTALSIZE i4 | 4 MAGIC i4 | 8 BODYCRC i4 | 12 QUEUEID i4 | 16 FLAG i4
    20 QUEUEOFFSET i8 | 28 PHYSICALOFFSET i8 | 36 SYSFLAG i4 | 40 BORNTIMESTAMP i8
    48 BORNHOST 8|20 | STORETIMESTAMP i8 | STOREHOST 8|20 | RECONSUMETIMES i4
    PREPARED_TX_OFFSET i8 | BODYLENGTH i4 | BODY B | TOPICLEN 1|2 | TOPIC T | PROPLEN i2 | PROPS P
    = 91 + B + T + P   (+1 with the v2 magic, +12 per IPv6 host)

Batch body record (remoting.md §5.6)::

    0 TOTALSIZE i4 | 4 MAGIC i4 (0) | 8 BODYCRC i4 (0) | 12 FLAG i4 | 16 BODYLENGTH i4
    20 BODY n | PROPLEN i2 | PROPS p   = 22 + n + p

Offset msgId (store.md §3): hex of store IP, store port (i4) and commitlog offset (i8).
"""

from __future__ import annotations

import socket
import struct
import zlib
from collections.abc import Iterable
from functools import lru_cache

from rocketq.common.message import Host, Message, MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.properties import decode_properties, encode_properties
from rocketq.errors import DecodeError

MESSAGE_MAGIC_CODE = 0xDAA320A7
MESSAGE_MAGIC_CODE_V2 = 0xDAA320AB
BLANK_MAGIC_CODE = 0xCBD43194

QUEUE_OFFSET_POSITION = 20
PHYSICAL_OFFSET_POSITION = 28
SYSFLAG_POSITION = 36
BORN_TIMESTAMP_POSITION = 40
BORN_HOST_POSITION = 48
V1_TOPIC_MAX_BYTES = 127
MIN_RECORD_SIZE = 91

HEAD_STRUCT = struct.Struct(
    ">i"  # TOTALSIZE
    "I"  # MAGICCODE
    "i"  # BODYCRC
    "i"  # QUEUEID
    "i"  # FLAG
    "q"  # QUEUEOFFSET
    "q"  # PHYSICALOFFSET
    "i"  # SYSFLAG
    "q"  # BORNTIMESTAMP
)
HEAD_SIZE = HEAD_STRUCT.size
assert HEAD_SIZE == 48
STORE_TIMESTAMP_STRUCT = struct.Struct(">q")
TAIL_STRUCT = struct.Struct(
    ">i"  # RECONSUMETIMES
    "q"  # PREPARED_TX_OFFSET
    "i"  # BODYLENGTH
)
TAIL_SIZE = TAIL_STRUCT.size
assert TAIL_SIZE == 16
#: Everything before BODY when both hosts are IPv4: one pack/unpack on the hot paths.
FIXED_V4_STRUCT = struct.Struct(
    HEAD_STRUCT.format
    + "8s"  # BORNHOST (IPv4 + port)
    + STORE_TIMESTAMP_STRUCT.format[1:]
    + "8s"  # STOREHOST (IPv4 + port)
    + TAIL_STRUCT.format[1:]
)
FIXED_V4_SIZE = FIXED_V4_STRUCT.size
assert FIXED_V4_SIZE == 88
BATCH_HEAD_STRUCT = struct.Struct(
    ">i"  # TOTALSIZE
    "i"  # MAGICCODE (0)
    "i"  # BODYCRC (0)
    "i"  # FLAG
    "i"  # BODYLENGTH
)
BATCH_HEAD_SIZE = BATCH_HEAD_STRUCT.size
assert BATCH_HEAD_SIZE == 20
MSG_ID_STRUCT_V4 = struct.Struct(">4siq")
MSG_ID_STRUCT_V6 = struct.Struct(">16siq")
_INT8 = struct.Struct(">b")
_UINT8 = struct.Struct(">B")
_INT16 = struct.Struct(">h")
_UINT16 = struct.Struct(">H")
_PORT = struct.Struct(">i")
_V6_FLAGS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG


def store_timestamp_position(sys_flag: int) -> int:
    return 56 if not sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 68


def calc_msg_length(
    sys_flag: int, body_length: int, topic_length: int, properties_length: int, *, v2: bool = False
) -> int:
    """MessageExtEncoder.calMsgLength."""
    born = 20 if sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 8
    store = 20 if sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else 8
    return (
        4
        + 4
        + 4
        + 4
        + 4
        + 8
        + 8
        + 4
        + 8
        + born
        + 8
        + store
        + 4
        + 8
        + 4
        + body_length
        + (2 if v2 else 1)
        + topic_length
        + 2
        + properties_length
    )


def body_crc(body: bytes | bytearray | memoryview) -> int:
    """CRC32 of the stored body masked with 0x7FFFFFFF (store.md §2.3)."""
    return zlib.crc32(body) & 0x7FFFFFFF if body else 0


# ---------------------------------------------------------------------- hosts


@lru_cache(maxsize=4096)
def host_to_bytes(host: Host) -> bytes:
    """IPv4 → 4 address bytes + port; IPv6 → 16 + port (socketAddress2ByteBuffer)."""
    ip, port = host
    ip = ip.partition("%")[0]  # a scoped link-local address: Java writes the 16 bytes
    try:
        raw = socket.inet_pton(socket.AF_INET, ip)
    except OSError:
        try:
            raw = socket.inet_pton(socket.AF_INET6, ip)
        except OSError as exc:
            raise ValueError(f"not an IP address: {ip!r}") from exc
        mapped = raw[:12] == b"\0" * 10 + b"\xff\xff"
        if mapped:
            raw = raw[12:]
    return raw + _PORT.pack(port)


@lru_cache(maxsize=4096)
def bytes_to_host(raw: bytes) -> Host:
    if len(raw) == 8:
        return socket.inet_ntop(socket.AF_INET, raw[:4]), _PORT.unpack_from(raw, 4)[0]
    return socket.inet_ntop(socket.AF_INET6, raw[:16]), _PORT.unpack_from(raw, 16)[0]


# ---------------------------------------------------------------------- encode


def encode_message(msg: MessageExt) -> bytearray:
    """A whole commitlog record from ``msg``'s fields; the host flags follow the host addresses.

    Raises ``ValueError`` (or ``struct.error``) for a value that does not fit its field, e.g.
    properties over 32,767 bytes.
    """
    body = msg.body or b""
    topic = msg.topic.encode("utf-8")
    props = encode_properties(msg.properties)
    born = host_to_bytes(msg.born_host)
    store = host_to_bytes(msg.store_host)
    sys_flag = msg.sys_flag & ~(
        MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    )
    if len(born) == 20:
        sys_flag |= MessageSysFlag.BORNHOST_V6_FLAG
    if len(store) == 20:
        sys_flag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
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
    out: list[MessageExt] = []
    pos = 0
    end = len(buf)
    while pos < end:
        msg, size = _decode_at(buf, pos, check_crc, read_body, decompress)
        out.append(msg)
        pos += size
    return out


def decode_record_properties(buf: bytes | bytearray | memoryview) -> dict[str, str]:
    """Only the properties of the record at the start of ``buf`` (the broker's SQL92 filter).

    Reads the lengths on the way (hosts, BODYLENGTH, TOPICLEN) and decodes nothing else;
    DecodeError when a length runs past the record.
    """
    head = HEAD_STRUCT.unpack_from(buf, 0)
    total, magic, sys_flag = head[0], head[1], head[7]
    p = BORN_HOST_POSITION + (20 if sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 8) + 8
    p += 20 if sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else 8
    body_len = TAIL_STRUCT.unpack_from(buf, p)[2]
    p += TAIL_SIZE + body_len
    if magic == MESSAGE_MAGIC_CODE_V2:
        p += 2 + _UINT16.unpack_from(buf, p)[0]
    else:
        p += 1 + _INT8.unpack_from(buf, p)[0]
    (props_len,) = _INT16.unpack_from(buf, p)
    if body_len < 0 or props_len < 0 or p + 2 + props_len > min(total, len(buf)):
        raise DecodeError(f"the properties run past the record end ({total} bytes)")
    return decode_properties(buf[p + 2 : p + 2 + props_len])


def _decode_at(
    buf: bytes | bytearray | memoryview,
    offset: int,
    check_crc: bool,
    read_body: bool,
    decompress: bool,
) -> tuple[MessageExt, int]:
    limit = len(buf)
    if limit - offset < MIN_RECORD_SIZE:
        raise DecodeError(f"{limit - offset} bytes left, a record needs at least 91", offset)
    (total, magic, crc, queue_id, flag, queue_offset, phy, sys_flag, born_ts) = (
        HEAD_STRUCT.unpack_from(buf, offset)
    )
    if magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2:
        raise DecodeError(f"bad magic code 0x{magic:08X}", offset)
    end = offset + total
    if total < MIN_RECORD_SIZE or end > limit:
        raise DecodeError(f"TOTALSIZE {total} outside the {limit - offset} bytes left", offset)
    if not sys_flag & _V6_FLAGS:
        fixed = FIXED_V4_STRUCT.unpack_from(buf, offset)
        born_raw, store_ts, store_raw, reconsume, prepared, body_len = fixed[9:]
        p = offset + FIXED_V4_SIZE
    else:
        p = offset + BORN_HOST_POSITION
        born_len = 20 if sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 8
        born_raw = bytes(buf[p : p + born_len])
        p += born_len
        (store_ts,) = STORE_TIMESTAMP_STRUCT.unpack_from(buf, p)
        p += 8
        store_len = 20 if sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else 8
        store_raw = bytes(buf[p : p + store_len])
        p += store_len
        reconsume, prepared, body_len = TAIL_STRUCT.unpack_from(buf, p)
        p += TAIL_SIZE
    born = bytes_to_host(born_raw)
    store = bytes_to_host(store_raw)
    if body_len < 0 or p + body_len > end:
        raise DecodeError(f"BODYLENGTH {body_len} runs past the record end", offset)
    body = b""
    if check_crc and body_crc(buf[p : p + body_len]) != crc:
        raise DecodeError(f"body CRC mismatch (stored {crc})", offset)
    if read_body:
        body = bytes(buf[p : p + body_len])
        if decompress and sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            body = _decompress(body, sys_flag, offset)
    p += body_len
    v2 = magic == MESSAGE_MAGIC_CODE_V2
    if v2:
        (topic_len,) = _UINT16.unpack_from(buf, p)
        p += 2
    else:
        (topic_len,) = _INT8.unpack_from(buf, p)
        p += 1
    if topic_len < 0 or p + topic_len + 2 > end:
        raise DecodeError(f"TOPICLENGTH {topic_len} runs past the record end", offset)
    try:
        topic = bytes(buf[p : p + topic_len]).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"topic is not UTF-8: {exc}", offset) from exc
    p += topic_len
    (props_len,) = _INT16.unpack_from(buf, p)
    p += 2
    if props_len < 0 or p + props_len != end:
        raise DecodeError(f"PROPERTIESLENGTH {props_len} disagrees with TOTALSIZE {total}", offset)
    try:
        props = decode_properties(buf[p:end]) if props_len else {}
    except UnicodeDecodeError as exc:
        raise DecodeError(f"properties are not UTF-8: {exc}", offset) from exc
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
        born_host=born,
        store_timestamp=store_ts,
        store_host=store,
        msg_id=_msg_id_from_raw(store_raw, phy),
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


# ---------------------------------------------------------------------- message ids


def _msg_id_from_raw(store_raw: bytes, phy: int) -> str:
    return (store_raw + phy.to_bytes(8, "big", signed=True)).hex().upper()


def create_message_id(store_host: Host, commitlog_offset: int) -> str:
    """The offset msgId: 32 hex characters for an IPv4 store host, 56 for IPv6."""
    return _msg_id_from_raw(host_to_bytes(store_host), commitlog_offset)


def decode_message_id(msg_id: str) -> tuple[Host, int]:
    """Inverse of :func:`create_message_id` (32 characters = IPv4, otherwise IPv6)."""
    try:
        raw = bytes.fromhex(msg_id)
    except ValueError as exc:
        raise DecodeError(f"message id {msg_id!r} is not hex") from exc
    layout = MSG_ID_STRUCT_V4 if len(msg_id) == 32 else MSG_ID_STRUCT_V6
    if len(raw) != layout.size:
        raise DecodeError(f"message id {msg_id!r} has {len(msg_id)} characters, not 32 or 56")
    ip, port, offset = layout.unpack(raw)
    family = socket.AF_INET if len(ip) == 4 else socket.AF_INET6
    return (socket.inet_ntop(family, ip), port), offset


# ---------------------------------------------------------------------- batch bodies


def encode_batch_message(msg: Message) -> bytes:
    props = encode_properties(msg.properties)
    body = msg.body or b""
    total = BATCH_HEAD_SIZE + len(body) + 2 + len(props)
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
        if end - pos < BATCH_HEAD_SIZE + 2:
            raise DecodeError(f"{end - pos} trailing bytes do not hold a batch record", pos)
        total, _magic, _crc, flag, body_len = BATCH_HEAD_STRUCT.unpack_from(body, pos)
        p = pos + BATCH_HEAD_SIZE
        if body_len < 0 or p + body_len + 2 > end:
            raise DecodeError(f"batch BODYLENGTH {body_len} runs past the body", pos)
        data = bytes(body[p : p + body_len])
        p += body_len
        (props_len,) = _INT16.unpack_from(body, p)
        p += 2
        if props_len < 0 or p + props_len > end:
            raise DecodeError(f"batch PROPERTIESLENGTH {props_len} runs past the body", pos)
        try:
            props = decode_properties(body[p : p + props_len])
        except UnicodeDecodeError as exc:
            raise DecodeError(f"batch properties are not UTF-8: {exc}", pos) from exc
        p += props_len
        if total != p - pos:
            raise DecodeError(f"batch TOTALSIZE {total} disagrees with its fields ({p - pos})", pos)
        out.append(Message(topic=topic, body=data, flag=flag, properties=props))
        pos = p
    return out
