"""The CommitLog record layout (RocketMQ's CommitLog.MessageExtEncoder, MessageDecoder#decode):
the one place its field offsets are named.

Record (IPv4 hosts, v1 magic)::

    0 TOTALSIZE i4 | 4 MAGICCODE i4 | 8 BODYCRC i4 | 12 QUEUEID i4 | 16 FLAG i4
    20 QUEUEOFFSET i8 | 28 PHYSICALOFFSET i8 | 36 SYSFLAG i4 | 40 BORNTIMESTAMP i8
    48 BORNHOST 8|20 | STORETIMESTAMP i8 | STOREHOST 8|20 | RECONSUMETIMES i4
    PREPARED_TX_OFFSET i8 | BODYLENGTH i4 | BODY B | TOPICLEN 1|2 | TOPIC T | PROPLEN i2 | PROPS P
    = 91 + B + T + P   (+1 with the v2 magic, +12 per IPv6 host)

A host is 4 address bytes + a 4-byte port, or 16 + 4 when its SYSFLAG bit (BORNHOST_V6 0x10,
STOREHOSTADDRESS_V6 0x20) is set, so every field from BORNHOST on moves with those bits: ask
``store_timestamp_position(sys_flag)`` and friends instead of writing 56/68. The v2 magic
(topics over 127 bytes) widens TOPICLEN to 2 bytes. A file ends with a blank record: TOTALSIZE
(the bytes left) and BLANK_MAGIC_CODE, 8 bytes.

``unpack_fixed`` reads everything up to BODY in one call; ``locate_topic_and_properties``
walks the variable tail and says where it breaks (``DecodeError``).
"""

from __future__ import annotations

import struct

from rocketq.common.message_const import MessageSysFlag
from rocketq.errors import DecodeError

MESSAGE_MAGIC_CODE = 0xDAA320A7
MESSAGE_MAGIC_CODE_V2 = 0xDAA320AB
BLANK_MAGIC_CODE = 0xCBD43194

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
TOTAL_SIZE_POSITION = 0
MAGIC_CODE_POSITION = struct.calcsize(">i")
BODY_CRC_POSITION = struct.calcsize(">iI")
QUEUE_ID_POSITION = struct.calcsize(">iIi")
FLAG_POSITION = struct.calcsize(">iIii")
QUEUE_OFFSET_POSITION = struct.calcsize(">iIiii")
PHYSICAL_OFFSET_POSITION = struct.calcsize(">iIiiiq")
SYSFLAG_POSITION = struct.calcsize(">iIiiiqq")
BORN_TIMESTAMP_POSITION = struct.calcsize(">iIiiiqqi")
BORN_HOST_POSITION = HEAD_SIZE
assert (QUEUE_OFFSET_POSITION, PHYSICAL_OFFSET_POSITION, SYSFLAG_POSITION) == (20, 28, 36)

STORE_TIMESTAMP_STRUCT = struct.Struct(">q")
TAIL_STRUCT = struct.Struct(
    ">i"  # RECONSUMETIMES
    "q"  # PREPARED_TX_OFFSET
    "i"  # BODYLENGTH
)
TAIL_SIZE = TAIL_STRUCT.size
assert TAIL_SIZE == 16
BODY_LENGTH_OFFSET_IN_TAIL = struct.calcsize(">iq")
BODY_LENGTH_SIZE = TAIL_SIZE - BODY_LENGTH_OFFSET_IN_TAIL  # BODY follows it
IPV4_HOST_SIZE = 8
IPV6_HOST_SIZE = 20
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
BLANK_STRUCT = struct.Struct(
    ">i"  # TOTALSIZE: the bytes left in the file
    "I"  # MAGICCODE: BLANK_MAGIC_CODE
)
BLANK_SIZE = BLANK_STRUCT.size
assert BLANK_SIZE == 8
PROPERTIES_LENGTH_SIZE = 2
MIN_RECORD_SIZE = FIXED_V4_SIZE + 1 + PROPERTIES_LENGTH_SIZE  # empty body, topic, properties
assert MIN_RECORD_SIZE == 91
V1_TOPIC_MAX_BYTES = 127

_INT8 = struct.Struct(">b")
_UINT16 = struct.Struct(">H")
_INT16 = struct.Struct(">h")
_V6_FLAGS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG

#: (TOTALSIZE, MAGICCODE, BODYCRC, QUEUEID, FLAG, QUEUEOFFSET, PHYSICALOFFSET, SYSFLAG,
#: BORNTIMESTAMP, BORNHOST bytes, STORETIMESTAMP, STOREHOST bytes, RECONSUMETIMES,
#: PREPARED_TX_OFFSET, BODYLENGTH)
FixedFields = tuple[int, int, int, int, int, int, int, int, int, bytes, int, bytes, int, int, int]


_FIXED_SIZES = tuple(
    HEAD_SIZE + STORE_TIMESTAMP_STRUCT.size + TAIL_SIZE + born + store
    for store in (IPV4_HOST_SIZE, IPV6_HOST_SIZE)
    for born in (IPV4_HOST_SIZE, IPV6_HOST_SIZE)
)  # indexed by the two host bits of SYSFLAG, shifted down
assert _FIXED_SIZES == (88, 100, 100, 112)
assert MessageSysFlag.BORNHOST_V6_FLAG >> 4 == 1
assert MessageSysFlag.STOREHOSTADDRESS_V6_FLAG >> 4 == 2


def born_host_size(sys_flag: int) -> int:
    return IPV6_HOST_SIZE if sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else IPV4_HOST_SIZE


def store_host_size(sys_flag: int) -> int:
    return IPV6_HOST_SIZE if sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else IPV4_HOST_SIZE


def store_timestamp_position(sys_flag: int) -> int:
    return BORN_HOST_POSITION + born_host_size(sys_flag)


def body_length_position(sys_flag: int) -> int:
    tail = store_timestamp_position(sys_flag) + STORE_TIMESTAMP_STRUCT.size
    return tail + store_host_size(sys_flag) + BODY_LENGTH_OFFSET_IN_TAIL


def topic_length_size(magic: int) -> int:
    return 2 if magic == MESSAGE_MAGIC_CODE_V2 else 1


def calc_msg_length(
    sys_flag: int, body_length: int, topic_length: int, properties_length: int, *, v2: bool = False
) -> int:
    """MessageExtEncoder.calMsgLength."""
    topic_len_size = 2 if v2 else 1
    return (
        _FIXED_SIZES[(sys_flag & _V6_FLAGS) >> 4]
        + body_length
        + topic_len_size
        + topic_length
        + PROPERTIES_LENGTH_SIZE
        + properties_length
    )


def fixed_size(sys_flag: int) -> int:
    """The bytes before BODY: 88 with two IPv4 hosts, 12 more per IPv6 host."""
    return _FIXED_SIZES[(sys_flag & _V6_FLAGS) >> 4]


def unpack_fixed(
    buf: bytes | bytearray | memoryview, offset: int, sys_flag: int
) -> tuple[FixedFields, int]:
    """The fields before BODY of the record at ``offset`` (whose SYSFLAG the caller read from
    HEAD_STRUCT) and the position of BODY; the caller checked ``fixed_size`` bytes are there."""
    if not sys_flag & _V6_FLAGS:
        return FIXED_V4_STRUCT.unpack_from(buf, offset), offset + FIXED_V4_SIZE
    head = HEAD_STRUCT.unpack_from(buf, offset)
    p = offset + BORN_HOST_POSITION
    born_len = born_host_size(sys_flag)
    born_raw = bytes(buf[p : p + born_len])
    p += born_len
    (store_ts,) = STORE_TIMESTAMP_STRUCT.unpack_from(buf, p)
    p += STORE_TIMESTAMP_STRUCT.size
    store_len = store_host_size(sys_flag)
    store_raw = bytes(buf[p : p + store_len])
    p += store_len
    tail = TAIL_STRUCT.unpack_from(buf, p)
    return (*head, born_raw, store_ts, store_raw, *tail), p + TAIL_SIZE


def locate_topic_and_properties(
    buf: bytes | bytearray | memoryview, start: int, body_end: int, magic: int, end: int
) -> tuple[int, int, int, int]:
    """(topic position, topic length, properties position, properties length) of the record
    from ``start`` to ``end`` whose BODY ends at ``body_end``; DecodeError when they disagree."""
    p = body_end
    if p + topic_length_size(magic) > end:
        raise DecodeError("no room for TOPICLENGTH before the record end")
    if magic == MESSAGE_MAGIC_CODE_V2:
        (topic_len,) = _UINT16.unpack_from(buf, p)
        p += 2
    else:
        (topic_len,) = _INT8.unpack_from(buf, p)
        p += 1
    if topic_len < 0 or p + topic_len + PROPERTIES_LENGTH_SIZE > end:
        raise DecodeError(f"TOPICLENGTH {topic_len} runs past the record end")
    topic_pos = p
    p += topic_len
    (props_len,) = _INT16.unpack_from(buf, p)
    p += PROPERTIES_LENGTH_SIZE
    if props_len < 0 or p + props_len != end:
        raise DecodeError(f"PROPERTIESLENGTH {props_len} disagrees with TOTALSIZE {end - start}")
    return topic_pos, topic_len, p, props_len
