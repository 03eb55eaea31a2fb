"""Read-only walkers over a store directory: commitlog records, consume queues, index files.

They map files read-only, never write and never take the ``lock``, so they work on a live or
crashed store and on one written by Apache RocketMQ. File sizes come from the files (all the
files of one directory share the size of the first); index files are sized by their
slot/entry counts (``IndexLayout``), taken from a config or inferred from the file size.
"""

from __future__ import annotations

import array
import contextlib
import mmap
import os
import struct
import sys
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import BLANK_MAGIC_CODE, decode_message
from rocketq.errors import DecodeError
from rocketq.store.format import (
    CQ_STORE_UNIT_SIZE,
    CQ_STORE_UNIT_STRUCT,
    FILE_NAME_DIGITS,
    INDEX_ENTRY_STRUCT,
    INDEX_HEADER_STRUCT,
    index_entry_position,
    index_file_size,
)

_HEAD = struct.Struct(">iI")
FILLER_SIZE = 0x7FFFFFFF
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
DEFAULT_SLOTS = 5_000_000
DEFAULT_ENTRIES = 20_000_000


@dataclass(slots=True)
class RecordInfo:
    offset: int
    size: int
    topic: str
    queue_id: int
    queue_offset: int
    sys_flag: int
    store_timestamp: int
    tags: str
    keys: str
    uniq_key: str
    body_size: int
    crc_ok: bool
    delay_level: int = 0

    @property
    def in_consume_queue(self) -> bool:
        """Prepared and rolled-back transaction records get no consume queue unit."""
        tran = self.sys_flag & MessageSysFlag.TRANSACTION_TYPE_MASK
        return tran not in (
            MessageSysFlag.TRANSACTION_PREPARED_TYPE,
            MessageSysFlag.TRANSACTION_ROLLBACK_TYPE,
        )

    @property
    def tags_code(self) -> int:
        return java_string_hash(self.tags) if self.tags else 0


@dataclass(slots=True)
class DataEnd:
    """Where the walk stopped: ``clean`` when the rest of the last file is unwritten."""

    path: str
    offset: int
    reason: str
    clean: bool


@dataclass(slots=True)
class CqUnit:
    queue_offset: int
    commit_log_offset: int
    size: int
    tags_code: int
    path: str
    position: int


@dataclass(slots=True)
class IndexLayout:
    hash_slot_num: int = DEFAULT_SLOTS
    index_num: int = DEFAULT_ENTRIES

    def fits(self, size: int) -> bool:
        return index_file_size(self.hash_slot_num, self.index_num) == size

    def for_size(self, size: int) -> IndexLayout | None:
        """This layout when it fits, else slots = entries / 4 inferred from ``size``."""
        if self.fits(size):
            return self
        slots, rest = divmod(size - 40, 4 + 20 * 4)
        return IndexLayout(slots, 4 * slots) if slots > 0 and rest == 0 else None


@dataclass(slots=True)
class IndexEntry:
    index_no: int
    key_hash: int
    phy_offset: int
    time_diff_s: int
    prev_index: int


@dataclass
class IndexFileInfo:
    path: str
    begin_timestamp: int
    end_timestamp: int
    begin_phy_offset: int
    end_phy_offset: int
    hash_slot_count: int
    index_count: int
    layout: IndexLayout
    entries: list[IndexEntry] = field(default_factory=list)
    bad_slots: list[tuple[int, int]] = field(default_factory=list)


def data_files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        return []
    names = sorted(n for n in os.listdir(directory) if len(n) == FILE_NAME_DIGITS and n.isdigit())
    return [os.path.join(directory, n) for n in names]


@contextlib.contextmanager
def _mapped(path: str) -> Iterator[memoryview]:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            yield memoryview(b"")
            return
        mm = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
        view = memoryview(mm)
        try:
            yield view
        finally:
            view.release()
            mm.close()


# ---------------------------------------------------------------------- commitlog


def iter_commitlog(commit_log_dir: str, from_offset: int = 0) -> Iterator[RecordInfo | DataEnd]:
    """Every record from ``from_offset``, then one DataEnd where valid data stops."""
    files = data_files(commit_log_dir)
    for i, path in enumerate(files):
        base = int(os.path.basename(path))
        size = os.path.getsize(path)
        if base + size <= from_offset:
            continue
        last = i == len(files) - 1
        with _mapped(path) as view:
            end = yield from _walk_file(view, path, base, max(0, from_offset - base), last)
        if end is not None:
            yield end
            return
    yield DataEnd(files[-1] if files else commit_log_dir, _end_offset(files), "end", True)


def is_zero(view: memoryview, start: int) -> bool:
    """True when every byte from ``start`` to the end is zero (4 MiB at a time)."""
    chunk = 4 << 20
    for begin in range(start, len(view), chunk):
        if view[begin : begin + chunk].tobytes().strip(b"\0"):
            return False
    return True


def _end_offset(files: list[str]) -> int:
    if not files:
        return 0
    return int(os.path.basename(files[-1])) + os.path.getsize(files[-1])


def _walk_file(
    view: memoryview, path: str, base: int, pos: int, last: bool
) -> Generator[RecordInfo, None, DataEnd | None]:
    """Records of one file; returns None at its blank record, else where valid data ends."""
    size = len(view)
    while pos + 8 <= size:
        total, magic = _HEAD.unpack_from(view, pos)
        if magic == BLANK_MAGIC_CODE and 8 <= total <= size - pos:
            return None
        if total == 0 and magic == 0:
            if not last:
                return DataEnd(path, base + pos, "zero header before the blank record", False)
            if is_zero(view, pos):
                return DataEnd(path, base + pos, "unwritten space", True)
            return DataEnd(path, base + pos, "non-zero bytes after the last record", False)
        try:
            msg = decode_message(view, pos, check_crc=False, read_body=False)
        except DecodeError as exc:
            return DataEnd(path, base + pos, exc.reason, False)
        if msg.commitlog_offset != base + pos:
            reason = f"PHYSICALOFFSET {msg.commitlog_offset} is not the record's offset"
            return DataEnd(path, base + pos, reason, False)
        yield _record_info(view, pos, msg)
        pos += msg.store_size
    return None


def _record_info(view: memoryview, pos: int, msg: MessageExt) -> RecordInfo:
    born = 20 if msg.sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 8
    store = 20 if msg.sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else 8
    p = pos + 48 + born + 8 + store + 12
    body_len = int.from_bytes(view[p : p + 4], "big", signed=True)
    body = view[p + 4 : p + 4 + body_len]
    crc = zlib.crc32(body) & 0x7FFFFFFF if body_len > 0 else 0
    props = msg.properties
    try:
        delay = int(props.get("DELAY", "0"))
    except ValueError:
        delay = 0
    return RecordInfo(
        offset=msg.commitlog_offset,
        size=msg.store_size,
        topic=msg.topic,
        queue_id=msg.queue_id,
        queue_offset=msg.queue_offset,
        sys_flag=msg.sys_flag,
        store_timestamp=msg.store_timestamp,
        tags=props.get("TAGS", ""),
        keys=props.get("KEYS", ""),
        uniq_key=props.get("UNIQ_KEY", ""),
        body_size=body_len,
        crc_ok=crc == msg.body_crc,
        delay_level=delay,
    )


# ---------------------------------------------------------------------- consume queues


def consume_queue_ids(cq_root: str) -> list[tuple[str, int]]:
    """(topic, queue id) of every queue directory under ``consumequeue/``."""
    out: list[tuple[str, int]] = []
    if not os.path.isdir(cq_root):
        return out
    for topic in sorted(os.listdir(cq_root)):
        topic_dir = os.path.join(cq_root, topic)
        if os.path.isdir(topic_dir):
            out += [(topic, int(q)) for q in sorted(os.listdir(topic_dir)) if q.isdigit()]
    return out


def iter_consume_queue(cq_root: str, topic: str, queue_id: int) -> Iterator[CqUnit]:
    """Written units in queue-offset order (fillers included; stops at the first empty one)."""
    for path in data_files(os.path.join(cq_root, topic, str(queue_id))):
        base = int(os.path.basename(path))
        with _mapped(path) as view:
            for pos in range(0, len(view) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
                phy, size, tags = CQ_STORE_UNIT_STRUCT.unpack_from(view, pos)
                if phy < 0 or size <= 0:
                    return
                yield CqUnit((base + pos) // CQ_STORE_UNIT_SIZE, phy, size, tags, path, pos)


# ---------------------------------------------------------------------- index files


def index_files(index_dir: str) -> list[str]:
    if not os.path.isdir(index_dir):
        return []
    return [os.path.join(index_dir, n) for n in sorted(os.listdir(index_dir)) if n.isdigit()]


def read_index_file(path: str, layout: IndexLayout) -> IndexFileInfo | None:
    """Header, entries 1..indexCount-1 and out-of-range slots; None if the size fits no layout."""
    fitted = layout.for_size(os.path.getsize(path))
    if fitted is None:
        return None
    with _mapped(path) as view:
        begin_ts, end_ts, begin_phy, end_phy, slot_count, count = INDEX_HEADER_STRUCT.unpack_from(
            view, 0
        )
        info = IndexFileInfo(
            path, begin_ts, end_ts, begin_phy, end_phy, slot_count, max(1, count), fitted
        )
        limit = min(info.index_count, fitted.index_num)
        for no in range(1, limit):
            pos = index_entry_position(fitted.hash_slot_num, no)
            info.entries.append(IndexEntry(no, *INDEX_ENTRY_STRUCT.unpack_from(view, pos)))
        slots = array.array("i")
        slots.frombytes(view[40 : 40 + 4 * fitted.hash_slot_num])
        if sys.byteorder == "little":
            slots.byteswap()
        if slots and (max(slots) > info.index_count or min(slots) < 0):
            info.bad_slots = [(i, v) for i, v in enumerate(slots) if v < 0 or v > info.index_count][
                :100
            ]
    return info
