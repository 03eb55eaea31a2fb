"""PopService: the broker's POP parts in one place (what PopMessageProcessor, AckMessageProcessor
and ChangeInvisibleTimeProcessor share in RocketMQ 5): the revive log writer, the in-flight
table, the reader, the long polling service and the revive service, and the ack and change
operations both processors and the revive service use.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, NamedTuple

from rocketq.broker.pop.consumer_order_info import ConsumerOrderInfoManager
from rocketq.broker.pop.inflight import PopInflightTable
from rocketq.broker.pop.pop_buffer import PopBufferMergeService
from rocketq.broker.pop.pop_long_polling import PopLongPollingService
from rocketq.broker.pop.pop_reader import PopReader
from rocketq.broker.pop.records import AckMsg, BatchAckMsg, PopCheckPoint, merge_key
from rocketq.broker.pop.revive import PopReviveService
from rocketq.broker.pop.revive_log import ReviveLog
from rocketq.common.extra_info import ExtraInfo
from rocketq.store.results import PutMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)

OFFSET_PERSIST_DELAY_S = 0.05


class PopService:
    def __init__(self, broker: PopContext) -> None:
        self.broker = broker
        self.revive_log = ReviveLog(broker)
        self.inflight = PopInflightTable()
        self.order_info = ConsumerOrderInfoManager(broker.config.store_path_root_dir)
        # off in controller mode: what the buffer holds lives in one master's memory, and a
        # new master must find every answered pop and ack in the replicated revive log
        self.buffer: PopBufferMergeService | None = (
            None
            if broker.config.enable_controller_mode
            else PopBufferMergeService(
                broker, self.inflight, self.write_check_point, self.note_offset_commit
            )
        )
        self.reader = PopReader(
            broker, self.inflight, self.append_check_point, self.order_info,
            self.note_offset_commit, self.schedule_unblock, self.buffer,
        )  # fmt: skip
        self._unblock_timers: dict[tuple[str, str, int], asyncio.TimerHandle] = {}
        self.long_polling = PopLongPollingService(broker.config)
        self.revive = PopReviveService(
            broker, self.inflight, self.revive_log.topic, self.note_offset_commit
        )
        self._persist_handle: asyncio.TimerHandle | None = None
        self._persist_task: asyncio.Task[None] | None = None
        #: the check points being put: the commitlog's end as each put began (its ck lies past)
        self._puts_in_flight: dict[int, int] = {}
        self._next_put = 0

    def start(self) -> None:
        if not self.order_info.load():
            log.info("no %s yet; starting empty", self.order_info.path)
        self.revive_log.ensure_topic()
        if self.buffer is not None:
            self.buffer.start()
        self.revive.start()

    async def shutdown(self) -> None:
        await self.long_polling.shutdown()
        if self.buffer is not None:  # its checkpoints written before the offsets persist
            await self.buffer.shutdown()
        await self.revive.shutdown()
        if self._persist_handle is not None:
            self._persist_handle.cancel()
        if self._persist_task is not None:
            await self._persist_task
        for timer in self._unblock_timers.values():
            timer.cancel()
        self.order_info.persist()

    def note_offset_commit(self) -> None:
        """A pop (or, in controller mode, a consumer's commit) moved a consume offset: persist
        the offsets within ``OFFSET_PERSIST_DELAY_S`` (not only every
        flushConsumerOffsetInterval), so a broker killed after a pop does not pop the same
        messages again as new ones after its restart."""
        if self._persist_handle is not None:
            return
        loop = asyncio.get_running_loop()
        self._persist_handle = loop.call_later(OFFSET_PERSIST_DELAY_S, self._persist_offsets)

    def _persist_offsets(self) -> None:
        self._persist_handle = None
        self._persist_task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(self._persist_now)
        )

    def _persist_now(self) -> None:
        """The offsets, then the order info (RocketMQ persists consumerOrderInfo.json every
        10 s; promptly here too, so a FIFO batch popped before a kill -9 stays blocked)."""
        self.broker.consumer_offset_manager.persist()
        self.order_info.persist()

    def stored(self, status: PutMessageStatus) -> bool:
        """Whether a pop or ack may be answered after its record's put. RocketMQ counts a
        flush or slave timeout as stored (AckMessageProcessor.handlePutMessageResult); in
        controller mode only PUT_OK counts (the record is on every in-sync replica), so a
        master that is deposed, or whose in-sync slave did not confirm, never answers a pop
        or an ack that a new master would not find."""
        if self.broker.config.enable_controller_mode:
            return status is PutMessageStatus.PUT_OK
        return status.is_ok

    def check_point_floor(self) -> int:
        """The lowest commitlog offset a check point still being put may lie at (the
        commitlog's end when none is): every pop whose commit the consumer offsets lack has
        its ck at or past it. A slave's metadata round takes it with the offsets
        (controller_mode/pop_offsets.py)."""
        end = self.broker.message_store.get_max_phy_offset()
        return min(self._puts_in_flight.values(), default=end)

    async def append_check_point(self, ck: PopCheckPoint, revive_qid: int) -> bool:
        """Put ``ck``; True when its pop may be answered. The caller commits the pop's offset
        on its return, in the same step of the loop (no await between): the put counts as in
        flight (:meth:`check_point_floor`) until then."""
        token = self._next_put
        self._next_put += 1
        self._puts_in_flight[token] = self.broker.message_store.get_max_phy_offset()
        try:
            return await self._append_check_point(ck, revive_qid)
        finally:
            del self._puts_in_flight[token]

    async def _append_check_point(self, ck: PopCheckPoint, revive_qid: int) -> bool:
        status = await self.revive_log.append(ck, revive_qid)
        if not self.stored(status):
            log.warning("pop checkpoint of %s@%d not written: %s", ck.topic, ck.queue_id, status)
            if status.is_ok:  # in the commitlog all the same (a flush or slave timeout)
                await self._cancel_check_point(ck, revive_qid)
            return False
        return True

    async def _cancel_check_point(self, ck: PopCheckPoint, revive_qid: int) -> None:
        """A check point stored but not confirmed by the in-sync replicas: its pop is not
        answered, nothing is committed, and the next pop serves the same messages under a
        check point of its own, so this one must never revive them (an acknowledged copy
        would come back). Its offsets count as acked here at once (the revive consults the
        in-flight table), and an ack of them all follows it in the revive log, for a replica
        that takes over holding it, marked as a cancel: that replica's pop offsets do not count
        the pop as answered (controller_mode/pop_offsets.py), so its messages are served again."""
        offsets = [ck.ack_offset_by_index(i) for i in range(ck.num)]
        key = ck.merge_key()
        for offset in offsets:
            self.inflight.mark_acked(key, offset)
        record = _ack_record(_ack_of(ck), offsets)
        status = await self.revive_log.append(  # not waited for: this pop is late already
            record, revive_qid, ack_deliver_ms=ck.revive_time, wait=False, cancel=True
        )
        if not status.is_ok:
            log.warning(
                "cancel of pop checkpoint %s@%d not written: %s", ck.topic, ck.queue_id, status
            )

    async def write_check_point(self, ck: PopCheckPoint, revive_qid: int, acked: list[int]) -> bool:
        """A checkpoint the buffer held too long: the ck, then one ack of ``acked``."""
        if not await self.append_check_point(ck, revive_qid):
            return False
        if acked:
            record = _ack_record(_ack_of(ck), acked)
            status = await self.revive_log.append(record, revive_qid, ack_deliver_ms=ck.revive_time)
            if not status.is_ok:
                log.warning("pop ack of %s@%d not written: %s", ck.topic, ck.queue_id, status)
        return True

    async def ack(
        self, group: str, real_topic: str, handle: ExtraInfo, offsets: list[int]
    ) -> list[int] | PutMessageStatus:
        """Ack ``offsets`` of the checkpoint ``handle`` names: the in-flight table first (the
        offsets whose handle is still live), then one ack or bAck record for them. The
        offsets acked, or the put status of a record not stored (:meth:`stored`; the
        offsets stay un-acked, so the ack can be retried)."""
        done = self.ack_now(group, real_topic, handle, offsets)
        if isinstance(done, PendingAck):
            return await self.write_ack(done)
        return done

    def ack_now(
        self, group: str, real_topic: str, handle: ExtraInfo, offsets: list[int]
    ) -> list[int] | PendingAck:
        """The part of :meth:`ack` that needs no write: the offsets acked when nothing is to
        be written (all repeated, or merged into the checkpoint the pop buffer holds), else
        the record still to write (:meth:`write_ack`). A batch ack whose checkpoints are all
        held is answered on the connection's reader, without a task."""
        key = merge_key(
            real_topic,
            group,
            handle.queue_id,
            handle.ck_queue_offset,
            handle.pop_time,
            handle.broker_name or self.broker.config.broker_name,
        )  # fmt: skip  (AckMsg.merge_key, without the record unless one is written)
        buffer = self.buffer
        held = buffer is not None and buffer.holds(key)
        # a held checkpoint's acks are recorded in the in-flight table only when it is not
        # acked in full by them (else the buffer forgets them at once: a set built for nothing)
        fresh, repeated = self.inflight.on_ack(
            group, real_topic, handle.queue_id, offsets, handle.pop_time, key,
            handle.next_visible_time, handle.ck_queue_offset, record=not held,
        )  # fmt: skip
        if not fresh:
            return repeated
        if held:
            assert buffer is not None
            if not buffer.merge(key, fresh):
                self.inflight.mark_acked_offsets(key, fresh)
            return fresh + repeated  # merged into its held checkpoint: nothing to write
        ack = AckMsg(
            ack_offset=-1,
            start_offset=handle.ck_queue_offset,
            consumer_group=group,
            topic=real_topic,
            queue_id=handle.queue_id,
            pop_time=handle.pop_time,
            broker_name=handle.broker_name,
        )
        return PendingAck(_ack_record(ack, fresh), key, fresh, repeated, handle)

    def ack_held_pop(
        self, group: str, real_topic: str, queue_id: int, start: int, n: int, pop_time: int,
        broker_name: str,
    ) -> bool:  # fmt: skip
        """:meth:`ack_now`'s common case in one call: a whole pop (offsets ``start`` to
        ``start + n - 1``, in the queue, with its live handle) acked at once while the pop
        buffer holds its checkpoint: the in-flight span marked, the checkpoint resolved (never
        written) and the queue's offset committed past it. False, with nothing changed, for
        anything else (the caller takes :meth:`ack_now`)."""
        buffer = self.buffer
        if buffer is None:
            return False
        # AckMsg.merge_key, as ack_now builds it
        entry = buffer.held_whole(f"{real_topic}{group}{queue_id}{start}{pop_time}{broker_name}", n)
        if entry is None:
            return False
        if not self.inflight.ack_whole_span(group, real_topic, queue_id, start, n, pop_time):
            return False
        buffer.merged(entry)
        return True

    async def write_ack(self, pending: PendingAck) -> list[int] | PutMessageStatus:
        """:meth:`ack`'s record written; the in-flight marks undone when it is not stored."""
        handle, record = pending.handle, pending.record
        status = await self.revive_log.append(
            record, handle.revive_qid, ack_deliver_ms=handle.next_visible_time
        )
        if not self.stored(status):
            log.warning("pop ack of %s@%d not written: %s", record.topic, handle.queue_id, status)
            self.inflight.undo_ack(
                record.consumer_group, record.topic, handle.queue_id, pending.fresh, pending.key
            )
            return status
        return pending.fresh + pending.repeated

    async def change_invisible_time(
        self, group: str, real_topic: str, handle: ExtraInfo, invisible_time: int
    ) -> int | None:
        """ChangeInvisibleTimeProcessor.appendCheckPointThenAckOrigin: a new one-message
        checkpoint from now, then an ack of the old one; the new popTime (None: refused).

        A handle is told apart from the one it replaces by its popTime, so the new popTime is
        at least the old one + 1 ms: a change answered within the millisecond of its pop
        (RocketMQ takes ``now`` as it is) would otherwise leave the old handle live."""
        now = max(self.broker.message_store.now_ms(), handle.pop_time + 1)
        offset = handle.queue_offset
        key = (group, real_topic, handle.queue_id, offset)
        if not self.inflight.replace(key, handle.pop_time, now, now + invisible_time):
            return None
        ack = AckMsg(
            ack_offset=offset,
            start_offset=handle.ck_queue_offset,
            consumer_group=group,
            topic=real_topic,
            queue_id=handle.queue_id,
            pop_time=handle.pop_time,
            broker_name=handle.broker_name,
        )
        old_key = ack.merge_key(self.broker.config.broker_name)
        self.inflight.mark_acked(old_key, offset)  # before the old checkpoint can be revived
        ck = PopCheckPoint(
            start_offset=offset,
            pop_time=now,
            invisible_time=invisible_time,
            num=1,
            queue_id=handle.queue_id,
            topic=real_topic,
            cid=group,
            broker_name=handle.broker_name,
            queue_offset_diff=[0],
        )
        if not await self.append_check_point(ck, handle.revive_qid):
            self.inflight.undo_replace(key, handle.pop_time, now)
            self.inflight.unmark_acked(old_key, offset)
            return None
        if self.buffer is None or not self.buffer.ack(old_key, [offset]):
            await self.revive_log.append(
                ack, handle.revive_qid, ack_deliver_ms=handle.next_visible_time
            )
        return now

    # ------------------------------------------------------------------ FIFO (orderly)

    def schedule_unblock(self, topic: str, group: str, queue_id: int) -> None:
        """ConsumerOrderInfoLockManager: wake the pops parked on a FIFO queue when its block
        ends (the batch's invisible time over) as well as when it is acked."""
        key = (topic, group, queue_id)
        old = self._unblock_timers.pop(key, None)
        if old is not None:
            old.cancel()
        info = self.order_info.get(topic, group, queue_id)
        now = self.broker.message_store.now_ms()
        free_at = info.lock_free_timestamp(now) if info is not None else None
        if free_at is None or free_at <= now:
            return
        loop = asyncio.get_running_loop()
        self._unblock_timers[key] = loop.call_later(
            (free_at - now) / 1000, self._unblocked, topic, group, queue_id
        )

    def _unblocked(self, topic: str, group: str, queue_id: int) -> None:
        self._unblock_timers.pop((topic, group, queue_id), None)
        self.long_polling.notify_group(topic, group)

    async def ack_orderly(
        self, group: str, topic: str, queue_id: int, offset: int, pop_time: int
    ) -> int:
        """AckMessageProcessor.ackOrderly under the queue's lock: the offset committed (>= 0),
        -1 illegal, -2 another pop's handle, -3 already committed past it."""
        if offset < self.broker.consumer_offset_manager.query_offset(group, topic, queue_id):
            return -3
        async with self.reader.queue_lock(group, topic, queue_id):
            offsets = self.broker.consumer_offset_manager
            if offset < offsets.query_offset(group, topic, queue_id):
                return -3
            next_offset = self.order_info.commit_and_next(topic, group, queue_id, offset, pop_time)
            if next_offset < 0:
                return next_offset
            offsets.commit_offset("ackOrderly", group, topic, queue_id, next_offset)
            self.note_offset_commit()
            if not self.order_info.check_block(None, topic, group, queue_id, 0):
                self.long_polling.notify_group(topic, group)
            return next_offset

    async def change_invisible_time_orderly(
        self, group: str, topic: str, handle: ExtraInfo, invisible_time: int
    ) -> int | None:
        """ChangeInvisibleTimeProcessor.processChangeInvisibleTimeForOrder: the message's next
        visible time moves to now + ``invisible_time``; the new handle keeps the popTime and
        has invisibleTime = nextVisibleTime - popTime (returned; None: refused)."""
        queue_id, offset = handle.queue_id, handle.queue_offset
        async with self.reader.queue_lock(group, topic, queue_id):
            if offset < self.broker.consumer_offset_manager.query_offset(group, topic, queue_id):
                return None
            next_visible = self.broker.message_store.now_ms() + invisible_time
            info = self.order_info.update_next_visible_time(
                topic, group, queue_id, offset, handle.pop_time, next_visible
            )
            if info is None:
                return None
        self.note_offset_commit()
        self.schedule_unblock(topic, group, queue_id)
        return next_visible - handle.pop_time


class PendingAck(NamedTuple):
    """An ack :meth:`PopService.ack_now` marked in the in-flight table whose record is still
    to be written."""

    record: AckMsg
    key: str  # the checkpoint's merge key
    fresh: list[int]
    repeated: list[int]
    handle: ExtraInfo


_ACK_FIELDS = (
    "ack_offset",
    "start_offset",
    "consumer_group",
    "topic",
    "queue_id",
    "pop_time",
    "broker_name",
)


def _ack_of(ck: PopCheckPoint) -> AckMsg:
    """An ack of some of ``ck``'s offsets (the offsets go in the record)."""
    return AckMsg(
        ack_offset=-1,
        start_offset=ck.start_offset,
        consumer_group=ck.cid,
        topic=ck.topic,
        queue_id=ck.queue_id,
        pop_time=ck.pop_time,
        broker_name=ck.broker_name,
    )


def _ack_record(ack: AckMsg, offsets: list[int]) -> AckMsg:
    """``ack`` for one offset, else a bAck (BatchAckMsg) of them all."""
    if len(offsets) == 1:
        ack.ack_offset = offsets[0]
        return ack
    fields = {f: getattr(ack, f) for f in _ACK_FIELDS}
    return BatchAckMsg(**fields, ack_offset_list=offsets)
