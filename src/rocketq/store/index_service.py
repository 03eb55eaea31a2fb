"""IndexService: the list of IndexFiles under ``index/`` (IndexService.java).

Files are named by their creation time (``yyyyMMddHHmmssSSS``, local time) and loaded in
name order. ``build_index`` (the reput thread) indexes ``topic#UNIQ_KEY`` and ``topic#key``
for each key in KEYS, skipping records below the current file's endPhyOffset so re-dispatch
adds nothing twice; ``build_index_run`` does so for a dispatch run, in C where it is built
(``index_puts``), that path's reference being ``build_index``. When a file fills, a new one
starts from its end time and offset, the full file is flushed and the checkpoint's
indexMsgTimestamp moves to its end time. After an
abnormal exit, files newer than indexMsgTimestamp are deleted at load; recovery re-dispatches.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketq.common import clock, native_record
from rocketq.common.message_const import KEY_SEPARATOR, MessageSysFlag
from rocketq.errors import IllegalStateError
from rocketq.store.format import INDEX_HEADER_SIZE, index_file_size
from rocketq.store.index_file import IndexFile
from rocketq.store.mapped_file import remove_cut_creations
from rocketq.store.paths import fsync_dir
from rocketq.store.sync_batch import SyncBatch

if TYPE_CHECKING:
    from rocketq.store.checkpoint import StoreCheckpoint
    from rocketq.store.commitlog import DispatchRequest

log = logging.getLogger(__name__)

MAX_MSGS_NUM_BATCH = 64
TRANSACTION_TYPE_MASK = MessageSysFlag.TRANSACTION_TYPE_MASK
TRANSACTION_ROLLBACK_TYPE = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
INDEX_FILE_NAME_DIGITS = 17


@dataclass
class QueryOffsetResult:
    phy_offsets: list[int] = field(default_factory=list)
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0


def index_file_name(now_ms: int) -> str:
    t = time.localtime(now_ms / 1000)
    return time.strftime("%Y%m%d%H%M%S", t) + f"{now_ms % 1000:03d}"


def build_key(topic: str, key: str) -> str:
    return f"{topic}#{key}"


class IndexService:
    def __init__(
        self,
        index_dir: str,
        max_hash_slot_num: int,
        max_index_num: int,
        checkpoint: StoreCheckpoint | None,
    ) -> None:
        self.index_dir = index_dir
        self.hash_slot_num = max_hash_slot_num
        self.index_num = max_index_num
        self.checkpoint = checkpoint
        self.index_file_list: list[IndexFile] = []
        self._lock = threading.RLock()

    def load(self, last_exit_ok: bool) -> bool:
        if not os.path.isdir(self.index_dir):
            return True
        for path in remove_cut_creations(self.index_dir):
            log.warning("removed %s: a crash cut its creation short", path)
        names = sorted(n for n in os.listdir(self.index_dir) if n.isdigit())
        index_ts = self.checkpoint.index_msg_timestamp if self.checkpoint is not None else 0
        for name in names:
            path = os.path.join(self.index_dir, name)
            size = os.path.getsize(path)
            if size < INDEX_HEADER_SIZE:  # created by a version that could leave it short
                log.warning("removed index file %s of %d bytes: it holds no entry", path, size)
                os.unlink(path)
                continue
            f = self._open(path)
            if f is None:
                log.error(
                    "index file %s has %d bytes, not the configured size; not loaded", path, size
                )
                continue
            if not last_exit_ok and f.end_timestamp > index_ts:
                log.info("abnormal exit: deleting index file %s (newer than checkpoint)", path)
                f.destroy()
                continue
            self.index_file_list.append(f)
        return True

    def _open(self, path: str) -> IndexFile | None:
        if os.path.getsize(path) != index_file_size(self.hash_slot_num, self.index_num):
            return None
        f = IndexFile(path, self.hash_slot_num, self.index_num)
        f.load()
        return f

    # ------------------------------------------------------------------ build

    def build_index(self, req: DispatchRequest) -> None:
        if req.sys_flag & TRANSACTION_TYPE_MASK == TRANSACTION_ROLLBACK_TYPE:
            return
        keys = req.keys
        if not req.uniq_key and not keys:
            return
        f = self._last_file_or_create()
        if req.commit_log_offset < f.end_phy_offset:
            return
        topic = req.topic
        if req.uniq_key:
            f = self._put_key(f, build_key(topic, req.uniq_key), req)
        if keys:
            for key in keys.split(KEY_SEPARATOR):
                if key:
                    f = self._put_key(f, build_key(topic, key), req)

    def build_index_run(self, requests: list[DispatchRequest]) -> None:
        """:meth:`build_index` for each of a dispatch run's requests; with the C record module
        each index file's share of the run is one call (``index_puts``, dispatch.c), which
        stops where this method must start a new file."""
        compiled = native_record.RECORD
        if compiled is None:
            for req in requests:
                self.build_index(req)
            return
        with self._lock:
            f = self.index_file_list[-1] if self.index_file_list else None
        n = len(requests)
        i = done = 0
        while True:
            view = f.mapped_file.view if f is not None else None
            i, done = compiled.index_puts(f, view, requests, i, done)
            if i >= n:
                return
            f = self._last_file_or_create()
            if f.is_write_full():  # a file that takes no entry: put_key would loop here
                raise IllegalStateError(f"a new index file is full: {f.file_name}")

    def _put_key(self, f: IndexFile, key: str, req: DispatchRequest) -> IndexFile:
        while not f.put_key(key, req.commit_log_offset, req.store_timestamp):
            f = self._last_file_or_create()
        return f

    def _last_file_or_create(self) -> IndexFile:
        with self._lock:
            last = self.index_file_list[-1] if self.index_file_list else None
            if last is not None and not last.is_write_full():
                return last
            end_phy = last.end_phy_offset if last is not None else 0
            end_ts = last.end_timestamp if last is not None else 0
            os.makedirs(self.index_dir, exist_ok=True)
            path = self._new_file_path()
            f = IndexFile(path, self.hash_slot_num, self.index_num, end_phy, end_ts)
            fsync_dir(self.index_dir)
            self.index_file_list.append(f)
        if last is not None:
            self._flush_full(last)
        return f

    def _new_file_path(self) -> str:
        now_ms = clock.now_ms()
        last = os.path.basename(self.index_file_list[-1].file_name) if self.index_file_list else ""
        while True:
            name = index_file_name(now_ms)
            path = os.path.join(self.index_dir, name)
            if name > last and not os.path.exists(path):
                return path
            now_ms += 1

    def _flush_full(self, f: IndexFile) -> None:
        f.flush()
        if self.checkpoint is not None:
            self.checkpoint.index_msg_timestamp = f.end_timestamp
            self.checkpoint.flush()

    # ------------------------------------------------------------------ query

    def query_offset(
        self, topic: str, key: str, max_num: int, begin: int, end: int
    ) -> QueryOffsetResult:
        result = QueryOffsetResult()
        max_num = min(max_num, MAX_MSGS_NUM_BATCH)
        full_key = build_key(topic, key)
        with self._lock:
            files = list(self.index_file_list)
        for i, f in enumerate(reversed(files)):
            if i == 0:
                result.index_last_update_timestamp = f.end_timestamp
                result.index_last_update_phyoffset = f.end_phy_offset
            if f.is_time_matched(begin, end):
                f.select_phy_offset(result.phy_offsets, full_key, max_num, begin, end)
            if f.begin_timestamp < begin or len(result.phy_offsets) >= max_num:
                break
        return result

    # ------------------------------------------------------------------ clean-up / lifecycle

    def delete_expired_file(self, offset: int) -> int:
        """Delete files (never the last) whose last entry is below ``offset``."""
        with self._lock:
            doomed = [f for f in self.index_file_list[:-1] if f.end_phy_offset < offset]
            if not doomed:
                return 0
            self.index_file_list = [f for f in self.index_file_list if f not in doomed]
        for f in doomed:
            log.info("deleting expired index file %s", f.file_name)
            f.destroy()
        fsync_dir(self.index_dir)
        return len(doomed)

    def truncate_dirty_files(self, offset: int) -> int | None:
        """Drop the files holding an entry at or past commitlog ``offset`` (a replica cut its
        log there); returns the lowest first-entry offset dropped, from which the caller
        re-dispatches the records below ``offset``, or None when nothing was dropped."""
        with self._lock:
            doomed = [f for f in self.index_file_list if f.end_phy_offset >= offset]
            if not doomed:
                return None
            self.index_file_list = [f for f in self.index_file_list if f not in doomed]
        firsts = [f.begin_phy_offset for f in doomed if f.index_count > 1]  # 1: empty
        for f in doomed:
            log.info("deleting index file %s: entries past the cut at %d", f.file_name, offset)
            f.destroy()
        fsync_dir(self.index_dir)
        return min([offset, *firsts])

    def sync_last(self) -> None:
        """Make the entries of the file being written durable (the dispatch checkpoint);
        the writer keeps each file's header current, so only the mapping is synced."""
        with self._lock:
            last = self.index_file_list[-1] if self.index_file_list else None
        if last is not None:
            last.sync()

    def sync_last_into(self, batch: SyncBatch) -> None:
        """:meth:`sync_last` with the sync left to ``batch`` (``sync_batch.py``)."""
        with self._lock:
            last = self.index_file_list[-1] if self.index_file_list else None
        if last is not None:
            batch.sync(last.mapped_file)

    def flush(self) -> None:
        with self._lock:
            files = list(self.index_file_list)
        for f in files:
            f.flush()

    def shutdown(self) -> None:
        with self._lock:
            for f in self.index_file_list:
                f.shutdown()
            self.index_file_list = []

    def destroy(self) -> None:
        with self._lock:
            for f in self.index_file_list:
                f.destroy()
            self.index_file_list = []
