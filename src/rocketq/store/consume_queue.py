"""ConsumeQueue: the per-(topic, queue) index of commitlog positions (ConsumeQueue.java).

Unit (``format.CQ_STORE_UNIT_STRUCT``), 20 bytes::

    0 COMMITLOG_OFFSET i8 | 8 SIZE i4 | 12 TAGS_CODE i8

Theory of operation: queue offset n lives at logical byte n*20 of a MappedFileQueue under
``consumequeue/<topic>/<queueId>/`` (300,000 units a file by default). Only a dispatch run
appends (``put_message_position_info_wrapper``; the reput thread's or one on the broker's
loop, never two at once: ``ReputMessageService``'s dispatch lock); readers use ``get_unit`` on the
copy-on-write file list without locks. A put is idempotent: a record whose end is at or
below ``max_physic_offset``, or whose slot is already written, is skipped, which makes
re-dispatch after a crash safe. A queue rebuilt from a commitlog whose head has expired
starts with filler units up to its first real offset; ``min_logic_offset`` skips them.
Truncation (recovery) zeroes the units it drops, so they cannot reappear at the next load.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from rocketq.common import native_record
from rocketq.store.format import (
    CQ_BLANK_UNIT,
    CQ_FILLER_SIZE,
    CQ_STORE_UNIT_SIZE,
    CQ_STORE_UNIT_STRUCT,
)
from rocketq.store.mapped_file import MappedFile, last_nonzero
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.sync_batch import SyncBatch

if TYPE_CHECKING:
    from rocketq.store.commitlog import DispatchRequest

log = logging.getLogger(__name__)

#: past this many zero bytes of a consume queue file nothing was written (52 units in a page)
ZERO_RUN = 1 << 20

RECOVER_FILES = 3

#: how far past a filler unit ``_unit_below`` looks for a real one (beyond: "not known below")
FILLER_LOOK = 64


class ConsumeQueue:
    def __init__(self, topic: str, queue_id: int, root_dir: str, mapped_file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.store_path = os.path.join(root_dir, topic, str(queue_id))
        self.mapped_file_size = mapped_file_size
        self.mapped_file_queue = MappedFileQueue(self.store_path, mapped_file_size)
        self.max_physic_offset = -1
        self.min_logic_offset = 0

    # ------------------------------------------------------------------ load / recover

    def load(self) -> bool:
        return self.mapped_file_queue.load()

    def recover(self, below: int | None = None) -> None:
        """Scan from the third-last file to the first invalid unit; drop what follows.

        ``below`` is a trusted dispatch checkpoint's offset (``dispatch_checkpoint.py``): the
        units of every record under it are written and flushed, and precede all others (units
        go in commitlog order), so each file's check starts at the first unit past it instead
        of the file's start (RocketMQ's ConsumeQueue#recover checks every unit)."""
        files = self.mapped_file_queue.mapped_files
        if not files:
            return
        start = max(0, len(files) - RECOVER_FILES)
        end = files[start].file_from_offset
        for mf in files[start:]:
            first = 0 if below is None else self._first_unit_past(mf, below)
            if first > 0:
                last_end = _last_unit_end(mf, first)
                if last_end >= 0:
                    self.max_physic_offset = last_end
            pos = self._scan_valid(mf, first)
            end = mf.file_from_offset + pos
            if pos < self.mapped_file_size:
                break
        self.mapped_file_queue.flushed_where = end
        self._truncate_at(end)
        self._set_min_from_first_file(0)

    def _scan_valid(self, mf: MappedFile, pos: int = 0) -> int:
        view = mf.view
        while pos < self.mapped_file_size:
            offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(view, pos)
            if offset < 0 or size <= 0:
                break
            if size != CQ_FILLER_SIZE:
                self.max_physic_offset = offset + size
            pos += CQ_STORE_UNIT_SIZE
        return pos

    def _first_unit_past(self, mf: MappedFile, below: int) -> int:
        """Byte position in ``mf`` of a unit at or before the first one written for a record
        at or past ``below``: a binary search where a unit is known to be in the checkpointed
        prefix only when it is a real unit of a record that ends at or below ``below`` (a
        filler run defers to the real unit after it). Every other answer moves the search
        back, so the result never passes the prefix's end: scanning on from it is exact."""
        units = self.mapped_file_size // CQ_STORE_UNIT_SIZE
        lo, hi = 0, units
        while lo < hi:
            mid = (lo + hi) // 2
            if _unit_below(mf.view, mid, units, below):
                lo = mid + 1
            else:
                hi = mid
        return lo * CQ_STORE_UNIT_SIZE

    def truncate_dirty_logic_files(self, phy_offset: int) -> None:
        """Drop units that point at or past ``phy_offset`` (the commitlog's valid end). Units
        are in commitlog order, so the walk goes back from the end over the dirty ones only."""
        mfq = self.mapped_file_queue
        self.max_physic_offset = -1
        keep_end = None
        for mf in reversed(mfq.mapped_files):
            pos = mf.wrote_position - mf.wrote_position % CQ_STORE_UNIT_SIZE
            while pos > 0:
                offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(
                    mf.view, pos - CQ_STORE_UNIT_SIZE
                )
                if offset >= 0 and size > 0 and (size == CQ_FILLER_SIZE or offset < phy_offset):
                    break
                pos -= CQ_STORE_UNIT_SIZE
            if pos > 0:
                keep_end = mf.file_from_offset + pos
                self.max_physic_offset = _last_unit_end(mf, pos)
                break
        if keep_end is None:
            first = mfq.get_first_mapped_file()
            keep_end = first.file_from_offset if first is not None else 0
        if mfq.mapped_files:
            self._truncate_at(keep_end)
        if self.max_physic_offset < 0:
            self._recompute_max_physic_offset()

    def _truncate_at(self, logic_end: int) -> None:
        """Zero the units past ``logic_end`` and drop the files after it."""
        mfq = self.mapped_file_queue
        for mf in mfq.mapped_files:
            if mf.file_from_offset <= logic_end < mf.file_from_offset + self.mapped_file_size:
                pos = logic_end - mf.file_from_offset
                stale = _last_written(mf, pos)
                if stale > pos:
                    log.warning(
                        "consume queue %s-%d: dropping %d units after logical offset %d",
                        self.topic,
                        self.queue_id,
                        (stale - pos) // CQ_STORE_UNIT_SIZE,
                        logic_end // CQ_STORE_UNIT_SIZE,
                    )
                    mf.view[pos:stale] = bytes(stale - pos)
                    mf.mm.flush()
        mfq.truncate_dirty_files(logic_end)

    def _recompute_max_physic_offset(self) -> None:
        last = self.mapped_file_queue.get_last_mapped_file()
        if last is None or last.wrote_position < CQ_STORE_UNIT_SIZE:
            return
        pos = last.wrote_position - CQ_STORE_UNIT_SIZE
        offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(last.view, pos)
        if size > 0 and size != CQ_FILLER_SIZE:
            self.max_physic_offset = offset + size

    # ------------------------------------------------------------------ append

    def put_message_position_info_wrapper(self, req: DispatchRequest) -> bool:
        """Append the unit for ``req`` (ConsumeQueue.putMessagePositionInfo)."""
        offset, size = req.commit_log_offset, req.msg_size
        if offset + size <= self.max_physic_offset:
            return True
        expect = req.consume_queue_offset * CQ_STORE_UNIT_SIZE
        mfq = self.mapped_file_queue
        if not mfq.mapped_files:
            mf = mfq.get_last_mapped_file_or_create(expect)
            mfq.flushed_where = mf.file_from_offset
            self.min_logic_offset = mf.file_from_offset
        current = mfq.get_max_offset()
        if expect < current:
            log.warning(
                "consume queue %s-%d: unit %d already written (max %d), skipped",
                self.topic,
                self.queue_id,
                req.consume_queue_offset,
                current // CQ_STORE_UNIT_SIZE,
            )
            return True
        if expect > current:
            self._fill_blanks(current, expect)
        self._append(CQ_STORE_UNIT_STRUCT.pack(offset, size, req.tags_code))
        self.max_physic_offset = offset + size
        return True

    def put_message_position_infos(self, reqs: list[DispatchRequest]) -> None:
        """Append the units of a run of this queue's requests (in commitlog order): a stretch
        that continues the queue exactly goes into the current file with one copy (one C call,
        ``cq_units``, where the record module is built; the Python join is its reference); any
        other request takes :meth:`put_message_position_info_wrapper` (skips, gaps, a new
        file)."""
        pack = CQ_STORE_UNIT_STRUCT.pack
        compiled = native_record.RECORD
        i, n = 0, len(reqs)
        while i < n:
            req = reqs[i]
            last = self.mapped_file_queue.get_last_mapped_file()
            if (
                last is None
                or last.is_full()
                or req.commit_log_offset + req.msg_size <= self.max_physic_offset
                or req.consume_queue_offset * CQ_STORE_UNIT_SIZE
                != last.file_from_offset + last.wrote_position
            ):
                self.put_message_position_info_wrapper(req)
                i += 1
                continue
            if compiled is not None:  # the stretch's units written by C (dispatch.c)
                pos = last.wrote_position
                j, self.max_physic_offset = compiled.cq_units(
                    last.view, pos, last.file_size, reqs, i
                )
                last.wrote_position = pos + (j - i) * CQ_STORE_UNIT_SIZE
                i = j
                continue
            stop = min(n, i + (last.file_size - last.wrote_position) // CQ_STORE_UNIT_SIZE)
            j = i + 1
            while j < stop and reqs[j].consume_queue_offset == reqs[j - 1].consume_queue_offset + 1:
                j += 1
            last.append_message(
                b"".join([pack(r.commit_log_offset, r.msg_size, r.tags_code) for r in reqs[i:j]])
            )
            tail = reqs[j - 1]
            self.max_physic_offset = tail.commit_log_offset + tail.msg_size
            i = j

    def _fill_blanks(self, current: int, expect: int) -> None:
        """Filler units from ``current`` to ``expect`` (ConsumeQueue#fillPreBlank)."""
        empty = self.max_physic_offset < 0 and current <= self.min_logic_offset
        if not empty:
            log.error(
                "consume queue %s-%d: gap from unit %d to %d filled with blanks",
                self.topic,
                self.queue_id,
                current // CQ_STORE_UNIT_SIZE,
                expect // CQ_STORE_UNIT_SIZE,
            )
        while current < expect:
            mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
            units = min(expect - current, mf.remaining()) // CQ_STORE_UNIT_SIZE
            mf.append_message(CQ_BLANK_UNIT * units)
            current += units * CQ_STORE_UNIT_SIZE
        if empty:
            self.min_logic_offset = expect

    def _append(self, unit: bytes) -> None:
        mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
        mf.append_message(unit)

    # ------------------------------------------------------------------ reads

    def get_unit(self, index: int) -> tuple[int, int, int] | None:
        """(commitlog offset, size, tags code) of queue offset ``index``, or None."""
        pos = index * CQ_STORE_UNIT_SIZE
        if pos < self.min_logic_offset:
            return None
        mf = self.mapped_file_queue.find_mapped_file_by_offset(pos)
        if mf is None:
            return None
        rel = pos - mf.file_from_offset
        if rel + CQ_STORE_UNIT_SIZE > mf.wrote_position:
            return None
        try:
            unit: tuple[int, int, int] = CQ_STORE_UNIT_STRUCT.unpack_from(mf.view, rel)
        except ValueError:  # the file was deleted by the clean service meanwhile
            return None
        return unit

    def get_min_offset_in_queue(self) -> int:
        return self.min_logic_offset // CQ_STORE_UNIT_SIZE

    def get_max_offset_in_queue(self) -> int:
        return self.mapped_file_queue.get_max_offset() // CQ_STORE_UNIT_SIZE

    def get_max_physic_offset(self) -> int:
        return self.max_physic_offset

    # ------------------------------------------------------------------ clean-up

    def delete_expired_file(self, min_phy_offset: int) -> int:
        deleted = self.mapped_file_queue.delete_expired_file_by_offset(
            min_phy_offset, CQ_STORE_UNIT_SIZE
        )
        self.correct_min_offset(min_phy_offset)
        return deleted

    def correct_min_offset(self, min_phy_offset: int) -> None:
        """Move the min offset to the first unit whose record still exists."""
        self._set_min_from_first_file(min_phy_offset)

    def _set_min_from_first_file(self, min_phy_offset: int) -> None:
        first = self.mapped_file_queue.get_first_mapped_file()
        if first is None:
            return
        pos = max(0, self.min_logic_offset - first.file_from_offset)
        pos -= pos % CQ_STORE_UNIT_SIZE
        view = first.view
        while pos + CQ_STORE_UNIT_SIZE <= first.wrote_position:
            offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(view, pos)
            if size <= 0:
                break
            if size != CQ_FILLER_SIZE and offset >= min_phy_offset:
                self.min_logic_offset = first.file_from_offset + pos
                return
            pos += CQ_STORE_UNIT_SIZE
        self.min_logic_offset = first.file_from_offset + pos

    # ------------------------------------------------------------------ lifecycle

    def flush(self, least_pages: int = 0) -> bool:
        return self.mapped_file_queue.flush(least_pages)

    def flush_into(self, batch: SyncBatch, least_pages: int = 0) -> None:
        self.mapped_file_queue.flush_into(batch, least_pages)

    def shutdown(self) -> None:
        self.mapped_file_queue.shutdown()

    def destroy(self) -> None:
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        self.mapped_file_queue.destroy()


def _last_unit_end(mf: MappedFile, pos: int) -> int:
    """The commitlog end of the last non-filler unit before ``pos`` in ``mf`` (-1 if none)."""
    while pos > 0:
        pos -= CQ_STORE_UNIT_SIZE
        offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(mf.view, pos)
        if size != CQ_FILLER_SIZE:
            return int(offset + size)
    return -1


def _unit_below(view: memoryview, index: int, units: int, below: int) -> bool:
    """Whether unit ``index`` is known to precede every unit of a record at or past ``below``:
    the first real unit from ``index`` on (within ``FILLER_LOOK``) ends at or below it."""
    for i in range(index, min(units, index + FILLER_LOOK)):
        offset, size, _tags = CQ_STORE_UNIT_STRUCT.unpack_from(view, i * CQ_STORE_UNIT_SIZE)
        if size != CQ_FILLER_SIZE:
            return bool(offset >= 0 and size > 0 and offset + size <= below)
    return False


def _last_written(mf: MappedFile, start: int) -> int:
    """One past the last non-zero unit at or after ``start``: units are appended in order, so
    the look stops after a run of zeros (``ZERO_RUN``); reading the whole preallocated file
    of every queue cost a restart seconds."""
    tail = last_nonzero(mf.view, start, mf.file_size, ZERO_RUN)
    if tail <= start:
        return start
    return min(mf.file_size, tail + (-(tail - start) % CQ_STORE_UNIT_SIZE))
