"""Byte-range splits of commitlog segments, and the walk over one split (no pyspark here).

Theory of operation. A store's commitlog is a list of segments named by their first byte's
offset. RocketMQ never lets a record straddle two segments (the tail of a segment is a BLANK
record), so a whole segment is always a safe unit of work; finer splits cut a segment into
byte ranges ``[start, end)``. A split owns the records that *start* inside its range and
finishes its last record past ``end``. A split that does not begin at byte 0 of its segment
resynchronises: it searches for a magic code (v1, v2 or BLANK), steps back 4 bytes to the
candidate's TOTALSIZE and accepts the candidate only when the record's own PHYSICALOFFSET
equals ``segment base + position`` and the size fits the file (a BLANK record must fill the
rest of the file exactly). Magic bytes inside a body therefore cannot start a record unless
the 8 bytes 24 positions later also spell that exact offset.

Where the data ends is snapshotted on the driver (``plan_splits``): every segment up to the
last one whose header is non-zero is read; in that last segment the end is where RocketMQ's
recovery would stop (the first record that fails ``check_message_and_return_size``), or the
``end_offset`` cut-off when it is lower. Splits stop there, so a rerun on a live store reads
the same records. Before that end, a record that does not decode (or whose body CRC is wrong
when ``verify_crc``) is corruption: the walk raises ``CorruptionError`` with the path and
offset, or with ``skip_corrupt`` steps over it (resynchronising when the header itself is bad).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import body_crc, decode_message
from rocketq.common.record_layout import (
    BLANK_MAGIC_CODE,
    BLANK_STRUCT,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
    PHYSICAL_OFFSET_POSITION,
)
from rocketq.errors import ConfigError, CorruptionError, DecodeError
from rocketq.store.commitlog import DispatchRequest, check_message_and_return_size
from rocketq.store.dump import data_files, store_paths
from rocketq.store.recovery import scan_segment

RECORD_HEAD_STRUCT = BLANK_STRUCT  # TOTALSIZE i4 | MAGICCODE u4: how every record starts
RECORD_HEAD_SIZE = RECORD_HEAD_STRUCT.size
assert RECORD_HEAD_SIZE == 8
PHYSICAL_OFFSET_STRUCT = struct.Struct(">q")  # PHYSICALOFFSET at byte 28
MAGIC_PATTERNS = tuple(
    m.to_bytes(4, "big") for m in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BLANK_MAGIC_CODE)
)
DEFAULT_SPLIT_BYTES = 64 << 20
RESYNC_WINDOW = 64 << 10

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoreInput:
    """One store directory and the broker name its rows carry."""

    root: str
    broker: str

    @property
    def commit_log_dir(self) -> str:
        return store_paths(self.root).commit_log


@dataclass(frozen=True, slots=True)
class CommitLogSplit:
    """Records starting in ``[start, end)`` of one segment, none at or past ``data_end``.

    ``start``, ``end`` and ``data_end`` are positions inside the segment file; ``base`` is the
    segment's commitlog offset (its file name).
    """

    broker: str
    path: str
    base: int
    start: int
    end: int
    data_end: int

    @property
    def size_bytes(self) -> int:
        return max(0, min(self.end, self.data_end) - self.start)


# ---------------------------------------------------------------------- planning


def plan_splits(
    stores: list[StoreInput], split_bytes: int = DEFAULT_SPLIT_BYTES, end_offset: int = -1
) -> list[CommitLogSplit]:
    """Splits of every store, in (store, offset) order; ``end_offset`` < 0 means no cut-off."""
    if split_bytes <= 0:
        raise ConfigError(f"split bytes must be > 0, got {split_bytes}")
    out: list[CommitLogSplit] = []
    for store in stores:
        out += _plan_store(store, split_bytes, end_offset)
    return out


def _plan_store(store: StoreInput, split_bytes: int, end_offset: int) -> list[CommitLogSplit]:
    files = data_files(store.commit_log_dir)
    written = [p for p in files if not _head_is_zero(p)]
    if not written:
        return []
    last = written[-1]
    out: list[CommitLogSplit] = []
    for path in files[: files.index(last) + 1]:
        base = int(os.path.basename(path))
        size = os.path.getsize(path)
        data_end = recovered_end(path, base) if path == last else size
        if end_offset >= 0:
            data_end = min(data_end, end_offset - base)
        out.extend(
            CommitLogSplit(store.broker, path, base, start, start + split_bytes, data_end)
            for start in range(0, max(0, data_end), split_bytes)
        )
    return out


def _head_is_zero(path: str) -> bool:
    with open(path, "rb") as f:
        return not f.read(RECORD_HEAD_SIZE).strip(b"\0")


def recovered_end(path: str, base: int) -> int:
    """Where recovery stops in this segment: the first record that fails the store's check
    (the store's own scan: one C call over the segment, or its pure-Python walk)."""
    with MappedSegment(path) as (_mm, view):
        pos, blank = scan_segment(view, 0, len(view), base, False, {})
        return len(view) if blank else pos


# ---------------------------------------------------------------------- resynchronisation


def is_record_start(view: memoryview, base: int, pos: int) -> bool:
    """Whether a record (or the BLANK tail) of the segment at ``base`` starts at ``pos``."""
    size = len(view)
    if size - pos < RECORD_HEAD_SIZE:
        return False
    total, magic = RECORD_HEAD_STRUCT.unpack_from(view, pos)
    if magic == BLANK_MAGIC_CODE:
        return bool(total == size - pos)
    if total < MIN_RECORD_SIZE or total > size - pos:
        return False
    (phy,) = PHYSICAL_OFFSET_STRUCT.unpack_from(view, pos + PHYSICAL_OFFSET_POSITION)
    return bool(phy == base + pos)


def find_record_start(mm: mmap.mmap, view: memoryview, base: int, start: int, limit: int) -> int:
    """The first record start in ``[start, limit)``, else ``limit``.

    Magic codes are searched a window at a time: a pattern that does not occur (the BLANK
    code, mostly) would otherwise be searched for to the end of the split."""
    upto = min(len(view), limit + RECORD_HEAD_SIZE)
    lo = start + 4
    while lo < upto:
        hi = min(lo + RESYNC_WINDOW, upto)
        end = min(hi + 3, upto)  # occurrences that begin in [lo, hi)
        for idx in sorted(i for m in MAGIC_PATTERNS for i in _occurrences(mm, m, lo, end)):
            pos = idx - 4
            if pos >= limit:
                return limit
            if is_record_start(view, base, pos):
                return pos
        lo = hi
    return limit


def _occurrences(mm: mmap.mmap, pattern: bytes, lo: int, hi: int) -> Iterator[int]:
    i = mm.find(pattern, lo, hi)
    while i >= 0:
        yield i
        i = mm.find(pattern, i + 1, hi)


# ---------------------------------------------------------------------- the walk

#: decodes the record at a position: (item, total size), or raises DecodeError
Decoder = Callable[[memoryview, int, int], tuple[T, int]]


def first_record(split: CommitLogSplit, mm: mmap.mmap, view: memoryview) -> int:
    """Where the walk of ``split`` begins: its start, resynchronised unless at byte 0."""
    if split.start == 0:
        return 0
    limit = min(split.end, split.data_end, len(view))
    return find_record_start(mm, view, split.base, split.start, limit)


def iter_split(
    split: CommitLogSplit,
    decode: Decoder[T],
    *,
    skip_corrupt: bool = False,
    resume: tuple[int, bool] | None = None,
) -> Iterator[T]:
    """The items ``decode`` makes of the records of ``split`` (see the module docstring).

    ``resume`` = (position, whether a record was already read) continues a walk another
    reader began (the columnar reader hands a record it does not take over to this one)."""
    with MappedSegment(split.path) as (mm, view):
        limit = min(split.end, split.data_end, len(view))
        if resume is None:
            pos = first_record(split, mm, view)
            walked = False
        else:
            pos, walked = resume
        while pos < limit and len(view) - pos >= RECORD_HEAD_SIZE:
            total, magic = RECORD_HEAD_STRUCT.unpack_from(view, pos)
            if magic == BLANK_MAGIC_CODE and total == len(view) - pos:
                return  # the segment's tail
            try:
                item, total = decode(view, pos, split.base)
            except DecodeError as exc:
                if not skip_corrupt:
                    raise CorruptionError(split.path, split.base + pos, exc.reason) from exc
                if 0 < total <= len(view) - pos and is_record_start(view, split.base, pos):
                    pos += total  # a sound header around a bad body: step over the record
                else:
                    pos = find_record_start(mm, view, split.base, pos + 1, limit)
                continue
            yield item
            pos += total
            walked = True
        if walked:
            _check_chain(split, view, pos, skip_corrupt)


def _check_chain(split: CommitLogSplit, view: memoryview, pos: int, skip_corrupt: bool) -> None:
    """The next split resynchronises past a bad header, so the split whose last record ends
    at ``pos`` checks that another record (or the BLANK tail) starts there."""
    if skip_corrupt or pos >= min(split.data_end, len(view)):
        return
    if not is_record_start(view, split.base, pos):
        reason = "no record starts where the previous record ends"
        raise CorruptionError(split.path, split.base + pos, reason)


def message_decoder(verify_crc: bool) -> Decoder[MessageExt]:
    """Whole messages (body included) through the store's one record decoder."""

    def decode(view: memoryview, pos: int, base: int) -> tuple[MessageExt, int]:
        msg = decode_message(view, pos, check_crc=False, read_body=True)
        if msg.commitlog_offset != base + pos:
            raise DecodeError(f"PHYSICALOFFSET {msg.commitlog_offset} is not {base + pos}", pos)
        if verify_crc and body_crc(msg.body) != msg.body_crc:
            raise DecodeError(f"body CRC mismatch (stored {msg.body_crc})", pos)
        return msg, msg.store_size

    return decode


def dispatch_decoder(verify_crc: bool, delay_table: dict[int, int]) -> Decoder[DispatchRequest]:
    """The reput thread's DispatchRequests (``check_message_and_return_size``)."""

    def decode(view: memoryview, pos: int, base: int) -> tuple[DispatchRequest, int]:
        req = check_message_and_return_size(
            view, pos, len(view), base, check_crc=verify_crc, delay_table=delay_table
        )
        if req is None or req.msg_size == 0:
            raise DecodeError("record fails the store's dispatch check", pos)
        return req, req.msg_size

    return decode


def walk_heads(split: CommitLogSplit, mm: mmap.mmap, view: memoryview) -> tuple[list[int], int]:
    """The record starts of ``split`` as far as their heads look sound (magic code, size
    inside the file), and where that walk stopped: the split's end, the segment's BLANK tail,
    or the first record whose head ``iter_split`` would not take as it is. Nothing past the
    heads is checked; the columnar reader checks the rest and hands over at the stop."""
    size = len(view)
    limit = min(split.end, split.data_end, size)
    pos = first_record(split, mm, view)
    starts: list[int] = []
    unpack = RECORD_HEAD_STRUCT.unpack_from
    while pos < limit and size - pos >= RECORD_HEAD_SIZE:
        total, magic = unpack(view, pos)
        if magic == BLANK_MAGIC_CODE and total == size - pos:
            return starts, size  # the segment's tail: the split is done
        if (magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2) or not (
            MIN_RECORD_SIZE <= total <= size - pos
        ):
            return starts, pos
        starts.append(pos)
        pos += total
    return starts, pos


class MappedSegment:
    """A read-only map of a whole file and a view on it; both released on exit."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._mm: mmap.mmap | None = None
        self._view = memoryview(b"")

    def __enter__(self) -> tuple[mmap.mmap, memoryview]:
        with open(self.path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise CorruptionError(self.path, 0, "empty commitlog segment")
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._view = memoryview(self._mm)
        return self._mm, self._view

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self._view.release()
        if self._mm is None:
            return
        try:
            self._mm.close()
        except BufferError:
            if exc is None:
                raise
            # a slice of the map is still held by a frame of the error on its way out (a
            # DecodeError's cause): free those frames; else the map closes when collected
            _clear_frames(exc)
            with contextlib.suppress(BufferError):
                self._mm.close()


def _clear_frames(exc: BaseException) -> None:
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        err = stack.pop()
        if err is None or id(err) in seen:
            continue
        seen.add(id(err))
        traceback.clear_frames(err.__traceback__)
        stack += [err.__cause__, err.__context__]
