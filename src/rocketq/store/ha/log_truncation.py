"""Cutting a replica's log back: to the consistent point on rejoin, and the torn tail before a
broker becomes master (RocketMQ 5's ``DefaultMessageStore.truncateFiles`` and
``AutoSwitchHAService.truncateInvalidMsg``).

Theory of operation. A cut at ``offset`` must leave the replica as if it had never held a byte
past it, in every file that points into the commitlog:

1. the consume queues drop their units at or past it;
2. the index drops its files holding an entry at or past it (an index file cannot drop single
   entries); the records below the cut that those files also indexed are dispatched again;
3. the commitlog keeps the bytes past the cut in ``truncated/`` side files and zeroes them
   (``recovery.cut_tail``), so a crash before the master's bytes overwrite them can never
   bring a diverged record back;
4. the reput service restarts from the lowest offset still to dispatch, and the confirm offset
   and the topic-queue table follow the cut.

All of it runs with dispatch paused and puts locked out. The epoch file is the caller's (the
HA service truncates its ``EpochFileCache`` after this succeeds).
"""

from __future__ import annotations

import logging

from rocketq.store.recovery import RecoverableStore, cut_tail

log = logging.getLogger(__name__)

SCAN_CHUNK_BYTES = 4 * 1024 * 1024


def truncate_files(store: RecoverableStore, offset: int, reason: str) -> None:
    """Cut every file of ``store`` back to commitlog ``offset`` (nothing past the end)."""
    cl = store.commit_log
    if offset >= cl.get_max_offset():
        return
    reput = store.reput_service
    with reput.paused(), cl.put_lock:
        log.warning("replica log cut at %d (max %d): %s", offset, cl.get_max_offset(), reason)
        for cq in store.consume_queues.all_queues():
            cq.truncate_dirty_logic_files(offset)
        redispatch_from = offset
        if store.index_service is not None:
            first = store.index_service.truncate_dirty_files(offset)
            if first is not None:
                redispatch_from = min(redispatch_from, first)
        cut_tail(store, offset, reason)
        if store.dispatch_checkpoint is not None:
            store.dispatch_checkpoint.discard_above(offset)
        reput.reput_from_offset = min(reput.reput_from_offset, redispatch_from)
        if store.checkpoint is not None:
            cp = store.checkpoint
            cp.confirm_phy_offset = min(cp.confirm_phy_offset, offset)
        cl.topic_queue_table = store.consume_queues.topic_queue_offsets(max(0, cl.get_min_offset()))
    reput.wakeup()


def valid_end(store: RecoverableStore) -> int:
    """The end of the last whole, CRC-valid record, scanning from the dispatch position (what
    a replica has past it may be a frame cut mid-record or bytes never written whole)."""
    cl = store.commit_log
    pos = max(store.reput_service.reput_from_offset, cl.get_min_offset(), 0)
    end = cl.get_max_offset()
    while pos < end:
        _, nxt, bad = cl.read_dispatch_requests(
            pos, check_crc=True, max_bytes=SCAN_CHUNK_BYTES, read_properties=False
        )
        if bad or nxt <= pos:
            break
        pos = nxt
    return min(pos, end)


def truncate_invalid_msg(store: RecoverableStore) -> int:
    """Cut a torn tail but keep every valid byte; the offset cut at, or -1 when whole."""
    end = valid_end(store)
    if end >= store.commit_log.get_max_offset():
        return -1
    truncate_files(store, end, "torn tail before a role change")
    return end
