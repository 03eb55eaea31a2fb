"""Fixed layouts of the store's side files: ConsumeQueue units, IndexFile, checkpoint.

ConsumeQueue unit (ConsumeQueue#putMessagePositionInfo), 20 bytes::

    0 COMMITLOG_OFFSET i8 | 8 SIZE i4 | 12 TAGS_CODE i8

IndexFile (IndexFile.java, IndexHeader.java): a 40-byte header, ``slot_num`` 4-byte slots,
``index_num`` 20-byte entries (entry 0 never written)::

    header: 0 BEGIN_TIMESTAMP i8 | 8 END_TIMESTAMP i8 | 16 BEGIN_PHY_OFFSET i8
            24 END_PHY_OFFSET i8 | 32 HASH_SLOT_COUNT i4 | 36 INDEX_COUNT i4
    slot s at 40 + 4*s: the newest index number for the slot (0 = empty)
    entry i at 40 + 4*slot_num + 20*i: KEY_HASH i4 | PHY_OFFSET i8 | TIME_DIFF_S i4 | PREV_INDEX i4
    file size = 40 + 4*slot_num + 20*index_num

Checkpoint (StoreCheckpoint.java), a 4096-byte page::

    0 PHYSIC_MSG_TIMESTAMP i8 | 8 LOGICS_MSG_TIMESTAMP i8 | 16 INDEX_MSG_TIMESTAMP i8
    24 MASTER_FLUSHED_OFFSET i8 | 32 CONFIRM_PHY_OFFSET i8 | zeros to 4096
"""

from __future__ import annotations

import struct

FILE_NAME_DIGITS = 20

CQ_STORE_UNIT_STRUCT = struct.Struct(
    ">q"  # commitlog physical offset
    "i"  # record size (TOTALSIZE)
    "q"  # tags code (or delivery time for SCHEDULE_TOPIC_XXXX)
)
CQ_STORE_UNIT_SIZE = CQ_STORE_UNIT_STRUCT.size
assert CQ_STORE_UNIT_SIZE == 20
#: The SIZE of a filler unit, written before the first entry of a rebuilt queue (fillPreBlank).
CQ_FILLER_SIZE = 0x7FFFFFFF
CQ_BLANK_UNIT = CQ_STORE_UNIT_STRUCT.pack(0, CQ_FILLER_SIZE, 0)

INDEX_HEADER_STRUCT = struct.Struct(
    ">q"  # beginTimestamp
    "q"  # endTimestamp
    "q"  # beginPhyOffset
    "q"  # endPhyOffset
    "i"  # hashSlotCount
    "i"  # indexCount (entries + 1)
)
INDEX_HEADER_SIZE = INDEX_HEADER_STRUCT.size
assert INDEX_HEADER_SIZE == 40
INDEX_SLOT_STRUCT = struct.Struct(">i")
INDEX_SLOT_SIZE = INDEX_SLOT_STRUCT.size
assert INDEX_SLOT_SIZE == 4
INDEX_ENTRY_STRUCT = struct.Struct(
    ">i"  # keyHash
    "q"  # commitlog physical offset
    "i"  # timeDiff in seconds from beginTimestamp
    "i"  # prevIndex (0 ends the chain)
)
INDEX_ENTRY_SIZE = INDEX_ENTRY_STRUCT.size
assert INDEX_ENTRY_SIZE == 20
INDEX_HASH_SLOT_COUNT_POSITION = 32
INDEX_COUNT_POSITION = 36

CHECKPOINT_STRUCT = struct.Struct(
    ">q"  # physicMsgTimestamp
    "q"  # logicsMsgTimestamp
    "q"  # indexMsgTimestamp
    "q"  # masterFlushedOffset (5.0+)
    "q"  # confirmPhyOffset (5.1.1+)
)
CHECKPOINT_FIELDS_SIZE = CHECKPOINT_STRUCT.size
assert CHECKPOINT_FIELDS_SIZE == 40
CHECKPOINT_FILE_SIZE = 4096


def offset_to_file_name(offset: int) -> str:
    """The 20-digit name of a commitlog or consume queue file starting at ``offset``."""
    return f"{offset:0{FILE_NAME_DIGITS}d}"


def index_file_size(slot_num: int, index_num: int) -> int:
    return INDEX_HEADER_SIZE + INDEX_SLOT_SIZE * slot_num + INDEX_ENTRY_SIZE * index_num


def index_slot_position(slot: int) -> int:
    return INDEX_HEADER_SIZE + INDEX_SLOT_SIZE * slot


def index_entry_position(slot_num: int, index_no: int) -> int:
    return INDEX_HEADER_SIZE + INDEX_SLOT_SIZE * slot_num + INDEX_ENTRY_SIZE * index_no


def is_valid_cq_unit(offset: int, size: int) -> bool:
    """A unit counts as written when offset >= 0 and size > 0 (fillers excluded by callers)."""
    return offset >= 0 and size > 0
