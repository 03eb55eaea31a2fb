"""Store load and recovery (DefaultMessageStore#load/#recover, CommitLog#recoverAbnormally).

Theory of operation
-------------------
1. Map the commitlog, load the consume queues, read the checkpoint (a missing one reads as
   zeros), load the index files.
2. Choose where to scan from. Normal exit (no ``abort``): the third-last commitlog file.
   Abnormal exit (``abort`` present, or the checkpoint missing): the offset of the dispatch
   checkpoint (``dispatch_checkpoint.py``: everything below it flushed, dispatched and its
   queue and index entries flushed) when the commitlog still holds the bytes it was taken
   after, so the restart costs what was not checkpointed, not the store's size; else
   RocketMQ's rule: walking back from the last file, the first file whose first record is
   valid, has a non-zero store time and was stored before ``checkpoint.get_min_timestamp()``;
   else the first file.
3. Scan forward with CRC checks (``check_message_and_return_size``). The first bad record is the
   end of the valid data (``process_offset``). The bytes after it, up to the last non-zero byte,
   are copied to ``<root>/truncated/<file>.<offset>.cut`` and zeroed (zeroing stops stale
   records past the new end from ever parsing as valid after later appends); later files are
   moved to ``truncated/`` whole. Each cut is logged at WARNING with file, offset and reason.
4. Consume queues are truncated to ``process_offset``.
5. Re-dispatch, synchronously and idempotently: from the scan start after an abnormal exit;
   from the first commitlog file when the consume queue or index directory is gone (rebuild);
   otherwise from the largest physical end found in the consume queues (4.x rule).
6. Rebuild the topic-queue offset table from the consume queues' max offsets.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

from rocketq.common import native_record
from rocketq.store import paths
from rocketq.store.checkpoint import StoreCheckpoint
from rocketq.store.commitlog import CommitLog, check_message_and_return_size
from rocketq.store.config import StoreConfig
from rocketq.store.consume_queue_table import ConsumeQueueTable
from rocketq.store.dispatch_checkpoint import DispatchCheckpoint, DispatchPoint, tail_of
from rocketq.store.index_service import IndexService
from rocketq.store.mapped_file import MappedFile, last_nonzero
from rocketq.store.reput import ReputMessageService

log = logging.getLogger(__name__)

#: past this many zeros nothing was written: twice maxMessageSize's default (4 MiB)
ZERO_RUN_BYTES = 8 << 20


class RecoverableStore(Protocol):
    """The parts of a MessageStore that loading and recovery read and set."""

    config: StoreConfig
    root: str
    commit_log: CommitLog
    consume_queues: ConsumeQueueTable
    checkpoint: StoreCheckpoint | None
    index_service: IndexService | None
    reput_service: ReputMessageService
    recovered_abnormally: bool
    recovery_cut_reason: str
    recovery_scan_start: int
    dispatch_checkpoint: DispatchCheckpoint | None


def load_and_recover(store: RecoverableStore) -> None:
    log.info("store %s: record paths %s", store.root, native_record.active())
    cl = store.commit_log
    cl.load()
    root = store.root
    cq_root = paths.consume_queue_dir(root)
    cq_missing = not _has_entries(cq_root)
    store.consume_queues.load()
    checkpoint_missing = not os.path.exists(paths.checkpoint_path(root))
    store.checkpoint = StoreCheckpoint(paths.checkpoint_path(root))
    abnormal = os.path.exists(paths.abort_path(root)) or checkpoint_missing
    store.recovered_abnormally = abnormal
    store.dispatch_checkpoint = DispatchCheckpoint(root)
    point = trusted_dispatch_point(store) if abnormal else None
    index_missing = False
    if store.config.message_index_enable:
        index_missing = not _has_entries(paths.index_dir(root))
        store.index_service = _new_index_service(store)
        # from a trusted point the index files are kept: entries below it are flushed
        store.index_service.load(not abnormal or point is not None)
    below = point.offset if point is not None else None  # units under it need no check
    for cq in store.consume_queues.all_queues():
        cq.recover(below)
    if point is not None:
        start = point.offset
        log.info("abnormal recovery starts at the dispatch checkpoint, offset %d", start)
    else:
        start = choose_abnormal_start(store) if abnormal else choose_normal_start(store)
    store.recovery_scan_start = start
    process_offset = scan_valid_end(store, start)
    cut_tail(store, process_offset)
    for cq in store.consume_queues.all_queues():
        cq.truncate_dirty_logic_files(process_offset)
    if store.config.enable_controller_mode:  # what the master confirmed, never past the end
        confirmed = min(store.checkpoint.confirm_phy_offset, process_offset)
        store.checkpoint.confirm_phy_offset = confirmed
    else:
        store.checkpoint.confirm_phy_offset = process_offset
    has_data = cl.get_max_offset() > max(0, cl.get_min_offset())
    if abnormal:
        dispatch_from = start
        if point is not None and store.index_service is not None:
            first_cut = store.index_service.truncate_dirty_files(process_offset)
            if first_cut is not None:  # entries past the valid end (an OS crash): rebuilt
                dispatch_from = min(dispatch_from, first_cut)
    elif has_data and (cq_missing or index_missing):
        dispatch_from = max(0, cl.get_min_offset())
    else:
        dispatch_from = max(store.consume_queues.max_physic_end(), max(0, cl.get_min_offset()))
    store.reput_service.reput_from_offset = dispatch_from
    store.reput_service.do_reput()
    min_phy = max(0, cl.get_min_offset())
    cl.topic_queue_table = store.consume_queues.topic_queue_offsets(min_phy)


def trusted_dispatch_point(store: RecoverableStore) -> DispatchPoint | None:
    """The dispatch checkpoint, if the commitlog still holds the bytes it was taken after."""
    point = store.dispatch_checkpoint.written if store.dispatch_checkpoint else None
    cl = store.commit_log
    if point is None or point.offset <= max(0, cl.get_min_offset()):
        return None
    mf = cl.mapped_file_queue.find_mapped_file_by_offset(point.offset - 1)
    if mf is None or point.offset > mf.file_from_offset + mf.file_size:
        return None
    if tail_of(mf.view, mf.file_from_offset, point.offset) != (point.tail_crc, point.tail_len):
        log.warning(
            "%s: offset %d no longer matches the commitlog; recovery scans by file",
            store.dispatch_checkpoint.path if store.dispatch_checkpoint else "",
            point.offset,
        )
        return None
    return point


def _has_entries(path: str) -> bool:
    return os.path.isdir(path) and bool(os.listdir(path))


def _new_index_service(store: RecoverableStore) -> IndexService:
    cfg = store.config
    return IndexService(
        paths.index_dir(store.root), cfg.max_hash_slot_num, cfg.max_index_num, store.checkpoint
    )


def choose_normal_start(store: RecoverableStore) -> int:
    files = store.commit_log.mapped_file_queue.mapped_files
    if not files:
        return 0
    return files[max(0, len(files) - 3)].file_from_offset


def choose_abnormal_start(store: RecoverableStore) -> int:
    files = store.commit_log.mapped_file_queue.mapped_files
    if not files:
        return 0
    cp = store.checkpoint
    min_ts = int(cp.get_min_timestamp()) if cp is not None else 0
    if store.config.message_index_enable and store.config.message_index_safe and cp is not None:
        min_ts = int(cp.get_min_timestamp_index())
    delay = store.commit_log.delay_table
    for mf in reversed(files):
        req = check_message_and_return_size(
            mf.view,
            0,
            mf.file_size,
            mf.file_from_offset,
            check_crc=True,
            delay_table=delay,
            read_properties=False,
        )
        if req is None or req.msg_size == 0 or req.store_timestamp == 0:
            continue
        if req.store_timestamp <= min_ts:
            log.info("abnormal recovery starts at %s", mf.file_name)
            return mf.file_from_offset
    return files[0].file_from_offset


def scan_valid_end(store: RecoverableStore, start: int) -> int:
    """The end of valid data: scan with CRC checks from ``start`` (no dispatch)."""
    cl = store.commit_log
    check_crc = store.config.check_crc_on_recover
    delay = cl.delay_table
    files = cl.mapped_file_queue.mapped_files
    if not files:
        return 0
    offset = max(start, files[0].file_from_offset)
    store.recovery_cut_reason = ""
    for mf in files:
        if mf.file_from_offset + mf.file_size <= offset:
            continue
        pos, blank = scan_file(mf, offset - mf.file_from_offset, check_crc, delay)
        if not blank:
            store.recovery_cut_reason = _why_bad(mf.view, pos, mf.file_size)
            return mf.file_from_offset + pos
        offset = mf.file_from_offset + mf.file_size
    return offset


def scan_file(
    mf: MappedFile, pos: int, check_crc: bool, delay_table: dict[int, int]
) -> tuple[int, bool]:
    """Walk ``mf``'s records from ``pos``: (where the walk stopped, True when at the file's
    blank END_OF_FILE record, False at a record that fails the checks)."""
    return scan_segment(mf.view, pos, mf.file_size, mf.file_from_offset, check_crc, delay_table)


def scan_segment(
    view: memoryview, pos: int, size: int, base: int, check_crc: bool, delay_table: dict[int, int]
) -> tuple[int, bool]:
    """:func:`scan_file` over the bytes of the segment that starts at commitlog offset ``base``."""
    compiled = native_record.RECORD
    if compiled is not None:  # the whole file in one C call, the GIL released
        _, pos, status = compiled.scan_records(
            view, pos, size, size, base, size + 1, check_crc, False, None, False, None,
        )  # fmt: skip
        return pos, status == compiled.ST_BLANK
    while True:
        req = check_message_and_return_size(
            view,
            pos,
            size,
            base,
            check_crc=check_crc,
            delay_table=delay_table,
            read_properties=False,
        )
        if req is None:
            return pos, False
        if req.msg_size == 0:
            return pos, True
        pos += req.msg_size


def _why_bad(view: memoryview, pos: int, size: int) -> str:
    if size - pos < 8:
        return "end of file"
    head = bytes(view[pos : pos + 8])
    if head == bytes(8):
        return "zero header"
    return f"invalid record (header {head.hex()})"


def cut_tail(store: RecoverableStore, process_offset: int, reason: str = "") -> None:
    """Keep the bytes past ``process_offset`` in side files, zero them, truncate the queue."""
    mfq = store.commit_log.mapped_file_queue
    cut_dir = paths.truncated_dir(store.root)
    reason = reason or store.recovery_cut_reason or "invalid record"
    for mf in list(mfq.mapped_files):
        end = mf.file_from_offset + mf.file_size
        if end <= process_offset:
            continue
        if mf.file_from_offset > process_offset:
            if _last_nonzero(mf, 0) > 0:
                _keep_whole_file(mf, cut_dir, reason, process_offset)
            continue
        pos = max(0, process_offset - mf.file_from_offset)
        tail = _last_nonzero(mf, pos)
        if tail > pos:
            os.makedirs(cut_dir, exist_ok=True)
            side = os.path.join(
                cut_dir, f"{os.path.basename(mf.file_name)}.{mf.file_from_offset + pos}.cut"
            )
            with open(side, "wb") as f:
                f.write(mf.view[pos:tail])
                f.flush()
                os.fsync(f.fileno())
            log.warning(
                "commitlog %s truncated at offset %d (file position %d): %s; %d bytes kept in %s",
                mf.file_name,
                mf.file_from_offset + pos,
                pos,
                reason,
                tail - pos,
                side,
            )
            mf.view[pos:tail] = bytes(tail - pos)
            mf.mm.flush()
    mfq.truncate_dirty_files(process_offset)
    last = mfq.get_last_mapped_file()
    if last is not None:
        mfq.flushed_where = last.file_from_offset + last.flushed_position


def _keep_whole_file(mf: MappedFile, cut_dir: str, reason: str, process_offset: int) -> None:
    os.makedirs(cut_dir, exist_ok=True)
    side = os.path.join(cut_dir, f"{os.path.basename(mf.file_name)}.{mf.file_from_offset}.cut")
    mf.close()
    os.replace(mf.file_name, side)
    log.warning(
        "commitlog %s lies past the valid end %d (%s); moved whole to %s",
        mf.file_name,
        process_offset,
        reason,
        side,
    )


def _last_nonzero(mf: MappedFile, start: int) -> int:
    """One past the last non-zero byte at or after ``start`` (``start`` when none), looking
    forward until ``ZERO_RUN_BYTES`` of zeros follow it: the commitlog is written in order, so
    a crash leaves its torn bytes right past the valid end, and no record holds a run of zeros
    that long. Reading a whole preallocated 1 GiB file instead cost seconds a restart."""
    return last_nonzero(mf.view, start, mf.file_size, ZERO_RUN_BYTES)
