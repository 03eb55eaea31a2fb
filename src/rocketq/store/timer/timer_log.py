"""TimerLog: the ``timerlog/`` files, an append-only log of 52-byte timer units (TimerLog.java).

Unit (``TIMER_LOG_UNIT_STRUCT``), 52 bytes, big-endian::

    0  SIZE          i4  52 (UNIT_SIZE)
    4  PREV_POS      i8  timerlog offset of the slot's previous unit (-1: first of its slot)
    12 MAGIC         i4  1 MAGIC_DEFAULT | 2 MAGIC_ROLL | 4 MAGIC_DELETE
    16 WRITE_TIME    i8  currWriteTimeMs when enqueued (for trace)
    24 DELAY         i4  delayed time - WRITE_TIME: the slot is WRITE_TIME + DELAY
    28 OFFSET_PY     i8  commitlog offset of the wheel-topic message (UNIT_PRE_SIZE_FOR_MSG)
    36 SIZE_PY       i4  its size
    40 TOPIC_HASH    i4  String.hashCode of REAL_TOPIC (UNIT_PRE_SIZE_FOR_METRIC)
    44 RESERVED      i8  0
    = 52

Units of one slot chain backwards through PREV_POS from the wheel slot's LAST_POS. A unit
never straddles two files: when fewer than ``52 + MIN_BLANK_LEN`` bytes are left, a 16-byte
blank (remaining size i4, 0 i8, BLANK_MAGIC_CODE i4) ends the file and the unit opens the next
one. Files are named by their first offset (20 digits) like the commitlog's; 100 MiB each by
default (mappedFileSizeTimerLog).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from rocketq.store.mapped_file import MappedFile
from rocketq.store.mapped_file_queue import MappedFileQueue

TIMER_LOG_UNIT_STRUCT = struct.Struct(
    ">"
    "i"  # SIZE
    "q"  # PREV_POS
    "i"  # MAGIC
    "q"  # WRITE_TIME
    "i"  # DELAY
    "q"  # OFFSET_PY
    "i"  # SIZE_PY
    "i"  # TOPIC_HASH
    "q"  # RESERVED
)
UNIT_SIZE = 52
assert TIMER_LOG_UNIT_STRUCT.size == UNIT_SIZE
UNIT_PRE_SIZE_FOR_MSG = struct.calcsize(">iqiqi")
UNIT_PRE_SIZE_FOR_METRIC = struct.calcsize(">iqiqiqi")
assert (UNIT_PRE_SIZE_FOR_MSG, UNIT_PRE_SIZE_FOR_METRIC) == (28, 40)

BLANK_STRUCT = struct.Struct(">iqi")  # remaining size, 0, BLANK_MAGIC_CODE
MIN_BLANK_LEN = BLANK_STRUCT.size
assert MIN_BLANK_LEN == 16
# Java: 0xBBCCDDEE ^ 1880681586 + 8, where + binds first; as a signed int
BLANK_MAGIC_CODE = ((0xBBCCDDEE ^ (1880681586 + 8)) ^ 0x80000000) - 0x80000000

MAGIC_DEFAULT = 1
MAGIC_ROLL = 1 << 1
MAGIC_DELETE = 1 << 2


def is_magic_ok(magic: int) -> bool:
    return (magic | 0xF) == 0xF


class TimerLogUnit(NamedTuple):
    size: int
    prev_pos: int
    magic: int
    write_time_ms: int
    delay_ms: int
    offset_py: int
    size_py: int
    topic_hash: int
    reserved: int = 0

    @property
    def delayed_time_ms(self) -> int:
        return self.write_time_ms + self.delay_ms

    def encode(self) -> bytes:
        return TIMER_LOG_UNIT_STRUCT.pack(*self)


class TimerLog:
    def __init__(self, store_path: str, file_size: int) -> None:
        self.file_size = file_size
        self.mapped_file_queue = MappedFileQueue(store_path, file_size)

    def load(self) -> bool:
        return self.mapped_file_queue.load()

    def append(self, data: bytes) -> int:
        """Append a unit; its timerlog offset (a blank first closes a full file)."""
        mfq = self.mapped_file_queue
        mf = mfq.get_last_mapped_file_or_create(0)
        if len(data) + MIN_BLANK_LEN > mf.remaining():
            blank = BLANK_STRUCT.pack(mf.remaining(), 0, BLANK_MAGIC_CODE)
            mf.append_message(blank)
            mf.wrote_position = self.file_size
            mf = mfq.get_last_mapped_file_or_create(0)
        pos = mf.file_from_offset + mf.wrote_position
        mf.append_message(data)
        return pos

    def get_unit(self, offset: int) -> TimerLogUnit | None:
        mf = self.mapped_file_queue.find_mapped_file_by_offset(offset)
        if mf is None:
            return None
        rel = offset % self.file_size
        if rel + UNIT_SIZE > self.file_size:
            return None
        return TimerLogUnit(*TIMER_LOG_UNIT_STRUCT.unpack_from(mf.view, rel))

    def files_from(self, offset: int) -> list[MappedFile]:
        """The files from the one holding ``offset`` on (the first when before them all)."""
        files = self.mapped_file_queue.mapped_files
        start = 0
        for i, mf in enumerate(files):
            if offset >= mf.file_from_offset:
                start = i
        return list(files[start:])

    def truncate(self, offset: int) -> None:
        """Cut the log at ``offset`` and zero the cut tail of its file, so that no stale unit
        past the end can look valid to a later recovery."""
        mfq = self.mapped_file_queue
        mfq.truncate_dirty_files(offset)
        last = mfq.get_last_mapped_file()
        if last is not None and last.file_from_offset <= offset < last.file_from_offset + (
            self.file_size
        ):
            rel = offset - last.file_from_offset
            last.write_at(rel, bytes(self.file_size - rel))
            last.set_positions(rel)

    def offset_for_last_unit(self) -> int:
        """Where a full file's last unit starts (TimerLog.getOffsetForLastUnit)."""
        fs = self.file_size
        return fs - (fs - MIN_BLANK_LEN) % UNIT_SIZE - MIN_BLANK_LEN - UNIT_SIZE

    def delete_expired_files(self, min_commit_log_offset: int) -> int:
        """Drop files (never the last) whose last unit points below the commitlog's head."""
        mfq = self.mapped_file_queue
        doomed: list[MappedFile] = []
        at = self.offset_for_last_unit()
        for mf in mfq.mapped_files[:-1]:
            unit = TimerLogUnit(*TIMER_LOG_UNIT_STRUCT.unpack_from(mf.view, at))
            if unit.size != UNIT_SIZE or unit.offset_py >= min_commit_log_offset:
                break
            doomed.append(mf)
        return mfq._delete(doomed)

    def flush(self) -> None:
        self.mapped_file_queue.flush(0)

    @property
    def flushed_where(self) -> int:
        return self.mapped_file_queue.flushed_where

    def shutdown(self) -> None:
        self.mapped_file_queue.flush(0)
        self.mapped_file_queue.shutdown()
