"""The message search by topic and time range (rocketmq-dashboard's queryMessageByPage): every
queue of every broker of the topic, newest first, a page at a time, with the count found.

Theory of operation: each queue's range is [first offset stored at or after ``begin``, first
offset stored at or after ``end``) (SEARCH_OFFSET_BY_TIMESTAMP, so the count found is the sum of
the ranges, read without reading a message). A page is a k-way merge of the queues read
backwards from a cursor (one end offset per queue, exclusive) by store time, newest first;
the next page starts from the offsets the merge stopped at, so no page reads what an earlier
page showed, and a deep page costs what the first one does. The cursor travels in the page's
links (``offsets.join('.')`` in the order of ``queue_ranges``); "previous" keeps the cursors
of the pages before it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from rocketq.admin import AsyncAdminClient
from rocketq.common.message import MessageExt, MessageQueue

PAGE_SIZE = 20
#: messages read from a queue at a time while merging (one round trip per message)
READ_CHUNK = 8


@dataclass(frozen=True, slots=True)
class QueueRange:
    mq: MessageQueue
    start: int  # first offset stored at or after begin
    stop: int  # first offset stored at or after end (exclusive)


@dataclass(frozen=True, slots=True)
class SearchPage:
    messages: list[MessageExt]
    total: int  # messages in the time range over every queue
    first: int  # 0-based position of messages[0] among them
    cursor: str  # where this page started
    next_cursor: str | None  # None: this is the last page


async def queue_ranges(
    admin: AsyncAdminClient, topic: str, begin_ms: int | None, end_ms: int | None
) -> list[QueueRange]:
    """Each queue's offsets stored in [begin_ms, end_ms) (None: open), by broker and queue id."""
    stats = await admin.examine_topic_stats(topic)
    ranges: list[QueueRange] = []
    for mq_data, off in sorted(
        stats.offset_table.items(), key=lambda kv: (kv[0].broker_name, kv[0].queue_id)
    ):
        mq = MessageQueue(mq_data.topic, mq_data.broker_name, mq_data.queue_id)
        start = off.min_offset if begin_ms is None else await admin.search_offset(mq, begin_ms)
        stop = off.max_offset if end_ms is None else await admin.search_offset(mq, end_ms)
        start = max(start, off.min_offset)
        ranges.append(QueueRange(mq, start, max(start, min(stop, off.max_offset))))
    return ranges


def encode_cursor(ends: list[int]) -> str:
    return ".".join(str(e) for e in ends)


def decode_cursor(text: str, ranges: list[QueueRange]) -> list[int]:
    """The cursor's end offsets; the newest end of every queue for an empty or stale one (the
    topic's queues changed since the link was made)."""
    newest = [r.stop for r in ranges]
    parts = text.split(".") if text else []
    if len(parts) != len(ranges) or not all(p.isdigit() for p in parts):
        return newest
    ends = [int(p) for p in parts]
    if any(not r.start <= e <= r.stop for r, e in zip(ranges, ends, strict=True)):
        return newest
    return ends


class _Reader:
    """One queue read backwards from its end offset, a chunk at a time, newest first."""

    def __init__(self, admin: AsyncAdminClient, queue: QueueRange, end: int) -> None:
        self.admin, self.queue, self.cursor = admin, queue, end
        self.buffer: deque[MessageExt] = deque()

    async def fill(self) -> None:
        if self.buffer or self.cursor <= self.queue.start:
            return
        low = max(self.queue.start, self.cursor - READ_CHUNK)
        chunk = await self.admin.messages_of_queue(self.queue.mq, low, self.cursor - low)
        self.cursor = low
        self.buffer.extend(reversed(chunk))

    def head_key(self) -> tuple[int, int] | None:
        """Store time, then commit log position (the store's order within a millisecond)."""
        if not self.buffer:
            return None
        return self.buffer[0].store_timestamp, self.buffer[0].commitlog_offset


async def search_page(
    admin: AsyncAdminClient, ranges: list[QueueRange], cursor: str, size: int = PAGE_SIZE
) -> tuple[list[MessageExt], str | None]:
    """The ``size`` newest messages before ``cursor``, and the cursor of the page after."""
    ends = decode_cursor(cursor, ranges)
    readers = [_Reader(admin, r, e) for r, e in zip(ranges, ends, strict=True)]
    taken = list(ends)
    found: list[MessageExt] = []
    await asyncio.gather(*(r.fill() for r in readers))
    while len(found) < size:
        await asyncio.gather(*(r.fill() for r in readers))
        keyed = [(k, i) for i, r in enumerate(readers) if (k := r.head_key()) is not None]
        if not keyed:
            break
        _, best = max(keyed)
        msg = readers[best].buffer.popleft()
        found.append(msg)
        taken[best] = msg.queue_offset
    more = any(t > r.start for t, r in zip(taken, ranges, strict=True))
    return found, encode_cursor(taken) if more else None


async def search_topic(
    admin: AsyncAdminClient,
    topic: str,
    begin_ms: int | None,
    end_ms: int | None,
    cursor: str = "",
    page_number: int = 1,
) -> SearchPage:
    ranges = await queue_ranges(admin, topic, begin_ms, end_ms)
    start = encode_cursor(decode_cursor(cursor, ranges))
    found, next_cursor = await search_page(admin, ranges, start)
    return SearchPage(
        messages=found,
        total=sum(r.stop - r.start for r in ranges),
        first=(page_number - 1) * PAGE_SIZE,
        cursor=start,
        next_cursor=next_cursor,
    )
