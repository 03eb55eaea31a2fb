"""The read side of MessageStore (DefaultMessageStore's getMessage and lookups).

Reads go through the consume queues, so a message is served only once a dispatch run (the
reput thread's, or the broker loop's right after the put) has dispatched it. ``get_message``
scans units from the requested offset, asks the filter about the unit's tags code and then
about the record (``message_filter``), and stops at ``max_count`` messages or the transfer
byte limit; statuses and next offsets follow DefaultMessageStore#getMessage.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.store.commitlog import CommitLog
from rocketq.store.config import BrokerRole, StoreConfig
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.format import CQ_STORE_UNIT_SIZE
from rocketq.store.index_service import IndexService
from rocketq.store.message_filter import MessageFilter
from rocketq.store.results import GetMessageResult, GetMessageStatus, QueryMessageResult


class MessageReader:
    config: StoreConfig
    commit_log: CommitLog
    index_service: IndexService | None

    def find_consume_queue(
        self, topic: str, queue_id: int, create: bool = True
    ) -> ConsumeQueue | None:
        raise NotImplementedError

    def get_message(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_count: int,
        message_filter: MessageFilter | None = None,
    ) -> GetMessageResult:
        """Pull up to ``max_count`` records from ``offset`` (DefaultMessageStore.getMessage)."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        fix = self._next_offset_correction
        if cq is None:
            return GetMessageResult(GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, fix(offset, 0))
        min_offset = cq.get_min_offset_in_queue()
        max_offset = cq.get_max_offset_in_queue()
        if max_offset == 0:
            return GetMessageResult(
                GetMessageStatus.NO_MESSAGE_IN_QUEUE, fix(offset, 0), min_offset, 0
            )
        if offset < min_offset:
            return GetMessageResult(
                GetMessageStatus.OFFSET_TOO_SMALL, fix(offset, min_offset), min_offset, max_offset
            )
        if offset == max_offset:
            return GetMessageResult(
                GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_offset, max_offset
            )
        if offset > max_offset:  # nextBeginOffset = maxOffset (as getMessage)
            return GetMessageResult(
                GetMessageStatus.OFFSET_OVERFLOW_BADLY,
                fix(offset, max_offset),
                min_offset,
                max_offset,
            )
        result = GetMessageResult(
            GetMessageStatus.NO_MATCHED_MESSAGE, offset, min_offset, max_offset
        )
        self._collect(cq, offset, max_offset, max_count, message_filter, result)
        return result

    def _next_offset_correction(self, offset: int, corrected: int) -> int:
        """DefaultMessageStore#nextOffsetCorrection: a slave keeps the consumer's offset. Its
        queues trail the master's (the copy, then its own dispatch), so an offset past them is
        not wrong there; moving the consumer to the slave's end (or 0) would replay what it
        already consumed (offsetCheckInSlave, off by default, is not supported)."""
        return offset if self.config.broker_role is BrokerRole.SLAVE else corrected

    def get_message_body(
        self,
        topic: str,
        queue_id: int,
        offset: int,
        max_count: int,
        codes: tuple[int, ...] | None,
        resident_only: bool = True,
    ) -> GetMessageResult | None:
        """``get_message`` of a pull found in memory, walked in C (``collect_messages``): the
        records copied once into ``body``. ``codes`` is a TAG filter's code set (None: every
        unit). None when C is off, when the queue's answer is not a walk (no queue, no
        message, an offset out of range: ``get_message`` answers those at once), when C
        declines, or (``resident_only``) when a record is not in the page cache: the caller
        asks ``get_message``. ``resident_only=False`` skips the page-cache check (mincore) for
        records known to be just written (a held pull woken by their arrival)."""
        compiled = native_record.RECORD
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if compiled is None or cq is None:
            return None
        min_offset = cq.get_min_offset_in_queue()
        max_offset = cq.get_max_offset_in_queue()
        if not min_offset <= offset < max_offset:
            return None
        cfg = self.config
        cl_files = self.commit_log.mapped_file_queue
        walked = compiled.collect_messages(
            cq.mapped_file_queue.mapped_files,
            cq.mapped_file_queue.mapped_file_size,
            cq.min_logic_offset,
            cl_files.mapped_files,
            cl_files.mapped_file_size,
            self.commit_log.get_min_offset(),
            offset,
            max_offset,
            max(16000, max_count * 20),
            min(max_count, cfg.max_transfer_count_on_message_in_memory),
            cfg.max_transfer_bytes_on_message_in_memory,
            codes,
            resident_only,
        )
        if walked is None:
            return None
        status, next_offset, body, count, max_phy_pulling = walked
        result = GetMessageResult(
            _WALK_STATUS[status], next_offset, min_offset, max_offset, body=body, body_count=count
        )
        if max_phy_pulling >= 0:
            diff = self.commit_log.get_max_offset() - max_phy_pulling
            memory = _total_physical_memory() * cfg.access_message_in_memory_max_ratio // 100
            result.suggest_pulling_from_slave = diff > memory
        return result

    def _collect(
        self,
        cq: ConsumeQueue,
        offset: int,
        max_offset: int,
        max_count: int,
        message_filter: MessageFilter | None,
        result: GetMessageResult,
    ) -> None:
        cfg = self.config
        max_bytes = cfg.max_transfer_bytes_on_message_in_memory
        max_msgs = min(max_count, cfg.max_transfer_count_on_message_in_memory)
        scan_limit = max(16000, max_count * 20)
        min_phy = self.commit_log.get_min_offset()
        total = 0
        i = offset
        max_phy_pulling = -1
        while i < max_offset and i - offset < scan_limit:
            unit = cq.get_unit(i)
            if unit is None:
                if not result.message_buffers:
                    result.status = GetMessageStatus.OFFSET_FOUND_NULL
                    per_file = cfg.mapped_file_size_consume_queue // CQ_STORE_UNIT_SIZE
                    i += per_file - i % per_file  # the start of the next consume queue file
                break
            phy, size, tags_code = unit
            max_phy_pulling = phy
            if result.message_buffers and (
                len(result.message_buffers) >= max_msgs or total + size > max_bytes
            ):
                break
            i += 1
            if phy < min_phy:
                if not result.message_buffers:
                    result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                continue
            if message_filter is not None and not message_filter.is_matched_by_consume_queue(
                tags_code
            ):
                continue
            data = self.commit_log.get_message(phy, size)
            if data is None:
                if not result.message_buffers:
                    result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                continue
            if message_filter is not None and not message_filter.is_matched_by_commit_log(data):
                continue
            result.message_buffers.append(data)
            result.message_queue_offsets.append(i - 1)
            total += size
            result.status = GetMessageStatus.FOUND
        result.next_begin_offset = i
        if max_phy_pulling >= 0:
            # a consumer this far behind reads from disk: the master suggests the slave
            diff = self.commit_log.get_max_offset() - max_phy_pulling
            memory = _total_physical_memory() * cfg.access_message_in_memory_max_ratio // 100
            result.suggest_pulling_from_slave = diff > memory

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        return int(cq.get_max_offset_in_queue()) if cq is not None else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        # RocketMQ's findConsumeQueue creates a missing queue, so a queue never written
        # answers 0 there; it is not created here (a query must not make files), same answer
        cq = self.find_consume_queue(topic, queue_id, create=False)
        return int(cq.get_min_offset_in_queue()) if cq is not None else 0

    def get_commit_log_offset_in_queue(self, topic: str, queue_id: int, offset: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        unit = cq.get_unit(offset) if cq is not None else None
        return int(unit[0]) if unit is not None else 0

    def query_consume_queue(
        self, topic: str, queue_id: int, index: int, count: int
    ) -> tuple[int, int, list[tuple[int, int, int]]] | None:
        """(min offset, max offset, up to ``count`` units from ``index``) of an existing consume
        queue, each unit (commitlog offset, size, tags code); None when it does not exist."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if cq is None:
            return None
        units = []
        for i in range(index, index + max(0, count)):
            unit = cq.get_unit(i)
            if unit is None:
                break
            units.append(unit)
        return cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue(), units

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """The first queue offset whose store time is >= ``timestamp`` (binary search)."""

        def before(unit: tuple[int, int, int] | None) -> bool:
            ts = self.commit_log.pickup_store_timestamp(unit[0], unit[1]) if unit else -1
            return ts < timestamp

        return self._first_offset_not(topic, queue_id, before)

    def get_offset_in_queue_by_phy(self, topic: str, queue_id: int, phy: int) -> int:
        """The first queue offset whose record ends past commitlog offset ``phy``."""
        return self._first_offset_not(
            topic, queue_id, lambda unit: unit is not None and unit[0] + unit[1] <= phy
        )

    def _first_offset_not(
        self, topic: str, queue_id: int, before: Callable[[tuple[int, int, int] | None], bool]
    ) -> int:
        """The first queue offset whose unit is not ``before`` (a queue's units follow the
        commitlog's order: a binary search); 0 for a queue not on disk."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if cq is None:
            return 0
        lo, hi = cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue()
        while lo < hi:
            mid = (lo + hi) // 2
            if before(cq.get_unit(mid)):
                lo = mid + 1
            else:
                hi = mid
        return int(lo)

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if cq is None:
            return -1
        unit = cq.get_unit(cq.get_min_offset_in_queue())
        return self.commit_log.pickup_store_timestamp(unit[0], unit[1]) if unit else -1

    def get_message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        unit = cq.get_unit(offset) if cq is not None else None
        return self.commit_log.pickup_store_timestamp(unit[0], unit[1]) if unit else -1

    def check_in_disk_by_consume_offset(self, topic: str, queue_id: int, offset: int) -> bool:
        return False  # everything is memory-mapped; RocketMQ's "in memory" is the page cache

    def select_one_message_by_offset(self, commitlog_offset: int, size: int = 0) -> bytes | None:
        if size <= 0:
            head = self.commit_log.get_message(commitlog_offset, 4)
            if head is None:
                return None
            size = int.from_bytes(head, "big", signed=True)
            if size <= 0:
                return None
        return self.commit_log.get_message(commitlog_offset, size)

    def look_message_by_offset(self, commitlog_offset: int) -> MessageExt | None:
        data = self.select_one_message_by_offset(commitlog_offset)
        if data is None:
            return None
        return decode_message(data, check_crc=False)

    def query_message(
        self, topic: str, key: str, max_count: int, begin_ms: int, end_ms: int
    ) -> QueryMessageResult:
        result = QueryMessageResult()
        if self.index_service is None:
            return result
        found = self.index_service.query_offset(topic, key, max_count, begin_ms, end_ms)
        result.index_last_update_timestamp = found.index_last_update_timestamp
        result.index_last_update_phyoffset = found.index_last_update_phyoffset
        for phy in found.phy_offsets:
            data = self.select_one_message_by_offset(phy)
            if data is not None:
                result.message_buffer_list.append(data)
        return result

    def query_messages(
        self, topic: str, key: str, max_count: int, begin_ms: int, end_ms: int
    ) -> list[MessageExt]:
        """``query_message`` decoded to MessageExt objects."""
        result = self.query_message(topic, key, max_count, begin_ms, end_ms)
        return [decode_message(b, check_crc=False) for b in result.message_buffer_list]


#: collect_messages' status -> the store's (rocketq/_native/get_message.c, GM_*).
_WALK_STATUS = (
    GetMessageStatus.NO_MATCHED_MESSAGE,
    GetMessageStatus.FOUND,
    GetMessageStatus.MESSAGE_WAS_REMOVING,
    GetMessageStatus.OFFSET_FOUND_NULL,
)


@functools.cache
def _total_physical_memory() -> int:
    """StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 34
