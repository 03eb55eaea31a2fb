"""PopReader: one pop over a (group, topic)'s queues and its POP retry topic
(PopMessageProcessor.popMsgFromQueue / getPopOffset / getInitOffset).

For each queue, from a random one on: the start offset is the group's committed offset, or,
for a new group, the init rule (MIN and retry topics: the min offset; MAX: 0 while the queue is
young, ``initPopOffsetByCheckMsgInMem``, else max offset - 1), committed at once. Up to the rest
of the batch is read, filtered. A read that found messages writes a checkpoint (PopCheckPoint:
start offset, count, offset diffs) to the revive topic, then commits the offset past them; a
read whose messages all failed the filter commits past them without a checkpoint. A queue that
another pop is reading is skipped (RocketMQ's QueueLockManager.tryLock; an orderly ack waits
for the lock instead).

A FIFO pop (``order``, reviveQid 999) reads no retry topic and skips a queue whose last FIFO
batch is not done (``ConsumerOrderInfoManager.check_block``); what it finds becomes the queue's
order info instead of a checkpoint, and the offset is committed at the batch's *start*: acks
move it (PopMessageProcessor.popMsgFromQueue's ``isOrder`` branch).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.pop.consumer_order_info import (
    ConsumerOrderInfoManager,
    build_order_count_info,
)
from rocketq.broker.pop.inflight import PopInflightTable
from rocketq.broker.pop.pop_batch import PopBatch
from rocketq.broker.pop.pop_batch import read_in_memory as _read_in_memory
from rocketq.broker.pop.pop_buffer import PopBufferMergeService
from rocketq.broker.pop.pop_queues import PopStep, add_steps
from rocketq.broker.pop.pop_queues import rand as _rand
from rocketq.broker.pop.records import PopCheckPoint
from rocketq.common.extra_info import (
    POP_ORDER_REVIVE_QUEUE,
    PROPERTY_POP_CK,
    build_extra_info,
    build_pop_retry_topic,
    topic_mark,
)
from rocketq.common.message_decoder import decode_message, encode_message
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX
from rocketq.remoting.protocol.pop_headers import INIT_MODE_MIN
from rocketq.store.results import GetMessageResult, GetMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

POP_LOCAL_HOST = "127.0.0.1"
HOT_READ_UNITS = 32  # read on the loop within this many units of the queue's end (the pull's)
# a queue's rest count (messages after the pop's read offset), when the batch is full before
# the pop reaches it, is taken from the last pop that counted or read it within this many ms:
# restNum is a hint (a send may land meanwhile in RocketMQ too), and a count costs two offset
# reads and the buffer's read offset
REST_CACHE_MS = 10
REST_CACHE_SIZE = 4096  # queues whose counts are kept; emptied when full


class PopReader:
    def __init__(
        self,
        broker: PopContext,
        inflight: PopInflightTable,
        append_check_point: Callable[[PopCheckPoint, int], Awaitable[bool]],
        order_info: ConsumerOrderInfoManager,
        on_commit: Callable[[], None] = lambda: None,
        on_order_pop: Callable[[str, str, int], None] = lambda t, g, q: None,
        buffer: PopBufferMergeService | None = None,
    ) -> None:
        self.broker = broker
        self.inflight = inflight
        self.append_check_point = append_check_point
        self.order_info = order_info
        self.on_commit = on_commit
        self.on_order_pop = on_order_pop
        self.buffer = buffer
        self._locks: dict[tuple[str, str, int], asyncio.Lock] = {}
        self._rests: dict[tuple[str, str, int], tuple[int, int]] = {}  # (counted at ms, rest)

    def queue_lock(self, group: str, topic: str, queue_id: int) -> asyncio.Lock:
        """QueueLockManager's lock of (topic, group, queue)."""
        key = (group, topic, queue_id)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def pop(
        self,
        group: str,
        topic: str,
        queue_id: int,
        max_nums: int,
        invisible_time: int,
        init_mode: int,
        message_filter: ExpressionMessageFilter,
        retry_filter: ExpressionMessageFilter,
        order: bool = False,
        attempt_id: str | None = None,
    ) -> PopBatch:
        started = self.start_pop(
            group, topic, queue_id, max_nums, invisible_time, init_mode, message_filter,
            retry_filter, order, attempt_id,
        )  # fmt: skip
        return started if isinstance(started, PopBatch) else await started

    def start_pop(
        self,
        group: str,
        topic: str,
        queue_id: int,
        max_nums: int,
        invisible_time: int,
        init_mode: int,
        message_filter: ExpressionMessageFilter,
        retry_filter: ExpressionMessageFilter,
        order: bool = False,
        attempt_id: str | None = None,
    ) -> PopBatch | Coroutine[Any, Any, PopBatch]:
        """The pop, on the loop as far as it goes without waiting: the batch, or a coroutine
        that finishes it from the first queue whose read must leave the loop (a backlog off
        the page cache) or whose checkpoint must be written before it commits (no pop
        buffer, or an invisible time too short for it). The queues before it are done."""
        cfg = self.broker.config
        pop_time = self.broker.message_store.now_ms()
        steps: list[PopStep] = []
        tcm = self.broker.topic_config_manager
        if order:  # FIFO never reads the retry topic
            batch = PopBatch(pop_time, invisible_time, POP_ORDER_REVIVE_QUEUE, order=True)
            batch.attempt_id = attempt_id
            add_steps(steps, tcm, topic, queue_id, message_filter)
        else:
            batch = PopBatch(pop_time, invisible_time, int(_rand() * cfg.revive_queue_num))
            retry = build_pop_retry_topic(topic, group, cfg.enable_retry_topic_v2)
            retry_first = int(_rand() * 100) < cfg.pop_from_retry_probability
            if retry_first:
                add_steps(steps, tcm, retry, -1, retry_filter)
            add_steps(steps, tcm, topic, queue_id, message_filter)
            if not retry_first:
                add_steps(steps, tcm, retry, -1, retry_filter)
        # without a buffer that takes it, each checkpoint is written before its commit
        waits = not order and (self.buffer is None or not self.buffer.wants(invisible_time))
        for i, (t, qid, f) in enumerate(steps):
            if batch.count >= max_nums:
                batch.rest_num += self.rest_count(group, t, qid, pop_time)
            elif waits or not self._pop_queue_now(
                batch, group, t, qid, max_nums, init_mode, f, topic
            ):
                return self._pop_steps(batch, steps[i:], group, max_nums, init_mode, topic)
        return batch

    async def _pop_steps(
        self,
        batch: PopBatch,
        steps: list[PopStep],
        group: str,
        max_nums: int,
        init_mode: int,
        origin_topic: str,
    ) -> PopBatch:
        for topic, qid, message_filter in steps:
            if batch.count >= max_nums:
                batch.rest_num += self.rest_count(group, topic, qid, batch.pop_time)
                continue
            await self._pop_queue(
                batch, group, topic, qid, max_nums, init_mode, message_filter, origin_topic
            )
        return batch

    def rest_count(self, group: str, topic: str, qid: int, now_ms: int) -> int:
        """The messages of a queue after the group's read offset (:data:`REST_CACHE_MS`)."""
        key = (group, topic, qid)
        cached = self._rests.get(key)
        if cached is not None and 0 <= now_ms - cached[0] < REST_CACHE_MS:
            return cached[1]
        if len(self._rests) >= REST_CACHE_SIZE:
            self._rests.clear()
        rest = self._rests[key] = now_ms, self._count_rest(group, topic, qid)
        return rest[1]

    def _count_rest(self, group: str, topic: str, qid: int) -> int:
        store = self.broker.message_store
        committed = self.broker.consumer_offset_manager.query_offset(group, topic, qid)
        if self.buffer is not None and committed >= 0:  # past the checkpoints it holds
            committed = self.buffer.read_offset(group, topic, qid, committed)
        return max(0, store.get_max_offset_in_queue(topic, qid) - max(committed, 0))

    def pop_offset(
        self, group: str, topic: str, qid: int, init_mode: int, *, commit: bool = True
    ) -> int:
        """PopMessageProcessor.getPopOffset / getInitOffset (a pop commits the init offset)."""
        offsets = self.broker.consumer_offset_manager
        offset = offsets.query_offset(group, topic, qid)
        if offset >= 0:
            if self.buffer is not None:  # past the checkpoints the buffer holds
                return self.buffer.read_offset(group, topic, qid, offset)
            return offset
        store = self.broker.message_store
        min_offset = store.get_min_offset_in_queue(topic, qid)
        if init_mode == INIT_MODE_MIN or topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            offset = min_offset
        else:
            offset = max(store.get_max_offset_in_queue(topic, qid) - 1, 0)
            in_mem = not store.check_in_disk_by_consume_offset(topic, qid, 0)
            if (
                self.broker.config.init_pop_offset_by_check_msg_in_mem
                and min_offset <= 0
                and in_mem
            ):
                offset = 0
        if commit:
            offsets.commit_offset(POP_LOCAL_HOST, group, topic, qid, offset)
        return offset

    async def _pop_queue(
        self,
        batch: PopBatch,
        group: str,
        topic: str,
        qid: int,
        max_nums: int,
        init_mode: int,
        message_filter: ExpressionMessageFilter,
        origin_topic: str,
    ) -> None:
        lock = self.queue_lock(group, topic, qid)
        if lock.locked():
            return
        async with lock:
            if batch.order and self.order_info.check_block(
                batch.attempt_id, topic, group, qid, batch.invisible_time
            ):
                return
            store = self.broker.message_store
            offset = self.pop_offset(group, topic, qid, init_mode)
            want = max_nums - batch.count
            read = self._read_now(group, topic, qid, offset, want, message_filter, origin_topic)
            if read is None:  # a backlog may have to come from disk
                result = await asyncio.to_thread(
                    store.get_message, group, topic, qid, offset, want, message_filter
                )
                read = result, list(result.message_queue_offsets)
            ck = self._took(batch, group, topic, qid, offset, *read, origin_topic)
            if ck is None:
                return
            if not await self.append_check_point(ck, batch.revive_qid):
                return  # nothing committed: the same messages are popped again
            self._commit_after_write(group, topic, qid, read[0].next_begin_offset)
            self._popped(batch, group, topic, qid, offset, *read, origin_topic)

    def _pop_queue_now(
        self,
        batch: PopBatch,
        group: str,
        topic: str,
        qid: int,
        max_nums: int,
        init_mode: int,
        message_filter: ExpressionMessageFilter,
        origin_topic: str,
    ) -> bool:
        """:meth:`_pop_queue` when nothing in it waits (the caller knows no checkpoint is
        written): False, with nothing done but the init offset's commit, when the read must
        leave the loop. No other task runs meanwhile, so the queue's lock is not taken."""
        if self.queue_lock(group, topic, qid).locked():
            return True
        if batch.order and self.order_info.check_block(
            batch.attempt_id, topic, group, qid, batch.invisible_time
        ):
            return True
        offset = self.pop_offset(group, topic, qid, init_mode)
        want = max_nums - batch.count
        read: tuple[GetMessageResult, list[int]] | None = None
        if topic == origin_topic:
            store = self.broker.message_store
            found = _read_in_memory(store, topic, qid, offset, want, message_filter)
            if found is not None:
                if not batch.order and found.status is GetMessageStatus.FOUND:
                    self._took_held(batch, group, topic, qid, offset, found)
                    return True
                read = found, list(range(offset, found.next_begin_offset))
        if read is None:
            read = self._read_hot(group, topic, qid, offset, want, message_filter)
        if read is None:
            return False
        ck = self._took(batch, group, topic, qid, offset, *read, origin_topic)
        assert ck is None, "a checkpoint to write on the loop's path"
        return True

    def _read_now(
        self,
        group: str,
        topic: str,
        qid: int,
        offset: int,
        want: int,
        message_filter: ExpressionMessageFilter,
        origin_topic: str,
    ) -> tuple[GetMessageResult, list[int]] | None:
        """The read and its queue offsets when it can be made on the loop, else None."""
        store = self.broker.message_store
        if topic == origin_topic:
            found = _read_in_memory(store, topic, qid, offset, want, message_filter)
            if found is not None:
                return found, list(range(offset, found.next_begin_offset))
        return self._read_hot(group, topic, qid, offset, want, message_filter)

    def _read_hot(
        self,
        group: str,
        topic: str,
        qid: int,
        offset: int,
        want: int,
        message_filter: ExpressionMessageFilter,
    ) -> tuple[GetMessageResult, list[int]] | None:
        """:meth:`_read_now` past its read in memory."""
        store = self.broker.message_store
        if store.get_max_offset_in_queue(topic, qid) - offset <= HOT_READ_UNITS:
            # the queue's newest records, just written: in the page cache (as the pull)
            result = store.get_message(group, topic, qid, offset, want, message_filter)
            return result, list(result.message_queue_offsets)
        return None

    def _took(
        self,
        batch: PopBatch,
        group: str,
        topic: str,
        qid: int,
        offset: int,
        result: GetMessageResult,
        queue_offsets: list[int],
        origin_topic: str,
    ) -> PopCheckPoint | None:
        """What a read found: nothing (the offset moved past what was filtered out), a FIFO
        batch, or a checkpoint held by the pop buffer (all done: None); else the checkpoint
        to write before :meth:`_commit_after_write` and :meth:`_popped`."""
        rest = max(0, result.max_offset - result.next_begin_offset)
        batch.rest_num += rest
        self._rests[(group, topic, qid)] = batch.pop_time, rest  # fresh for the next pops
        buffer = None if batch.order else self.buffer
        if result.status is not GetMessageStatus.FOUND or not result.message_count:
            if result.next_begin_offset > offset and result.status in (
                GetMessageStatus.NO_MATCHED_MESSAGE,
                GetMessageStatus.OFFSET_TOO_SMALL,
                GetMessageStatus.OFFSET_OVERFLOW_BADLY,
            ):
                if buffer is not None:
                    buffer.skip_to(group, topic, qid, result.next_begin_offset)
                else:
                    self.broker.consumer_offset_manager.commit_offset(
                        POP_LOCAL_HOST, group, topic, qid, result.next_begin_offset
                    )
            return None
        if batch.order:
            self._found_orderly(batch, group, topic, qid, offset, queue_offsets)
            batch.add_records(result)
            return None
        num = len(queue_offsets)
        if num and queue_offsets[0] == offset and queue_offsets[-1] == offset + num - 1:
            diffs = list(range(num))  # a read that took every unit it walked (ascending)
        else:
            diffs = [o - offset for o in queue_offsets]
        ck = PopCheckPoint(
            start_offset=offset,
            pop_time=batch.pop_time,
            invisible_time=batch.invisible_time,
            num=num,
            queue_id=qid,
            topic=topic,
            cid=group,
            broker_name=self.broker.config.broker_name,
            queue_offset_diff=diffs,
        )
        if buffer is None or not buffer.wants(batch.invisible_time):
            return ck
        buffer.add(ck, batch.revive_qid, result.next_begin_offset)  # commits what is safe
        self._popped(batch, group, topic, qid, offset, result, queue_offsets, origin_topic)
        return None

    def _took_held(
        self,
        batch: PopBatch,
        group: str,
        topic: str,
        qid: int,
        offset: int,
        found: GetMessageResult,
    ) -> None:
        """:meth:`_took` and :meth:`_popped` of the common read, flat: a normal pop's read
        in memory (``_read_in_memory``: every unit from ``offset`` on taken) of its own topic,
        whose checkpoint the pop buffer holds. Same checkpoint, buffer entry, in-flight span,
        rest count and answer infos (tests/broker/pop/test_pop_took_held.py compares them)."""
        buffer = self.buffer
        assert buffer is not None, "start_pop's caller holds a buffer that wants it"
        end = found.next_begin_offset
        rest = found.max_offset - end
        if rest < 0:
            rest = 0
        pop_time = batch.pop_time
        batch.rest_num += rest
        self._rests[(group, topic, qid)] = pop_time, rest  # fresh for the next pops
        num = end - offset
        bn = self.broker.config.broker_name
        ck = PopCheckPoint(
            offset, pop_time, batch.invisible_time, num, qid, topic, group, bn, list(range(num))
        )
        # PopCheckPoint.merge_key, inline
        buffer.hold(ck, f"{topic}{group}{qid}{offset}{pop_time}{bn}", batch.revive_qid, end)
        offsets = list(range(offset, end))
        self.inflight.on_pop_run(
            group, topic, qid, offset, end, pop_time, pop_time + batch.invisible_time, offsets
        )
        batch.entries.append((topic, qid, offset, offsets))
        if found.body is not None:
            batch.buffers.append(found.body)
            batch.count += num
        else:
            batch.add_records(found)

    def _commit_after_write(self, group: str, topic: str, qid: int, next_offset: int) -> None:
        if self.buffer is not None:
            self.buffer.skip_to(group, topic, qid, next_offset)
        else:
            self.broker.consumer_offset_manager.commit_offset(
                POP_LOCAL_HOST, group, topic, qid, next_offset
            )
            self.on_commit()

    def _popped(
        self,
        batch: PopBatch,
        group: str,
        topic: str,
        qid: int,
        offset: int,
        result: GetMessageResult,
        queue_offsets: list[int],
        origin_topic: str,
    ) -> None:
        """A checkpointed read's messages: in flight, in the answer's infos and records."""
        self.inflight.on_pop(
            group, topic, qid, queue_offsets, batch.pop_time, batch.pop_time + batch.invisible_time
        )
        batch.entries.append((topic, qid, offset, queue_offsets))
        if topic == origin_topic:
            batch.add_records(result)
            return
        for buf in result.message_buffers:  # a retry message goes back under its topic
            msg = decode_message(buf, check_crc=False)
            msg.properties.setdefault(
                PROPERTY_POP_CK,
                build_extra_info(
                    offset, batch.pop_time, batch.invisible_time, batch.revive_qid, topic,
                    self.broker.config.broker_name, qid, msg.queue_offset,
                ),
            )  # fmt: skip
            msg.topic = origin_topic
            batch.buffers.append(bytes(encode_message(msg)))
            batch.count += 1

    def _found_orderly(
        self, batch: PopBatch, group: str, topic: str, qid: int, offset: int, offsets: list[int]
    ) -> None:
        """The batch becomes the queue's order info; the offset stays at its start."""
        counts, smallest = self.order_info.update(
            batch.attempt_id, topic, group, qid, batch.pop_time, batch.invisible_time, offsets
        )
        self.broker.consumer_offset_manager.commit_offset(POP_LOCAL_HOST, group, topic, qid, offset)
        self.on_commit()
        self.on_order_pop(topic, group, qid)
        batch.entries.append((topic, qid, offset, offsets))
        batch.order_count_info.append(
            build_order_count_info(topic_mark(topic), qid, counts, smallest)
        )
