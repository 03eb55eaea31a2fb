"""IndexFile: a hash index from ``topic#key`` to commitlog offsets (IndexFile.java).

Layout (``format.INDEX_*``)::

    0 header 40 B: beginTimestamp i8 | endTimestamp i8 | beginPhyOffset i8 | endPhyOffset i8
                   hashSlotCount i4 | indexCount i4 (entries + 1)
    40 slots: slot_num x i4, the newest index number whose key hashes there (0 = empty)
    40 + 4*slot_num entries: index_num x 20 B (entry 0 unused)
       keyHash i4 | phyOffset i8 | timeDiff i4 (s since beginTimestamp) | prevIndex i4

Theory of operation: an insert writes the entry at index number ``indexCount`` chaining to
the slot's previous value, points the slot at it and updates the header in the mapping at
once. A query walks a slot's chain newest first and stops at the time range's start. One
writer (the reput thread) and many readers; the writer publishes an entry before the slot
that points at it, so a reader never follows a slot to an unwritten entry.
"""

from __future__ import annotations

import logging

from rocketq.common.hashing import index_key_hash
from rocketq.store.format import (
    INDEX_ENTRY_STRUCT,
    INDEX_HEADER_STRUCT,
    INDEX_SLOT_STRUCT,
    index_entry_position,
    index_file_size,
    index_slot_position,
)
from rocketq.store.mapped_file import MappedFile

log = logging.getLogger(__name__)

INVALID_INDEX = 0
INT32_MAX = (1 << 31) - 1


class IndexFile:
    def __init__(
        self,
        file_name: str,
        hash_slot_num: int,
        index_num: int,
        end_phy_offset: int = 0,
        end_timestamp: int = 0,
    ) -> None:
        self.file_name = file_name
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.file_size = index_file_size(hash_slot_num, index_num)
        self.mapped_file = MappedFile(file_name, self.file_size)
        self.mapped_file.set_positions(self.file_size)
        self.begin_timestamp = 0
        self.end_timestamp = 0
        self.begin_phy_offset = 0
        self.end_phy_offset = 0
        self.hash_slot_count = 0
        self.index_count = 1
        if end_phy_offset > 0:
            self.begin_phy_offset = self.end_phy_offset = end_phy_offset
        if end_timestamp > 0:
            self.begin_timestamp = self.end_timestamp = end_timestamp

    def load(self) -> None:
        (
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            index_count,
        ) = INDEX_HEADER_STRUCT.unpack_from(self.mapped_file.view, 0)
        self.index_count = max(1, index_count)

    def _write_header(self) -> None:
        INDEX_HEADER_STRUCT.pack_into(
            self.mapped_file.view,
            0,
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            self.index_count,
        )

    def is_write_full(self) -> bool:
        return self.index_count >= self.index_num

    def put_key(self, key: str, phy_offset: int, store_timestamp: int) -> bool:
        """Insert ``key``; False when the file is full."""
        if self.is_write_full():
            return False
        view = self.mapped_file.view
        key_hash = index_key_hash(key)
        slot_pos = index_slot_position(key_hash % self.hash_slot_num)
        (slot_value,) = INDEX_SLOT_STRUCT.unpack_from(view, slot_pos)
        if slot_value <= INVALID_INDEX or slot_value > self.index_count:
            slot_value = INVALID_INDEX
        time_diff = 0
        if self.begin_timestamp > 0:
            time_diff = min(INT32_MAX, max(0, int((store_timestamp - self.begin_timestamp) / 1000)))
        entry_pos = index_entry_position(self.hash_slot_num, self.index_count)
        INDEX_ENTRY_STRUCT.pack_into(view, entry_pos, key_hash, phy_offset, time_diff, slot_value)
        INDEX_SLOT_STRUCT.pack_into(view, slot_pos, self.index_count)
        if self.index_count <= 1:
            self.begin_phy_offset = phy_offset
            self.begin_timestamp = store_timestamp
        if slot_value == INVALID_INDEX:
            self.hash_slot_count += 1
        self.index_count += 1
        self.end_phy_offset = phy_offset
        self.end_timestamp = store_timestamp
        self._write_header()
        return True

    def is_time_matched(self, begin: int, end: int) -> bool:
        b, e = self.begin_timestamp, self.end_timestamp
        return (begin < b and end > e) or (b <= begin <= e) or (b <= end <= e)

    def select_phy_offset(
        self, out: list[int], key: str, max_num: int, begin: int, end: int
    ) -> None:
        """Append the offsets of ``key`` stored in [begin, end] to ``out``, newest first."""
        view = self.mapped_file.view
        index_count = self.index_count
        key_hash = index_key_hash(key)
        (slot_value,) = INDEX_SLOT_STRUCT.unpack_from(
            view, index_slot_position(key_hash % self.hash_slot_num)
        )
        if slot_value <= INVALID_INDEX or slot_value > index_count or index_count <= 1:
            return
        nxt = slot_value
        while len(out) < max_num:
            pos = index_entry_position(self.hash_slot_num, nxt)
            hash_read, phy, time_diff, prev = INDEX_ENTRY_STRUCT.unpack_from(view, pos)
            if time_diff < 0:
                break
            t = self.begin_timestamp + 1000 * time_diff
            if hash_read == key_hash and begin <= t <= end:
                out.append(phy)
            if prev <= INVALID_INDEX or prev > index_count or prev == nxt or t < begin:
                break
            nxt = prev

    def flush(self) -> None:
        if not self.mapped_file.closed:
            self._write_header()
            self.mapped_file.sync()

    def sync(self) -> None:
        """Sync the mapping without rewriting the header (another thread may be writing)."""
        self.mapped_file.sync()

    def shutdown(self) -> None:
        self.flush()
        self.mapped_file.close()

    def destroy(self) -> None:
        self.mapped_file.destroy()

    def __repr__(self) -> str:
        return f"IndexFile({self.file_name}, count={self.index_count - 1})"
