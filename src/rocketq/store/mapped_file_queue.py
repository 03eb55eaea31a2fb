"""MappedFileQueue: a logical byte stream stored as contiguous full-size MappedFiles.

File names are the 20-digit offset of their first byte (UtilAll#offset2FileName). The file list is
copy-on-write (a tuple replaced under a lock) so readers never lock: the writer appends
files, the clean service removes old ones, and a reader works on the snapshot it took.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import struct
import threading
from collections.abc import Callable

from rocketq.errors import CorruptionError
from rocketq.store.format import FILE_NAME_DIGITS, offset_to_file_name
from rocketq.store.mapped_file import MappedFile, remove_cut_creations
from rocketq.store.paths import fsync_dir
from rocketq.store.sync_batch import SyncBatch

log = logging.getLogger(__name__)

_INT64 = struct.Struct(">q")


class MappedFileQueue:
    def __init__(
        self,
        store_path: str,
        mapped_file_size: int,
        *,
        free_space_check: Callable[[str, int], None] | None = None,
    ) -> None:
        self.store_path = store_path
        self.mapped_file_size = mapped_file_size
        self.mapped_files: tuple[MappedFile, ...] = ()
        self.flushed_where = 0
        self.store_timestamp = 0
        self._lock = threading.Lock()
        self._free_space_check = free_space_check
        #: called with each file :meth:`_create` made (store/warm.py warms its head at once)
        self.on_create: Callable[[MappedFile], None] | None = None

    # ------------------------------------------------------------------ load

    def load(self) -> bool:
        """Map every file; fail on a file of the wrong size (an empty last file is deleted)."""
        if not os.path.isdir(self.store_path):
            return True
        for path in remove_cut_creations(self.store_path):
            log.warning("removed %s: a crash cut its creation short", path)
        names = []
        for name in os.listdir(self.store_path):
            if len(name) == FILE_NAME_DIGITS and name.isdigit():
                names.append(name)
            else:
                log.warning("ignoring stray file %s in %s", name, self.store_path)
        names.sort()
        files: list[MappedFile] = []
        for i, name in enumerate(names):
            path = os.path.join(self.store_path, name)
            size = os.path.getsize(path)
            if size == 0 and i == len(names) - 1:
                log.warning("deleting empty last file %s", path)
                os.unlink(path)
                continue
            if size != self.mapped_file_size:
                for f in files:
                    f.close()
                raise CorruptionError(
                    path, 0, f"file length {size}, expected {self.mapped_file_size}"
                )
            mf = MappedFile(path, self.mapped_file_size)
            mf.set_positions(self.mapped_file_size)
            files.append(mf)
        self.mapped_files = tuple(files)
        return True

    # ------------------------------------------------------------------ files

    def get_first_mapped_file(self) -> MappedFile | None:
        files = self.mapped_files
        return files[0] if files else None

    def get_last_mapped_file(self) -> MappedFile | None:
        files = self.mapped_files
        return files[-1] if files else None

    def get_last_mapped_file_or_create(self, start_offset: int = 0) -> MappedFile:
        """The last file if it has room, else a new one (raises MappedFileCreateError)."""
        last = self.get_last_mapped_file()
        if last is not None and not last.is_full():
            return last
        if last is None:
            create_offset = start_offset - start_offset % self.mapped_file_size
        else:
            create_offset = last.file_from_offset + self.mapped_file_size
        return self._create(create_offset)

    def _create(self, offset: int) -> MappedFile:
        os.makedirs(self.store_path, exist_ok=True)
        if self._free_space_check is not None:
            self._free_space_check(self.store_path, self.mapped_file_size)
        path = os.path.join(self.store_path, offset_to_file_name(offset))
        mf = MappedFile(path, self.mapped_file_size)
        fsync_dir(self.store_path)
        with self._lock:
            mf.first_create_in_queue = not self.mapped_files
            self.mapped_files = (*self.mapped_files, mf)
        if self.on_create is not None:
            self.on_create(mf)
        return mf

    def find_mapped_file_by_offset(
        self, offset: int, return_first_on_not_found: bool = False
    ) -> MappedFile | None:
        files = self.mapped_files
        if not files:
            return None
        first = files[0]
        index = (offset - first.file_from_offset) // self.mapped_file_size
        if 0 <= index < len(files) and offset >= first.file_from_offset:
            mf = files[index]
            if mf.file_from_offset <= offset < mf.file_from_offset + self.mapped_file_size:
                return mf
        return first if return_first_on_not_found else None

    # ------------------------------------------------------------------ offsets

    def get_min_offset(self) -> int:
        first = self.get_first_mapped_file()
        return first.file_from_offset if first is not None else -1

    def get_max_offset(self) -> int:
        last = self.get_last_mapped_file()
        return last.file_from_offset + last.wrote_position if last is not None else 0

    def get_max_wrote_position(self) -> int:
        return self.get_max_offset()

    def remain_how_many_data_to_flush(self) -> int:
        return self.get_max_offset() - self.flushed_where

    # ------------------------------------------------------------------ flush

    def flush(self, least_pages: int = 0) -> bool:
        """Flush the file at ``flushed_where``; True when ``flushed_where`` moved."""
        mf = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
        if mf is None:
            return False
        where = mf.file_from_offset + mf.flush(least_pages)
        moved = where > self.flushed_where
        self.flushed_where = max(self.flushed_where, where)
        if mf.flushed_position >= self.mapped_file_size:
            nxt = self.find_mapped_file_by_offset(self.flushed_where)
            if nxt is not None and nxt.wrote_position > 0:
                return self.flush(least_pages) or moved
        return moved

    def flush_into(self, batch: SyncBatch, least_pages: int = 0) -> None:
        """:meth:`flush` with the syncs left to ``batch`` (``flushed_where`` moves once they
        succeeded): the file at ``flushed_where``, and the next one when that one fills."""
        mf = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
        while mf is not None:
            target = batch.flush(mf, least_pages)
            if target is None:
                return
            where = mf.file_from_offset + target
            batch.after(functools.partial(self._flushed_to, where))
            if target < self.mapped_file_size:
                return
            mf = self.find_mapped_file_by_offset(where)
            if mf is None or mf.wrote_position == 0:
                return

    def _flushed_to(self, where: int) -> None:
        self.flushed_where = max(self.flushed_where, where)

    # ------------------------------------------------------------------ truncate / delete

    def truncate_dirty_files(self, offset: int) -> None:
        """Drop files that start past ``offset``; the file holding it ends there (bytes kept)."""
        keep: list[MappedFile] = []
        for mf in self.mapped_files:
            file_tail = mf.file_from_offset + self.mapped_file_size
            if file_tail > offset:
                if offset >= mf.file_from_offset:
                    mf.set_positions(offset % self.mapped_file_size)
                    keep.append(mf)
                else:
                    log.info("deleting dirty file %s past offset %d", mf.file_name, offset)
                    mf.destroy()
            else:
                keep.append(mf)
        with self._lock:
            self.mapped_files = tuple(keep)
        self.flushed_where = min(self.flushed_where, offset)
        if os.path.isdir(self.store_path):
            fsync_dir(self.store_path)

    def delete_last_mapped_file(self) -> None:
        last = self.get_last_mapped_file()
        if last is not None:
            with self._lock:
                self.mapped_files = self.mapped_files[:-1]
            last.destroy()

    def delete_expired_file_by_time(
        self, expired_ms: int, now_ms: int, *, clean_immediately: bool, max_count: int
    ) -> int:
        """Delete old files oldest-first, never the last, stopping at the first kept one."""
        files = self.mapped_files[:-1]
        doomed: list[MappedFile] = []
        for mf in files:
            if len(doomed) >= max_count:
                break
            if not (clean_immediately or mf.last_modified_ms() + expired_ms <= now_ms):
                break
            doomed.append(mf)
        return self._delete(doomed)

    def delete_expired_file_by_offset(self, offset: int, unit_size: int) -> int:
        """CQ files (not the last) whose last unit's physical offset is below ``offset``."""
        doomed: list[MappedFile] = []
        for mf in self.mapped_files[:-1]:
            pos = self.mapped_file_size - unit_size
            (max_phy,) = _INT64.unpack_from(mf.view, pos)
            if max_phy >= offset:
                break
            doomed.append(mf)
        return self._delete(doomed)

    def _delete(self, doomed: list[MappedFile]) -> int:
        if not doomed:
            return 0
        gone = {id(mf) for mf in doomed}
        with self._lock:
            self.mapped_files = tuple(m for m in self.mapped_files if id(m) not in gone)
        for mf in doomed:
            log.info("deleting expired file %s", mf.file_name)
            mf.destroy()
        fsync_dir(self.store_path)
        return len(doomed)

    # ------------------------------------------------------------------ lifecycle

    def shutdown(self) -> None:
        for mf in self.mapped_files:
            mf.close()

    def destroy(self) -> None:
        for mf in self.mapped_files:
            mf.destroy()
        self.mapped_files = ()
        self.flushed_where = 0
        if os.path.isdir(self.store_path):
            shutil.rmtree(self.store_path, ignore_errors=True)
