"""Store load and recovery (store.md §7.3-7.6, reliability.md §1.5, §1.9).

Theory of operation
-------------------
1. Map the commitlog, load the consume queues, read the checkpoint (a missing one reads as
   zeros), load the index files.
2. Choose where to scan from. Normal exit (no ``abort``): the third-last commitlog file.
   Abnormal exit (``abort`` present, or the checkpoint missing): walking back from the last
   file, the first file whose first record is valid, has a non-zero store time and was stored
   before ``checkpoint.get_min_timestamp()``; else the first file.
3. Scan forward with CRC checks (store.md §2.6). The first bad record is the end of the
   valid data (``process_offset``). The bytes after it, up to the last non-zero byte, are
   copied to ``<root>/truncated/<file>.<offset>.cut`` and zeroed (zeroing stops stale records
   past the new end from ever parsing as valid after later appends); later files are moved to
   ``truncated/`` whole. Each cut is logged at WARNING with file, offset and reason.
4. Consume queues are truncated to ``process_offset``.
5. Re-dispatch, synchronously and idempotently: from the scan start after an abnormal exit;
   from the first commitlog file when the consume queue or index directory is gone (rebuild);
   otherwise from the largest physical end found in the consume queues (4.x rule).
6. Rebuild the topic-queue offset table from the consume queues' max offsets.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from rocketq.store import paths
from rocketq.store.checkpoint import StoreCheckpoint
from rocketq.store.commitlog import check_message_and_return_size
from rocketq.store.index_service import IndexService
from rocketq.store.mapped_file import MappedFile

if TYPE_CHECKING:
    from rocketq.store.message_store import MessageStore

log = logging.getLogger(__name__)

ZERO_CHUNK = bytes(1 << 20)


def load_and_recover(store: MessageStore) -> None:
    cl = store.commit_log
    cl.load()
    root = store.root
    cq_root = paths.consume_queue_dir(root)
    cq_missing = not _has_entries(cq_root)
    load_consume_queues(store)
    checkpoint_missing = not os.path.exists(paths.checkpoint_path(root))
    store.checkpoint = StoreCheckpoint(paths.checkpoint_path(root))
    abnormal = os.path.exists(paths.abort_path(root)) or checkpoint_missing
    store.recovered_abnormally = abnormal
    index_missing = False
    if store.config.message_index_enable:
        index_missing = not _has_entries(paths.index_dir(root))
        store.index_service = _new_index_service(store)
        store.index_service.load(not abnormal)
    for cq in store._all_consume_queues():
        cq.recover()
    start = choose_abnormal_start(store) if abnormal else choose_normal_start(store)
    process_offset = scan_valid_end(store, start)
    cut_tail(store, process_offset)
    for cq in store._all_consume_queues():
        cq.truncate_dirty_logic_files(process_offset)
    if store.checkpoint is not None and hasattr(store.checkpoint, "confirm_phy_offset"):
        store.checkpoint.confirm_phy_offset = process_offset
    has_data = cl.get_max_offset() > max(0, cl.get_min_offset())
    if abnormal:
        dispatch_from = start
    elif has_data and (cq_missing or index_missing):
        dispatch_from = max(0, cl.get_min_offset())
    else:
        dispatch_from = max(max_physic_end_in_consume_queues(store), max(0, cl.get_min_offset()))
    store.reput_service.reput_from_offset = dispatch_from
    store.reput_service.do_reput()
    recover_topic_queue_table(store)


def _has_entries(path: str) -> bool:
    return os.path.isdir(path) and bool(os.listdir(path))


def _new_index_service(store: MessageStore) -> IndexService:
    cfg = store.config
    return IndexService(
        paths.index_dir(store.root), cfg.max_hash_slot_num, cfg.max_index_num, store.checkpoint
    )


def load_consume_queues(store: MessageStore) -> None:
    cq_root = paths.consume_queue_dir(store.root)
    if not os.path.isdir(cq_root):
        return
    for topic in sorted(os.listdir(cq_root)):
        topic_dir = os.path.join(cq_root, topic)
        if not os.path.isdir(topic_dir):
            continue
        for qid in sorted(os.listdir(topic_dir)):
            if not qid.lstrip("-").isdigit():
                log.warning("ignoring stray entry %s in %s", qid, topic_dir)
                continue
            cq = store.find_consume_queue(topic, int(qid))
            cq.load()


def max_physic_end_in_consume_queues(store: MessageStore) -> int:
    best = 0
    for cq in store._all_consume_queues():
        best = max(best, int(cq.get_max_physic_offset()))
    return best


def recover_topic_queue_table(store: MessageStore) -> None:
    table: dict[str, int] = {}
    min_phy = max(0, store.commit_log.get_min_offset())
    for topic, queues in store.consume_queue_table.items():
        for qid, cq in queues.items():
            cq.correct_min_offset(min_phy)
            table[f"{topic}-{qid}"] = int(cq.get_max_offset_in_queue())
    store.commit_log.topic_queue_table = table


def choose_normal_start(store: MessageStore) -> int:
    files = store.commit_log.mapped_file_queue.mapped_files
    if not files:
        return 0
    return files[max(0, len(files) - 3)].file_from_offset


def choose_abnormal_start(store: MessageStore) -> int:
    files = store.commit_log.mapped_file_queue.mapped_files
    if not files:
        return 0
    cp = store.checkpoint
    min_ts = int(cp.get_min_timestamp()) if cp is not None else 0
    if store.config.message_index_enable and store.config.message_index_safe and cp is not None:
        min_ts = int(cp.get_min_timestamp_index())
    delay = store.commit_log._delay_table
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


def scan_valid_end(store: MessageStore, start: int) -> int:
    """The end of valid data: scan with CRC checks from ``start`` (no dispatch)."""
    cl = store.commit_log
    check_crc = store.config.check_crc_on_recover
    delay = cl._delay_table
    files = cl.mapped_file_queue.mapped_files
    if not files:
        return 0
    offset = max(start, files[0].file_from_offset)
    store.recovery_cut_reason = ""
    for mf in files:
        if mf.file_from_offset + mf.file_size <= offset:
            continue
        pos = offset - mf.file_from_offset
        view = mf.view
        size = mf.file_size
        while True:
            req = check_message_and_return_size(
                view,
                pos,
                size,
                mf.file_from_offset,
                check_crc=check_crc,
                delay_table=delay,
                read_properties=False,
            )
            if req is None:
                store.recovery_cut_reason = _why_bad(view, pos, size)
                return mf.file_from_offset + pos
            if req.msg_size == 0:
                break
            pos += req.msg_size
        offset = mf.file_from_offset + mf.file_size
    return offset


def _why_bad(view: memoryview, pos: int, size: int) -> str:
    if size - pos < 8:
        return "end of file"
    head = bytes(view[pos : pos + 8])
    if head == bytes(8):
        return "zero header"
    return f"invalid record (header {head.hex()})"


def cut_tail(store: MessageStore, process_offset: int) -> None:
    """Keep the bytes past ``process_offset`` in side files, zero them, truncate the queue."""
    mfq = store.commit_log.mapped_file_queue
    cut_dir = paths.truncated_dir(store.root)
    reason = getattr(store, "recovery_cut_reason", "") or "invalid record"
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
    """One past the last non-zero byte at or after ``start`` (``start`` when all zero)."""
    chunk = len(ZERO_CHUNK)
    end = mf.file_size
    view = mf.view
    while end > start:
        begin = max(start, end - chunk)
        piece = view[begin:end]
        if piece != ZERO_CHUNK[: end - begin]:
            data = bytes(piece)
            return begin + len(data.rstrip(b"\0"))
        end = begin
    return start
