"""TransactionalMessageCheckService: asks producers about halves nobody ended.

Theory of operation (TransactionalMessageServiceImpl.check, 4.9.8): every
``transactionCheckInterval`` each half queue is scanned from the half offset of group
CID_RMQ_SYS_TRANS; the op queue of the same id, read from its own offset, says which halves are
ended (``remove_map``: half offset -> op offsets). For each half, in order:

- ended (an op names it, or names the first half of which it is a copy): skipped;
- stored after this scan began (a copy made by this scan): the scan stops here. RocketMQ
  tests this after the discard rule, so it discards a half in the very scan that sent its last
  check; we leave the producer one interval to answer the last check;
- younger than its own CHECK_IMMUNITY_TIME_IN_SECONDS: re-appended so the halves after it
  are not held up. RocketMQ counts such a re-append as a check (TRANSACTION_CHECK_TIMES), so a
  long immunity can use up the checks before the first one is sent; we do not count it;
- checked ``transactionCheckMax`` times already (TRANSACTION_CHECK_TIMES), or older than the
  store keeps files: discarded to TRANS_CHECK_MAX_TIME_TOPIC;
- younger than ``transactionTimeOut``: the scan stops here (the queue is in time order);
- otherwise: re-appended with the check count incremented, and CHECK_TRANSACTION_STATE (39,
  oneway, body = the copy as a store record with its real topic and queue) goes to a live
  producer channel of its PGROUP. The producer answers with END_TRANSACTION naming the copy.

The half offset moves past every half handled; the op offset moves past the ops consumed
without a gap. The half offset is committed first, so a crash between the two re-reads ops,
never skips them. Both are persisted with the other consumer offsets (every
``flushConsumerOffsetInterval`` and at shutdown): after a restart the scan resumes there.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import TYPE_CHECKING

from rocketq.broker.transaction import REMOVETAG, TransactionalMessageService, first_queue_offset
from rocketq.broker.transaction_listener import TransactionalMessageCheckListener
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.topic import (
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
)

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

log = logging.getLogger(__name__)

MAX_PROCESS_TIME_LIMIT_MS = 60_000
MAX_RETRY_COUNT_WHEN_HALF_NULL = 1
OP_PULL_BATCH = 32
OP_READ_MAX_COUNT = 100_000


@dataclasses.dataclass(slots=True)
class CheckRound:
    """What one scan did (for logs and tests)."""

    checked: int = 0
    discarded: int = 0
    skipped_ended: int = 0


@dataclasses.dataclass(slots=True)
class _OpScan:
    half_offset: int
    next_op_offset: int
    remove_map: dict[int, list[int]] = dataclasses.field(default_factory=dict)
    done_op_offsets: list[int] = dataclasses.field(default_factory=list)
    ended_first_offsets: set[int] = dataclasses.field(default_factory=set)


def calculate_op_offset(done: list[int], old_offset: int) -> int:
    """The op offset after the contiguous run of consumed ops starting at ``old_offset``."""
    new_offset = old_offset
    for offset in sorted(set(done)):
        if offset == new_offset:
            new_offset += 1
        elif offset > new_offset:
            break
    return new_offset


def need_discard(msg: MessageExt, check_max: int) -> bool:
    """True past ``check_max`` checks; otherwise counts this check in the message's properties."""
    text = msg.properties.get(mc.PROPERTY_TRANSACTION_CHECK_TIMES)
    check_times = 1
    if text is not None:
        check_times = int(text) if text.lstrip("-").isdigit() else -1
        if check_times >= check_max:
            return True
        check_times += 1
    msg.properties[mc.PROPERTY_TRANSACTION_CHECK_TIMES] = str(check_times)
    return False


def immunity_time_ms(text: str | None, timeout_ms: int) -> int:
    if text is None:
        return timeout_ms
    try:
        return int(text) * 1000
    except ValueError:
        return timeout_ms


class TransactionalMessageCheckService:
    def __init__(self, controller: BrokerContext, service: TransactionalMessageService) -> None:
        self.broker = controller
        self.s = service
        self.listener = TransactionalMessageCheckListener(controller)
        self._task: asyncio.Task[None] | None = None
        self._wakeup = asyncio.Event()
        self._scan_lock = asyncio.Lock()  # one scan at a time (the timer's, or a caller's)
        self.rounds = 0  # scans completed
        self.checks_sent = 0  # CHECK_TRANSACTION_STATE requests, since start

    def start(self) -> None:
        self.s.start_recover_ended()  # before any END_TRANSACTION is served (transaction.py)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def shutdown(self) -> None:
        await self.s.stop_recover_ended()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def wakeup(self) -> None:
        self._wakeup.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.broker.config.transaction_check_interval_ms / 1000):
                    await self._wakeup.wait()
            self._wakeup.clear()
            try:
                await self.check()
            except Exception:  # the check service outlives a failed round
                log.exception("transaction check failed")
            self.rounds += 1

    async def check(self) -> CheckRound:
        """One scan of every half queue."""
        summary = CheckRound()
        async with self._scan_lock:
            for queue_id in self.s.half_queue_ids():
                await self._check_queue(queue_id, summary)
        return summary

    async def _check_queue(self, queue_id: int, summary: CheckRound) -> None:
        start_ms = self.broker.message_store.now_ms()
        half_offset = self.s.fetch_consume_offset(TRANS_HALF_TOPIC, queue_id)
        op_offset = self.s.fetch_consume_offset(TRANS_OP_HALF_TOPIC, queue_id)
        if half_offset < 0 or op_offset < 0:
            return
        scan = _OpScan(half_offset, op_offset)
        await self._fill_op_remove_map(scan, queue_id)
        new_offset = await self._scan_halves(scan, queue_id, start_ms, summary)
        if new_offset != half_offset:
            self.s.update_consume_offset(TRANS_HALF_TOPIC, queue_id, new_offset)
        new_op_offset = calculate_op_offset(scan.done_op_offsets, op_offset)
        if new_op_offset != op_offset:
            self.s.update_consume_offset(TRANS_OP_HALF_TOPIC, queue_id, new_op_offset)

    async def _fill_op_remove_map(self, scan: _OpScan, queue_id: int) -> bool:
        """Read the op queue from where this scan stopped to its end (bounded); True if any."""
        offset, read = scan.next_op_offset, 0
        while read < OP_READ_MAX_COUNT:
            pull = await self.s.pull(TRANS_OP_HALF_TOPIC, queue_id, offset, OP_PULL_BATCH)
            if not pull.messages:
                if not pull.no_new_message and pull.next_begin_offset > offset:
                    log.warning("op offset %d of queue %d is illegal", offset, queue_id)
                    self.s.update_consume_offset(
                        TRANS_OP_HALF_TOPIC, queue_id, pull.next_begin_offset
                    )
                break
            for op in pull.messages:
                self._add_op(scan, op)
            read += len(pull.messages)
            offset = scan.next_op_offset = pull.next_begin_offset
        return read > 0

    @staticmethod
    def _add_op(scan: _OpScan, op: MessageExt) -> None:
        try:
            half = int(op.body.decode("utf-8"))
        except ValueError:
            half = -1
        if op.properties.get(mc.PROPERTY_TAGS) != REMOVETAG or half < 0:
            log.error("illegal op message at op offset %d: %r", op.queue_offset, op.body[:64])
            scan.done_op_offsets.append(op.queue_offset)
            return
        scan.ended_first_offsets.add(half)
        if half < scan.half_offset:
            scan.done_op_offsets.append(op.queue_offset)
        else:
            scan.remove_map.setdefault(half, []).append(op.queue_offset)

    async def _scan_halves(
        self, scan: _OpScan, queue_id: int, start_ms: int, summary: CheckRound
    ) -> int:
        timeout_ms = self.broker.config.transaction_time_out_ms
        i = new_offset = scan.half_offset
        null_count = 1
        while self.broker.message_store.now_ms() - start_ms <= MAX_PROCESS_TIME_LIMIT_MS:
            if i in scan.remove_map:
                scan.done_op_offsets.extend(scan.remove_map.pop(i))
                i = new_offset = i + 1
                continue
            pull = await self.s.pull(TRANS_HALF_TOPIC, queue_id, i, 1)
            if not pull.messages:
                null_count += 1
                if null_count > MAX_RETRY_COUNT_WHEN_HALF_NULL + 1 or pull.no_new_message:
                    log.debug("half scan of queue %d ends at %d: %s", queue_id, i, pull.status)
                    break
                i = new_offset = pull.next_begin_offset  # past a hole, or back to the max
                continue
            msg = pull.messages[0]
            if self._is_ended(scan, msg) or await self._ended_meanwhile(scan, queue_id, i, msg):
                summary.skipped_ended += 1
            elif msg.store_timestamp >= start_ms:
                log.debug("half scan of queue %d ends at %d: stored by this scan", queue_id, i)
                break
            elif self._immune(msg, timeout_ms):  # re-appended, not checked: not counted
                if await self.s.put_back_half_message(msg) is None:
                    break
            elif need_discard(msg, self.broker.config.transaction_check_max) or self._need_skip(
                msg
            ):
                await self.listener.resolve_discard_msg(msg)
                summary.discarded += 1
            elif not await self._check_one(msg, timeout_ms, summary):
                log.debug("half scan of queue %d ends at %d: too young to check", queue_id, i)
                break
            i = new_offset = i + 1
        return new_offset

    async def _ended_meanwhile(self, scan: _OpScan, queue_id: int, i: int, msg: MessageExt) -> bool:
        """Ops that arrived during the scan (an end racing its check) end ``msg`` too."""
        if not await self._fill_op_remove_map(scan, queue_id):
            return False
        if i in scan.remove_map:
            scan.done_op_offsets.extend(scan.remove_map.pop(i))
            return True
        return self._is_ended(scan, msg)

    def _is_ended(self, scan: _OpScan, msg: MessageExt) -> bool:
        first = first_queue_offset(msg)
        if first in self.s.ended:  # ended in this run (its op may still be on its way)
            return True
        return first != msg.queue_offset and first in scan.ended_first_offsets

    def _need_skip(self, msg: MessageExt) -> bool:
        store = self.broker.message_store
        reserved_ms = store.config.file_reserved_time_h * 3_600_000
        return store.now_ms() - msg.born_timestamp > reserved_ms

    def _immune(self, msg: MessageExt, timeout_ms: int) -> bool:
        """Younger than its own CHECK_IMMUNITY_TIME_IN_SECONDS."""
        text = msg.properties.get(mc.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS)
        if text is None:
            return False
        age_ms = self.broker.message_store.now_ms() - msg.born_timestamp
        return bool(age_ms < immunity_time_ms(text, timeout_ms))

    async def _check_one(self, msg: MessageExt, timeout_ms: int, summary: CheckRound) -> bool:
        """Check a half; False when it is too young and the scan has to stop here."""
        age_ms = self.broker.message_store.now_ms() - msg.born_timestamp
        immunity_text = msg.properties.get(mc.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS)
        if 0 <= age_ms < immunity_time_ms(immunity_text, timeout_ms):
            return False
        copy = await self.s.put_back_half_message(msg)
        if copy is None:
            return False
        await self.listener.resolve_half_msg(copy)
        summary.checked += 1
        self.checks_sent += 1
        return True
