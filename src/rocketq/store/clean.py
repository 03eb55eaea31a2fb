"""Expired-file clean-up: CleanCommitLogService and CleanConsumeQueueService (DefaultMessageStore).

CommitLog files older than ``file_reserved_time_h`` (by mtime) are deleted when the local
hour is in ``delete_when`` or when the commitlog partition is fuller than
``disk_max_used_space_ratio``; above ``disk_space_clean_forcibly_ratio`` (85 %) files go
regardless of age, above ``disk_space_warning_level_ratio`` (90 %) the store refuses puts
(SERVICE_NOT_AVAILABLE) until usage falls. Oldest first, never the last file,
stopping at the first file kept, at most ``delete_files_batch_max`` per round. Consume
queues and index files then follow the new commitlog minimum. Time comes from
``config.clock_ms`` so tests move the clock instead of sleeping; :meth:`run_once` is what
the thread does each ``clean_resource_interval_ms``.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Protocol

from rocketq.store.commitlog import CommitLog
from rocketq.store.config import StoreConfig
from rocketq.store.consume_queue_table import ConsumeQueueTable
from rocketq.store.index_service import IndexService
from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)

FIRST_RUN_DELAY_MS = 60_000


def used_space_ratio(total: int, free: int, usable: int) -> float:
    """RocketMQ's ``UtilAll.getDiskPartitionSpaceUsedPercent``: used / (used + usable), where
    used = total - free, rounded up to a whole percent; -1.0 for an empty file system.

    Space reserved for root (free but not usable) counts on neither side, as ``df`` shows
    ``Use%``: on a file system with a large reserve, used / total would read far fuller than
    it is and set off the forced clean-up early."""
    used = total - free
    entire = used + usable
    if total <= 0 or entire <= 0:
        return -1.0
    return -(-used * 100 // entire) / 100


def disk_used_ratio(path: str) -> float:
    """The used ratio of the file system holding ``path`` (the nearest existing parent)."""
    while not os.path.exists(path):
        parent = os.path.dirname(path) or "."
        if parent == path:
            break
        path = parent
    try:
        st = os.statvfs(path)
    except OSError:
        return -1.0
    return used_space_ratio(
        st.f_blocks * st.f_frsize, st.f_bfree * st.f_frsize, st.f_bavail * st.f_frsize
    )


class CommitLogOwner(Protocol):
    """What CleanCommitLogService needs of the store: config, commitlog, the disk-full flag."""

    config: StoreConfig
    commit_log: CommitLog
    disk_full: bool


class ConsumeQueueOwner(Protocol):
    """What CleanConsumeQueueService needs: the commitlog minimum, the queues, the index."""

    config: StoreConfig
    commit_log: CommitLog
    consume_queues: ConsumeQueueTable
    index_service: IndexService | None


class CleanCommitLogService(ServiceThread):
    def __init__(self, store: CommitLogOwner) -> None:
        super().__init__("CleanCommitLogService")
        self.store = store
        self.manual_delete_rounds = 0
        self.used_ratio = disk_used_ratio  # injectable for tests

    def is_time_to_delete(self) -> bool:
        now_ms = self.store.config.clock_ms()
        hour = time.localtime(now_ms / 1000).tm_hour
        hours = {int(h) for h in self.store.config.delete_when.split(";")}
        return hour in hours

    def run_once(self) -> int:
        cfg = self.store.config
        ratio = self.used_ratio(cfg.commit_log_dir)
        self.store.disk_full = ratio > cfg.disk_space_warning_level_ratio / 100
        if self.store.disk_full:
            log.error(
                "disk usage %.1f%% above %d%%: refusing puts",
                ratio * 100,
                cfg.disk_space_warning_level_ratio,
            )
        space = ratio > cfg.disk_max_used_space_ratio / 100
        clean_immediately = ratio > cfg.disk_space_clean_forcibly_ratio / 100
        manual = self.manual_delete_rounds > 0
        if manual:
            self.manual_delete_rounds -= 1
        if not (self.is_time_to_delete() or space or manual):
            return 0
        deleted = self.store.commit_log.mapped_file_queue.delete_expired_file_by_time(
            cfg.file_reserved_time_h * 3_600_000,
            cfg.clock_ms(),
            clean_immediately=clean_immediately,
            max_count=cfg.delete_files_batch_max,
        )
        if deleted:
            log.info("deleted %d expired commitlog files", deleted)
        return deleted

    def run(self) -> None:
        self.wait_for_running(min(FIRST_RUN_DELAY_MS, self.store.config.clean_resource_interval_ms))
        while not self.is_stopped():
            try:
                self.run_once()
            except OSError:
                log.exception("commitlog clean-up failed")
            self.wait_for_running(self.store.config.clean_resource_interval_ms)


class CleanConsumeQueueService(ServiceThread):
    def __init__(self, store: ConsumeQueueOwner) -> None:
        super().__init__("CleanConsumeQueueService")
        self.store = store
        self.last_phy_offset = 0

    def run_once(self) -> int:
        min_phy = self.store.commit_log.get_min_offset()
        if min_phy <= self.last_phy_offset:
            return 0
        self.last_phy_offset = min_phy
        deleted = 0
        for cq in self.store.consume_queues.all_queues():
            deleted += int(cq.delete_expired_file(min_phy) or 0)
            cq.correct_min_offset(min_phy)
        if self.store.index_service is not None:
            self.store.index_service.delete_expired_file(min_phy)
        return deleted

    def run(self) -> None:
        while not self.is_stopped():
            self.wait_for_running(self.store.config.clean_resource_interval_ms)
            try:
                self.run_once()
            except OSError:
                log.exception("consume queue clean-up failed")
