"""PopBufferMergeService: a pop's checkpoint held in memory and merged with its acks before
either is written (RocketMQ 5's PopBufferMergeService, ``enablePopBufferMerge``).

A checkpoint waits here up to ``CK_STAY_BUFFER_MS``. Acked in full meanwhile (the common case:
a consumer acks a batch within milliseconds), neither it nor its acks are ever written: no
``ck``/``bAck`` record, no timer hop, nothing for the revive service to read. Otherwise it is
written to the revive log as without the buffer, followed by one ``bAck`` of the offsets acked
so far; later acks of it are written as records.

Crash safety (beyond RocketMQ, whose buffer loses its checkpoints at a crash): the consume
offset committed for a queue never passes a checkpoint that is neither written nor acked in
full. Pops read on from the buffer's *read offset*; the committed offset is the start of the
oldest unresolved checkpoint of the queue (or the read offset when none is), so a broker killed
while a checkpoint is held pops those messages again as new ones after its restart (delivered
again, never lost), and whatever the committed offset covers is either acked or has its
checkpoint in the revive log. An offset committed by anyone else (an admin reset) drops the
queue's read-ahead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketq.broker.pop.inflight import PopInflightTable
from rocketq.broker.pop.records import PopCheckPoint

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)

CK_STAY_BUFFER_MS = 100  # RocketMQ: popCkStayBufferTimeOut, 3 s; short here (the module doc)
MIN_BUFFER_INVISIBLE_MS = 1000  # a shorter invisible time writes its checkpoint at once
SCAN_INTERVAL_S = 0.02
POP_LOCAL_HOST = "127.0.0.1"

QueueKey = tuple[str, str, int]  # (group, topic, queue id)
WriteCheckPoint = Callable[[PopCheckPoint, int, list[int]], Awaitable[bool]]


@dataclass(slots=True)
class BufferedCheckPoint:
    ck: PopCheckPoint
    key: str
    revive_qid: int
    deadline: float  # time.monotonic() when it is written unless acked in full
    acked: set[int] = field(default_factory=set)
    done: bool = False  # acked in full, or written: it no longer holds the commit back


@dataclass(slots=True)
class QueueBuffer:
    read_offset: int  # where the next pop of the queue reads
    committed: int  # the offset this buffer last committed
    entries: deque[BufferedCheckPoint] = field(default_factory=deque)


class PopBufferMergeService:
    def __init__(
        self,
        broker: PopContext,
        inflight: PopInflightTable,
        write: WriteCheckPoint,
        on_commit: Callable[[], None],
    ) -> None:
        self.broker = broker
        self.inflight = inflight
        self.write = write  # the checkpoint, then one bAck of the offsets given
        self.on_commit = on_commit
        self._queues: dict[QueueKey, QueueBuffer] = {}
        self._held: dict[str, BufferedCheckPoint] = {}  # by merge key, not yet written
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.merged_total = 0  # checkpoints acked in full while held: never written

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def shutdown(self) -> None:
        """Write every checkpoint still held, so the offsets persisted next cover them."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._write_due(float("inf"))

    @property
    def held_count(self) -> int:
        return len(self._held)

    # ------------------------------------------------------------------ the pop side

    @staticmethod
    def wants(invisible_time: int) -> bool:
        return invisible_time >= MIN_BUFFER_INVISIBLE_MS

    def read_offset(self, group: str, topic: str, queue_id: int, committed: int) -> int:
        """Where a pop of the queue starts: the read-ahead past held checkpoints."""
        state = self._queues.get((group, topic, queue_id))
        if state is None:
            return committed
        if state.committed != committed:  # someone else committed (a reset): start there
            state.entries.clear()
            state.read_offset = state.committed = committed
            return committed
        return state.read_offset

    def add(self, ck: PopCheckPoint, revive_qid: int, next_offset: int) -> None:
        """Hold ``ck`` (its messages read up to ``next_offset``)."""
        key = ck.merge_key()
        entry = BufferedCheckPoint(ck, key, revive_qid, time.monotonic() + CK_STAY_BUFFER_MS / 1e3)
        state = self._state(ck.cid, ck.topic, ck.queue_id, ck.start_offset)
        state.entries.append(entry)
        state.read_offset = max(state.read_offset, next_offset)
        self._held[key] = entry
        self._wake.set()
        self._advance(ck.cid, ck.topic, ck.queue_id, state)

    def hold(self, ck: PopCheckPoint, key: str, revive_qid: int, next_offset: int) -> None:
        """:meth:`add` of ``ck`` whose merge key is ``key``, its steps inline (a pop's
        common case)."""
        entry = BufferedCheckPoint(ck, key, revive_qid, time.monotonic() + CK_STAY_BUFFER_MS / 1e3)
        qkey = (ck.cid, ck.topic, ck.queue_id)
        state = self._queues.get(qkey)
        if state is None:
            state = self._queues[qkey] = QueueBuffer(ck.start_offset, ck.start_offset)
        entries = state.entries
        entries.append(entry)
        if next_offset > state.read_offset:
            state.read_offset = next_offset
        self._held[key] = entry
        self._wake.set()
        if entries[0].done or entries[0].ck.start_offset > state.committed:
            self._advance(ck.cid, ck.topic, ck.queue_id, state)

    def skip_to(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """A pop read past messages it did not take (filtered out, or gone)."""
        state = self._queues.get((group, topic, queue_id))
        if state is None:
            self.broker.consumer_offset_manager.commit_offset(
                POP_LOCAL_HOST, group, topic, queue_id, offset
            )
            self.on_commit()
            return
        state.read_offset = max(state.read_offset, offset)
        self._advance(group, topic, queue_id, state)

    def _state(self, group: str, topic: str, queue_id: int, start: int) -> QueueBuffer:
        key = (group, topic, queue_id)
        state = self._queues.get(key)
        if state is None:
            state = self._queues[key] = QueueBuffer(start, start)
        return state

    def _advance(self, group: str, topic: str, queue_id: int, state: QueueBuffer) -> None:
        entries = state.entries
        while entries and entries[0].done:
            entries.popleft()
        safe = entries[0].ck.start_offset if entries else state.read_offset
        if safe > state.committed:
            state.committed = safe
            self.broker.consumer_offset_manager.commit_offset(
                POP_LOCAL_HOST, group, topic, queue_id, safe
            )
            self.on_commit()
        if not entries and state.read_offset == state.committed:
            del self._queues[(group, topic, queue_id)]  # nothing held: the offset says it all

    # ------------------------------------------------------------------ the ack side

    def holds(self, key: str) -> bool:
        return key in self._held

    def ack(self, key: str, offsets: list[int]) -> bool:
        """Merge an ack into its held checkpoint; False when it is not held (write a record)."""
        return self.merge(key, offsets) is not None

    def merge(self, key: str, offsets: list[int]) -> bool | None:
        """:meth:`ack`: None when the checkpoint is not held, else whether it is now acked
        in full (resolved, and forgotten by the in-flight table)."""
        entry = self._held.get(key)
        if entry is None:
            return None
        # the common case, a whole pop acked at once (the in-flight table's fresh offsets are
        # distinct): done without a set of its offsets
        if entry.acked or len(offsets) < entry.ck.num:
            entry.acked.update(offsets)
            if len(entry.acked) < entry.ck.num:
                return False
        self.merged(entry)
        return True

    def held_whole(self, key: str, n: int) -> BufferedCheckPoint | None:
        """The held checkpoint ``key`` when an ack of ``n`` fresh offsets acks it in full
        (:meth:`merge`'s common case), else None."""
        entry = self._held.get(key)
        if entry is None or entry.acked or n < entry.ck.num:
            return None
        return entry

    def merged(self, entry: BufferedCheckPoint) -> None:
        """:meth:`merge`'s end for ``entry`` of :meth:`held_whole`: acked in full."""
        del self._held[entry.key]
        self.merged_total += 1
        self.inflight.forget_checkpoint(entry.key)
        self._resolve(entry)

    def _resolve(self, entry: BufferedCheckPoint) -> None:
        entry.done = True
        ck = entry.ck
        state = self._queues.get((ck.cid, ck.topic, ck.queue_id))
        if state is not None:
            self._advance(ck.cid, ck.topic, ck.queue_id, state)

    # ------------------------------------------------------------------ writing out

    async def _run(self) -> None:
        while True:
            if not self._held:
                self._wake.clear()
                await self._wake.wait()
            await asyncio.sleep(SCAN_INTERVAL_S)
            try:
                await self._write_due(time.monotonic())
            except Exception:  # one round's failure must not stop the service
                log.exception("pop buffer: writing checkpoints failed")

    async def _write_due(self, now: float) -> None:
        due = [e for e in self._held.values() if e.deadline <= now]
        for entry in due:
            if self._held.get(entry.key) is not entry:
                continue  # acked in full meanwhile
            del self._held[entry.key]  # acks from here on are written as records
            acked = sorted(entry.acked)
            if await self.write(entry.ck, entry.revive_qid, acked):
                self._resolve(entry)
            else:  # try again later; the commit stays before it
                entry.deadline = time.monotonic() + CK_STAY_BUFFER_MS / 1e3
                self._held[entry.key] = entry
