"""PopReviveService: brings un-acked popped messages back (RocketMQ 5's PopReviveService).

Every ``reviveInterval`` (sooner when a checkpoint already read falls due before then) each of
the ``reviveQueueNum`` revive queues is read on from its position: a ``ck`` record becomes a
pending checkpoint, an ``ack``/``bAck`` record sets its checkpoint's bits (or, read before its
checkpoint, waits up to ``reviveAckWaitMs``). A pending checkpoint is due once its revive time
(popTime + invisibleTime) passed and every ack that can exist for it is known:

* popped since this broker started: the in-flight table has every ack at once;
* popped before (a restart, a kill -9, another master): its acks are timer messages due at the
  revive time, so it waits until the timer has delivered that slot and the next one
  (``curr_read_time_ms``) and the store has dispatched them, then reads on. "Dispatched" means
  up to the commitlog's end as it was when the read time was sampled, not up to the confirm
  offset: in controller mode the consume queues stop at the confirm offset, so while an
  in-sync slave lags, the acks the timer has just delivered sit undispatched beyond it, and a
  checkpoint read before them would be revived though acknowledged (``_settled_time``).

A due checkpoint of an earlier term (popped before this service started) revives only what
no later checkpoint of the same queue covers (``supersede.py``): the later one revives what
of it is not acknowledged. In controller mode nothing is revived until the new master's pop
offsets are past the old master's pops (:meth:`PopReviveService.open`, from the role
switch), so this term's pops are known from where they began.

A due checkpoint's un-acked messages are read from their queue and put to the POP retry topic
(queue 0, reconsumeTimes + 1, ``1ST_POP_TIME`` on the first retry, born host the broker), or,
once a message was delivered ``retryMaxTimes + 1`` times, to ``%DLQ%<group>`` with
``DLQ_ORIGIN_TOPIC``/``DLQ_ORIGIN_MESSAGE_ID`` (beyond RocketMQ, whose proxy does this on
receive). The revive offset of the group ``CID_RMQ_SYS_REVIVE_GROUP`` is committed up to the
record before the oldest pending checkpoint, so a restart reads every undecided one again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketq.broker.pop.inflight import PopInflightTable
from rocketq.broker.pop.records import REVIVE_GROUP, AckMsg, PopCheckPoint, loads_record
from rocketq.broker.pop.reviver import Reviver
from rocketq.broker.pop.supersede import SupersedeIndex
from rocketq.common.message_decoder import decode_messages
from rocketq.errors import RemotingCommandError

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)

READ_BATCH = 32
MIN_ROUND_MS = 20  # the shortest wait between rounds (checkpoints due and not yet revived)
MAX_SAMPLES = 256  # settle samples kept while dispatch is held back (a lagging in-sync slave)
REVIVE_HOST = "127.0.0.1"


@dataclass(slots=True)
class ReviveQueue:
    queue_id: int
    read_offset: int = -1  # the next revive-topic offset to read; -1: from the committed one
    pending: dict[str, PopCheckPoint] = field(default_factory=dict)
    orphan_acks: dict[str, tuple[int, set[int]]] = field(default_factory=dict)  # key: (seen, offs)
    current_revive_time: int = 0
    checked_ms: int = 0  # when its pending checkpoints were last checked for being due


class PopReviveService:
    def __init__(
        self,
        broker: PopContext,
        inflight: PopInflightTable,
        topic: str,
        on_commit: Callable[[], None] = lambda: None,
    ) -> None:
        self.broker = broker
        self.inflight = inflight
        self.topic = topic
        self.on_commit = on_commit  # persist the offsets soon (a restart re-reads less)
        self.queues = [ReviveQueue(q) for q in range(broker.config.revive_queue_num)]
        self.reviver = Reviver(broker)
        self.supersede = SupersedeIndex(broker, topic)
        self.retry_messages_total: Counter[tuple[str, str, str]] = Counter()
        self._task: asyncio.Task[None] | None = None
        self._started_ms = 0
        #: (time, timer read time - precision, commitlog end) sampled while the timer was
        #: caught up, waiting for dispatch to pass that end; then (time, read time) settle
        self._samples: deque[tuple[int, int, int]] = deque()
        self._settled = (0, 0)

    def start(self) -> None:
        """Start (a boot, or a promotion): everything is read again from the committed revive
        offsets, as RocketMQ's service does; positions and checkpoints kept from an earlier
        term as master may point into records a demotion truncated and replaced."""
        self.queues = [ReviveQueue(q) for q in range(self.broker.config.revive_queue_num)]
        self._samples.clear()
        self._settled = (0, 0)
        self._started_ms = self.broker.message_store.now_ms()
        self.supersede.reset(self._started_ms)
        if not self.broker.config.enable_controller_mode:
            self.open()  # this term's pops begin with the offsets loaded at start
        self._task = asyncio.get_running_loop().create_task(self._run())

    def open(self) -> None:
        """A new master's pop offsets are past every pop the old master answered (the role
        switch calls this): the revive may begin, knowing where this term's pops began."""
        self.supersede.open()

    async def shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        await self.supersede.opened.wait()
        while True:
            await asyncio.sleep(self._next_round_s())
            if self.broker.message_store.timer_message_store is None:
                continue  # timerWheelEnable=false: no pops, nothing to revive
            try:  # every queue read first: a later checkpoint may sit in another one
                settled_ms = self._settled_time()
                await asyncio.to_thread(self._read_all)
            except Exception:  # a failed read skips this round, the service goes on
                log.exception("reading %s failed", self.topic)
                continue
            for queue in self.queues:
                try:
                    await self._revive_due(queue, settled_ms)
                except Exception:  # one round's failure must not stop the service
                    log.exception("revive of %s queue %d failed", self.topic, queue.queue_id)
            if self.supersede.remembers_earlier:
                self.supersede.forget(self.broker.message_store.now_ms(), self._earlier_pending())

    def _next_round_s(self) -> float:
        """``reviveInterval``, or less: until the earliest checkpoint already read is due, so
        a checkpoint read a moment before its revive time is revived at that time and not
        one whole interval later (its ``ck`` arrives ``ackTimeInterval`` ahead of it)."""
        interval_ms = self.broker.config.revive_interval_ms
        # not yet due when its queue was looked at (one due then and still pending waits for
        # its acks to settle, or for a put to succeed: reviveInterval)
        ahead = [
            ck.revive_time
            for q in self.queues
            for ck in q.pending.values()
            if ck.revive_time > q.checked_ms
        ]
        if not ahead:
            return interval_ms / 1000
        wait_ms = min(ahead) - self.broker.message_store.now_ms() + 1
        return min(interval_ms, max(MIN_ROUND_MS, wait_ms)) / 1000

    # ------------------------------------------------------------------ one round

    async def revive_queue(self, queue: ReviveQueue) -> None:
        """One round of one queue: read it on, revive what is due."""
        settled_ms = self._settled_time()
        await asyncio.to_thread(self._read, queue)
        await self._revive_due(queue, settled_ms)

    def _read_all(self) -> None:
        for queue in self.queues:
            self._read(queue)

    def _earlier_pending(self) -> bool:
        started = self.supersede.started_ms
        return any(ck.pop_time < started for q in self.queues for ck in q.pending.values())

    async def _revive_due(self, queue: ReviveQueue, settled_ms: int) -> None:
        store = self.broker.message_store
        offsets = self.broker.consumer_offset_manager
        if not self.supersede.opened.is_set():
            return  # this term's pops not known yet: nothing revived
        now = queue.checked_ms = store.now_ms()
        self.inflight.expire(now)
        for key, ck in sorted(queue.pending.items(), key=lambda kv: kv[1].revive_offset):
            if not self._is_due(ck, now, settled_ms):
                continue
            queue.current_revive_time = ck.revive_time
            if not await self._revive_checkpoint(ck, await self._superseded(ck)):
                continue  # a put failed: try again next round
            del queue.pending[key]
        wait_ms = self.broker.config.revive_ack_wait_ms
        for key, (seen, _offs) in list(queue.orphan_acks.items()):
            if now - seen > wait_ms:
                del queue.orphan_acks[key]
        if queue.pending:
            done = min(ck.revive_offset for ck in queue.pending.values()) - 1
        else:
            done = queue.read_offset - 1
            queue.current_revive_time = 0
        if done > offsets.query_offset(REVIVE_GROUP, self.topic, queue.queue_id):
            offsets.commit_offset(REVIVE_HOST, REVIVE_GROUP, self.topic, queue.queue_id, done)
            self.on_commit()

    def _settled_time(self) -> int:
        """A time before which every ack record has reached the revive topic's queues: the
        timer delivered those slots, and it had enqueued everything written (so no ack due
        then still waits in the wheel topic) since, and the store has dispatched every record
        appended when that was seen.

        The read time is sampled first, then the commitlog's end: whatever the timer put for
        the slots before that read time lies below that end. The sample settles once dispatch
        has passed the end, not merely caught up with the confirm offset (in controller mode
        a lagging in-sync slave holds the consume queues back while the timer delivers)."""
        store = self.broker.message_store
        timer = store.timer_message_store
        if timer is None:
            return 0
        read = timer.curr_read_time_ms - timer.precision_ms
        now = store.now_ms()
        if timer.enqueue_lag() == 0 and store.dispatch_behind_bytes() == 0:
            end = store.get_max_phy_offset()
            samples = self._samples
            if samples and samples[-1][2] == end:
                samples.pop()  # nothing appended since: the newer sample says more
            elif len(samples) >= MAX_SAMPLES:
                samples.popleft()  # dispatch held back a long time: settle later, not wrong
            samples.append((now, read, end))
        dispatched = store.dispatched_phy_offset()
        while self._samples and self._samples[0][2] <= dispatched:
            at, settled_read, _ = self._samples.popleft()
            self._settled = (max(self._settled[0], at), max(self._settled[1], settled_read))
        return min(self._settled)

    def _is_due(self, ck: PopCheckPoint, now: int, settled_ms: int) -> bool:
        if ck.revive_time > now:
            return False
        if ck.pop_time >= self._started_ms:
            return True  # this broker saw every ack of it
        return ck.revive_time < settled_ms

    def _read(self, queue: ReviveQueue) -> None:
        """Read the revive queue on from ``read_offset`` (a store thread)."""
        store = self.broker.message_store
        if queue.read_offset < 0:
            committed = self.broker.consumer_offset_manager.query_offset(
                REVIVE_GROUP, self.topic, queue.queue_id
            )
            queue.read_offset = committed + 1
        default_broker = self.broker.config.broker_name
        while True:
            result = store.get_message(
                REVIVE_GROUP, self.topic, queue.queue_id, queue.read_offset, READ_BATCH, None
            )
            if not result.message_buffers:
                if result.next_begin_offset > queue.read_offset:
                    queue.read_offset = result.next_begin_offset
                return
            for buf in result.message_buffers:
                for msg in decode_messages(buf):
                    try:
                        record = loads_record(msg.tags, msg.body)
                    except (RemotingCommandError, ValueError, TypeError):  # skipped, as in Java
                        log.warning("bad revive record at %s:%d", self.topic, msg.queue_offset)
                        continue
                    if isinstance(record, PopCheckPoint):
                        record.revive_offset = msg.queue_offset
                        if self.supersede.is_earlier_term(record):
                            self.supersede.learn(record)
                        key = record.merge_key()
                        queue.pending[key] = record
                        _seen, early = queue.orphan_acks.pop(key, (0, set()))
                        self._set_bits(record, early)
                    elif isinstance(record, AckMsg):
                        key = record.merge_key(default_broker)
                        ck = queue.pending.get(key)
                        if ck is not None:
                            self._set_bits(ck, set(record.ack_offsets()))
                        else:
                            seen = store.now_ms()
                            entry = queue.orphan_acks.setdefault(key, (seen, set()))
                            entry[1].update(record.ack_offsets())
            queue.read_offset = result.next_begin_offset

    @staticmethod
    def _set_bits(ck: PopCheckPoint, offsets: set[int]) -> None:
        for offset in offsets:
            index = ck.index_of_ack(offset)
            if index >= 0:
                ck.bit_map |= 1 << index

    async def _superseded(self, ck: PopCheckPoint) -> set[int]:
        """The offsets of ``ck`` a later checkpoint covers (only one of an earlier term)."""
        if not self.supersede.is_earlier_term(ck):
            return set()
        if self.supersede.needs_cover(ck.pop_time):
            await asyncio.to_thread(self.supersede.cover, ck.pop_time)
        return self.supersede.superseded(ck)

    async def _revive_checkpoint(self, ck: PopCheckPoint, superseded: set[int]) -> bool:
        key = ck.merge_key()
        acked = self.inflight.acked_offsets(key)
        offsets = [ck.ack_offset_by_index(i) for i in range(ck.num)]
        todo = [o for i, o in enumerate(offsets) if not ck.bit_map >> i & 1 and o not in acked]
        skipped = [o for o in todo if o in superseded]
        if skipped:
            self.supersede.superseded_total += len(skipped)
            todo = [o for o in todo if o not in superseded]
            log.info(
                "revive: %s@%s:%d pop %d offsets %s not revived: a later checkpoint covers them",
                ck.cid, ck.topic, ck.queue_id, ck.pop_time, skipped,
            )  # fmt: skip
        ok = True
        for offset, status in zip(todo, await self.reviver.revive_messages(ck, todo), strict=True):
            if status is None:
                continue  # the message is gone (deleted, or its topic or group removed)
            self.retry_messages_total[(ck.topic, ck.cid, status.name)] += 1
            if status.is_ok:
                self.inflight.mark_acked(key, offset)  # revived: not again on a retry
            else:
                ok = False  # the checkpoint stays; what was revived is marked done
        if ok:
            self.inflight.forget_checkpoint(key)
        return ok

    # ------------------------------------------------------------------ metrics

    def lag(self, queue: ReviveQueue) -> int:
        """Revive records not yet handled (PopReviveService.getReviveBehindMessages)."""
        max_offset = self.broker.message_store.get_max_offset_in_queue(self.topic, queue.queue_id)
        done = self.broker.consumer_offset_manager.query_offset(
            REVIVE_GROUP, self.topic, queue.queue_id
        )
        return max(0, max_offset - done - 1)

    def latency_ms(self, queue: ReviveQueue) -> int:
        """How far behind the oldest checkpoint being revived is (getReviveBehindMillis)."""
        if queue.current_revive_time <= 0 or self.lag(queue) <= 0:
            return 0
        return max(0, self.broker.message_store.now_ms() - queue.current_revive_time)
