"""Read-only walkers over a store directory: commitlog records, consume queues, index files.

They map files read-only, never write and never take the ``lock``, so they work on a live or
crashed store and on one written by Apache RocketMQ. File sizes come from the files (all the
files of one directory share the size of the first); index files are sized by their
slot/entry counts (``IndexLayout``), taken from a config or inferred from the file size.

Where the commitlog's valid data ends: a file ends at its blank record (magic 0xCBD43194).
The first all-zero header is the end of data when the rest of that file and every later file
is zero (Apache RocketMQ pre-allocates the next file, so the last *written* file need not be
the last file). In the last written file a header that does not decode, or a zero header
with data after it, also ends the data, as in RocketMQ's recovery (``torn=True``: a crash
leaves such tails and recovery does not zero them). In any other file it is a problem
(``clean=False``) and the walk goes on at the next file, so one bad file does not hide the
records of the others. The last item is always the final (``final=True``) ``DataEnd``.
"""

from __future__ import annotations

import array
import bisect
import contextlib
import mmap
import os
import struct
import sys
from collections import OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from rocketq.common import message_const as mc
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import body_crc, decode_message
from rocketq.common.record_layout import (
    BLANK_MAGIC_CODE,
    BLANK_SIZE,
    BLANK_STRUCT,
    BODY_LENGTH_SIZE,
    body_length_position,
)
from rocketq.errors import DecodeError
from rocketq.store.config import StoreConfig
from rocketq.store.format import (
    CQ_FILLER_SIZE,
    CQ_STORE_UNIT_SIZE,
    CQ_STORE_UNIT_STRUCT,
    FILE_NAME_DIGITS,
    INDEX_ENTRY_SIZE,
    INDEX_ENTRY_STRUCT,
    INDEX_HEADER_SIZE,
    INDEX_HEADER_STRUCT,
    INDEX_SLOT_SIZE,
    index_entry_position,
    index_file_size,
)

_INT32 = struct.Struct(">i")
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
    path: str = ""
    stored_offset: int = 0  # PHYSICALOFFSET as written; equals ``offset`` in a sound store

    @property
    def in_consume_queue(self) -> bool:
        """Prepared and rolled-back transaction records get no consume queue unit."""
        return MessageSysFlag.has_consume_queue_unit(self.sys_flag)

    @property
    def tags_code(self) -> int:
        return java_string_hash(self.tags) if self.tags else 0


@dataclass(slots=True)
class DataEnd:
    """Where valid data stopped; ``clean`` unless it is a problem, ``torn`` for a torn tail."""

    path: str
    offset: int
    reason: str
    clean: bool
    final: bool = True
    torn: bool = False


@dataclass(slots=True)
class CqUnit:
    queue_offset: int
    commit_log_offset: int
    size: int
    tags_code: int
    path: str
    position: int

    @property
    def is_filler(self) -> bool:
        return self.commit_log_offset == 0 and self.size == CQ_FILLER_SIZE


@dataclass(slots=True)
class IndexLayout:
    hash_slot_num: int = DEFAULT_SLOTS
    index_num: int = DEFAULT_ENTRIES

    @classmethod
    def of(cls, config: StoreConfig | None, hash_slot_num: int | None = None) -> IndexLayout:
        """From ``--max-hash-slot-num`` (entries = 4 x slots), else the config, else defaults."""
        if hash_slot_num is not None:
            return cls(hash_slot_num, 4 * hash_slot_num)
        if config is not None:
            return cls(config.max_hash_slot_num, config.max_index_num)
        return cls()

    def for_size(self, size: int) -> IndexLayout | None:
        """This layout when it fits ``size``, else slots = (size - 40) / 84, entries = 4 x slots."""
        if index_file_size(self.hash_slot_num, self.index_num) == size:
            return self
        slots, rest = divmod(size - INDEX_HEADER_SIZE, INDEX_SLOT_SIZE + 4 * INDEX_ENTRY_SIZE)
        return IndexLayout(slots, 4 * slots) if slots > 0 and rest == 0 else None


@dataclass(slots=True)
class IndexEntry:
    index_no: int
    key_hash: int
    phy_offset: int
    time_diff_s: int
    prev_index: int
    path: str = ""
    position: int = 0


@dataclass(slots=True)
class IndexFileInfo:
    path: str
    begin_timestamp: int
    end_timestamp: int
    begin_phy_offset: int
    end_phy_offset: int
    hash_slot_count: int
    index_count: int
    layout: IndexLayout
    bad_slots: list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class StorePaths:
    commit_log: str
    consume_queue: str
    index: str


def store_paths(root: str, config: StoreConfig | None = None) -> StorePaths:
    """``storePathCommitLog`` from the config when set, else ``<root>/commitlog``."""
    commit_log = os.path.join(root, "commitlog")
    if config is not None and config.store_path_commit_log:
        commit_log = config.store_path_commit_log
    return StorePaths(commit_log, os.path.join(root, "consumequeue"), os.path.join(root, "index"))


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


def is_zero(view: memoryview, start: int = 0) -> bool:
    """True when every byte from ``start`` to the end is zero (4 MiB at a time)."""
    chunk = 4 << 20
    zeros = bytes(chunk)
    for begin in range(start, len(view), chunk):
        part = view[begin : begin + chunk]
        if part != zeros[: len(part)]:
            return False
    return True


def _file_is_zero(path: str) -> bool:
    with _mapped(path) as view:
        return is_zero(view)


def _head_is_zero(path: str) -> bool:
    with open(path, "rb") as f:
        return not f.read(8).strip(b"\0")


# ---------------------------------------------------------------------- commitlog


def iter_commitlog_records(
    root: str, *, config: StoreConfig | None = None, from_offset: int = 0
) -> Iterator[RecordInfo | DataEnd]:
    """The records of ``root``'s commitlog from ``from_offset`` (see the module docstring)."""
    return iter_commitlog(store_paths(root, config).commit_log, from_offset)


def iter_commitlog(commit_log_dir: str, from_offset: int = 0) -> Iterator[RecordInfo | DataEnd]:
    files = data_files(commit_log_dir)
    for i, path in enumerate(files):
        base = int(os.path.basename(path))
        if base + os.path.getsize(path) <= from_offset:
            continue
        with _mapped(path) as view:
            end = yield from _walk_file(view, path, base, max(0, from_offset - base))
        if end is None:
            continue
        later = files[i + 1 :]
        if any(not _head_is_zero(p) for p in later):
            reason = end.reason if not end.clean else "zero header before the blank record"
            yield DataEnd(end.path, end.offset, reason, False, final=False)
            continue
        for p in later:
            if not _file_is_zero(p):
                yield DataEnd(p, int(os.path.basename(p)), "data after the end", False, False)
        if not end.clean:  # the last written file: RocketMQ's recovery truncates here
            end = DataEnd(end.path, end.offset, f"{end.reason} (a torn tail)", True, torn=True)
        yield end
        return
    end_offset = 0
    if files:
        end_offset = int(os.path.basename(files[-1])) + os.path.getsize(files[-1])
    yield DataEnd(files[-1] if files else commit_log_dir, end_offset, "end of the last file", True)


def _walk_file(
    view: memoryview, path: str, base: int, pos: int
) -> Generator[RecordInfo, None, DataEnd | None]:
    """Records of one file; returns None at its blank record, else where valid data ends."""
    size = len(view)
    while pos + BLANK_SIZE <= size:
        total, magic = BLANK_STRUCT.unpack_from(view, pos)
        if magic == BLANK_MAGIC_CODE and BLANK_SIZE <= total <= size - pos:
            return None
        if total == 0 and magic == 0:
            if is_zero(view, pos):
                return DataEnd(path, base + pos, "unwritten space", True)
            return DataEnd(path, base + pos, "non-zero bytes after the last record", False)
        try:
            msg = decode_message(view, pos, check_crc=False, read_body=False)
        except DecodeError as exc:
            return DataEnd(path, base + pos, exc.reason, False)
        yield _record_info(view, base, pos, msg, path)
        pos += msg.store_size
    return None


def _record_info(view: memoryview, base: int, pos: int, msg: MessageExt, path: str) -> RecordInfo:
    p = pos + body_length_position(msg.sys_flag)
    (body_len,) = _INT32.unpack_from(view, p)
    body = p + BODY_LENGTH_SIZE
    crc = body_crc(view[body : body + body_len]) if body_len > 0 else 0
    props = msg.properties
    delay = props.get(mc.PROPERTY_DELAY_TIME_LEVEL, "0")
    return RecordInfo(
        offset=base + pos,
        size=msg.store_size,
        topic=sys.intern(msg.topic),
        queue_id=msg.queue_id,
        queue_offset=msg.queue_offset,
        sys_flag=msg.sys_flag,
        store_timestamp=msg.store_timestamp,
        tags=props.get(mc.PROPERTY_TAGS, ""),
        keys=props.get(mc.PROPERTY_KEYS, ""),
        uniq_key=props.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, ""),
        body_size=body_len,
        crc_ok=crc == msg.body_crc,
        delay_level=int(delay) if delay.isdigit() else 0,
        path=path,
        stored_offset=msg.commitlog_offset,
    )


class CommitLogReader:
    """Random access to records by commitlog offset; keeps at most ``max_open`` files mapped."""

    def __init__(self, commit_log_dir: str, max_open: int = 64) -> None:
        self._files = data_files(commit_log_dir)
        self._bases = [int(os.path.basename(p)) for p in self._files]
        self._open: OrderedDict[int, tuple[mmap.mmap, memoryview]] = OrderedDict()
        self._max_open = max_open

    def __enter__(self) -> CommitLogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record_at(self, phy: int) -> RecordInfo | None:
        """The record starting at ``phy``, or None when none decodes there."""
        i = bisect.bisect_right(self._bases, phy) - 1
        view = self._view(i) if i >= 0 else None
        if view is None:
            return None
        try:
            msg = decode_message(view, phy - self._bases[i], check_crc=False, read_body=False)
        except DecodeError:
            return None
        return _record_info(view, self._bases[i], phy - self._bases[i], msg, self._files[i])

    def _view(self, i: int) -> memoryview | None:
        if i in self._open:
            self._open.move_to_end(i)
            return self._open[i][1]
        if os.path.getsize(self._files[i]) == 0:
            return None
        with open(self._files[i], "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._open[i] = (mm, memoryview(mm))
        if len(self._open) > self._max_open:
            _, (old_mm, old_view) = self._open.popitem(last=False)
            old_view.release()
            old_mm.close()
        return self._open[i][1]

    def close(self) -> None:
        while self._open:
            _, (mm, view) = self._open.popitem()
            view.release()
            mm.close()


# ---------------------------------------------------------------------- consume queues


def consume_queue_ids(root: str) -> list[tuple[str, int]]:
    """(topic, queue id) of every queue directory under ``<root>/consumequeue``."""
    cq_root = store_paths(root).consume_queue
    out: list[tuple[str, int]] = []
    if not os.path.isdir(cq_root):
        return out
    for topic in sorted(os.listdir(cq_root)):
        topic_dir = os.path.join(cq_root, topic)
        if os.path.isdir(topic_dir):
            out += [(topic, int(q)) for q in sorted(os.listdir(topic_dir)) if q.isdigit()]
    return out


def iter_consume_queue(root: str, topic: str, queue_id: int) -> Iterator[CqUnit]:
    """Written units in queue-offset order (fillers included; stops at the first empty one)."""
    queue_dir = os.path.join(store_paths(root).consume_queue, topic, str(queue_id))
    for path in data_files(queue_dir):
        base = int(os.path.basename(path))
        with _mapped(path) as view:
            for pos in range(0, len(view) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
                phy, size, tags = CQ_STORE_UNIT_STRUCT.unpack_from(view, pos)
                if phy < 0 or size <= 0:
                    return
                yield CqUnit((base + pos) // CQ_STORE_UNIT_SIZE, phy, size, tags, path, pos)


# ---------------------------------------------------------------------- index files


def index_files(root: str) -> list[str]:
    index_dir = store_paths(root).index
    if not os.path.isdir(index_dir):
        return []
    return [os.path.join(index_dir, n) for n in sorted(os.listdir(index_dir)) if n.isdigit()]


def read_index_header(path: str, layout: IndexLayout) -> IndexFileInfo | None:
    """Header and slots outside 0..indexCount (first 100); None when the size fits no layout."""
    fitted = layout.for_size(os.path.getsize(path))
    if fitted is None:
        return None
    with _mapped(path) as view:
        begin_ts, end_ts, begin_phy, end_phy, slot_count, count = INDEX_HEADER_STRUCT.unpack_from(
            view, 0
        )
        slots = array.array("i")
        slots.frombytes(view[INDEX_HEADER_SIZE : index_entry_position(fitted.hash_slot_num, 0)])
    if sys.byteorder == "little":
        slots.byteswap()
    count = max(1, count)
    bad: list[tuple[int, int]] = []
    if slots and (max(slots) > count or min(slots) < 0):
        bad = [(i, v) for i, v in enumerate(slots) if v < 0 or v > count][:100]
    return IndexFileInfo(path, begin_ts, end_ts, begin_phy, end_phy, slot_count, count, fitted, bad)


def iter_index_file(info: IndexFileInfo) -> Iterator[IndexEntry]:
    """Entries 1..indexCount-1 of one index file."""
    with _mapped(info.path) as view:
        for no in range(1, min(info.index_count, info.layout.index_num)):
            pos = index_entry_position(info.layout.hash_slot_num, no)
            key_hash, phy, diff, prev = INDEX_ENTRY_STRUCT.unpack_from(view, pos)
            yield IndexEntry(no, key_hash, phy, diff, prev, info.path, pos)


def iter_index_entries(
    root: str, *, layout: IndexLayout | None = None
) -> Iterator[IndexFileInfo | IndexEntry]:
    """For each index file of ``root``: its header, then its entries (files of no layout skip)."""
    for path in index_files(root):
        info = read_index_header(path, layout or IndexLayout())
        if info is not None:
            yield info
            yield from iter_index_file(info)


# ---------------------------------------------------------------------- formatting

RECORD_HEADER = (
    f"{'offset':>14} {'topic':<24} {'queue':>5} {'qoffset':>9} {'tags':<12} "
    f"{'keys':<20} {'body':>8} crc"
)
CQ_UNIT_HEADER = f"{'qoffset':>9} {'commitlog offset':>16} {'size':>10} {'tags code':>20}"


def format_record(rec: RecordInfo) -> str:
    return (
        f"{rec.offset:>14} {rec.topic:<24} {rec.queue_id:>5} {rec.queue_offset:>9} "
        f"{rec.tags:<12} {rec.keys:<20} {rec.body_size:>8} {'ok' if rec.crc_ok else 'BAD'}"
    )


def format_data_end(end: DataEnd) -> str:
    state = "end of data" if end.clean else "INVALID"
    return f"{end.offset:>14} {state}: {end.reason} ({end.path})"


def format_cq_unit(unit: CqUnit) -> str:
    size = "filler" if unit.is_filler else str(unit.size)
    return f"{unit.queue_offset:>9} {unit.commit_log_offset:>16} {size:>10} {unit.tags_code:>20}"


def format_index_file(info: IndexFileInfo) -> str:
    return (
        f"{info.path}: {info.index_count - 1} entries, {info.hash_slot_count} slots used, "
        f"{info.layout.hash_slot_num} slots, time {info.begin_timestamp} .. "
        f"{info.end_timestamp}, offsets {info.begin_phy_offset} .. {info.end_phy_offset}"
    )


def format_index_entry(entry: IndexEntry) -> str:
    return (
        f"  #{entry.index_no:<8} hash {entry.key_hash:>11} offset {entry.phy_offset:>14} "
        f"+{entry.time_diff_s}s prev {entry.prev_index}"
    )
