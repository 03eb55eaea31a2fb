"""Running the listener: ConsumeMessageConcurrentlyService and ConsumeMessageOrderlyService.

A listener is ``f(msgs) -> ConsumeStatus``, a plain function (run on the consumer's thread
pool) or a coroutine function (awaited on the loop). An exception counts as RECONSUME_LATER.

Concurrently: each batch is a task, at most ``consume_thread_max`` run at once. After it the
consumed messages leave the ProcessQueue and the smallest offset still in flight is recorded
(increase-only). A failed batch is sent back to the broker (CONSUMER_SEND_MSG_BACK) in
clustering mode; messages the broker did not take are consumed again here after
``local_retry_delay_s``. Broadcasting drops failures, as RocketMQ does.

Orderly: one task per queue at a time takes messages in offset order while the queue's lock is
valid; a failure puts the batch back and suspends the queue for ``suspend_current_queue_time_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from rocketq.client.config import PushConsumerConfig
from rocketq.client.message import restore_retry_topic
from rocketq.client.process_queue import ProcessQueue
from rocketq.client.status import ConsumeStatus
from rocketq.client.trace.context import ConsumeReturnType
from rocketq.client.trace.dispatcher import AsyncTraceDispatcher
from rocketq.client.trace.hooks import sub_after_context, sub_before_context
from rocketq.common import topic as common_topic
from rocketq.common.clock import now_ms
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.remoting.eager_step import eager_task
from rocketq.remoting.protocol.bodies import MessageModel

log = logging.getLogger(__name__)

MessageListener = Callable[[list[MessageExt]], "ConsumeStatus | Awaitable[ConsumeStatus]"]


class ConsumerHooks(Protocol):
    def record_offset(self, mq: MessageQueue, offset: int) -> None: ...
    async def send_message_back(self, msg: MessageExt, mq: MessageQueue) -> bool: ...
    def lock_valid(self, mq: MessageQueue, pq: ProcessQueue) -> bool: ...
    async def lock(self, mq: MessageQueue) -> bool: ...
    def record_consume(self, topic: str, rt_ms: float, ok: int, failed: int) -> None: ...


class ConsumeService:
    def __init__(
        self,
        config: PushConsumerConfig,
        listener: MessageListener,
        hooks: ConsumerHooks,
        *,
        orderly: bool,
    ) -> None:
        self.config = config
        self.listener = listener
        self.hooks = hooks
        self.orderly = orderly
        self._is_coroutine = inspect.iscoroutinefunction(listener)
        self._executor = ThreadPoolExecutor(
            max_workers=config.consume_thread_max, thread_name_prefix="ConsumeMessageThread"
        )
        self._semaphore = asyncio.Semaphore(config.consume_thread_max)
        self._tasks: set[asyncio.Task[None]] = set()
        self.stopping = False
        #: ConsumeMessageTraceHookImpl's dispatcher when enable_msg_trace is on
        self.trace: AsyncTraceDispatcher | None = None

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def shutdown(self, await_termination_s: float) -> None:
        """Stop taking work, let submitted batches finish (bounded), stop the pool."""
        self.stopping = True
        if self._tasks:
            _done, pending = await asyncio.wait(set(self._tasks), timeout=await_termination_s)
            for task in pending:
                task.cancel()
            for task in pending:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def call_listener(self, msgs: list[MessageExt]) -> ConsumeStatus:
        """One listener call (orderly consumption)."""
        return (await self.call_listener_chunks([msgs]))[0]

    async def call_listener_chunks(self, chunks: list[list[MessageExt]]) -> list[ConsumeStatus]:
        """The listener calls of ``chunks``, traced (SubBefore, SubAfter) when tracing is on."""
        trace = self.trace
        if trace is None:
            return await self._call_chunks(chunks)
        befores = [sub_before_context(self.config.consumer_group, c, now_ms()) for c in chunks]
        for before in befores:
            if before.trace_beans:
                trace.append(before)
        statuses = await self._call_chunks(chunks)
        for before, chunk, status in zip(befores, chunks, statuses, strict=True):
            if before.trace_beans:
                code = ConsumeReturnType.SUCCESS if status.ok else ConsumeReturnType.FAILED
                trace.append(sub_after_context(before, len(chunk), status.ok, code, now_ms()))
        return statuses

    async def _call_chunks(self, chunks: list[list[MessageExt]]) -> list[ConsumeStatus]:
        """One call per chunk; a plain listener runs them all in one pool job (one thread hop
        per pulled batch instead of one per message), a coroutine listener concurrently."""
        if self._is_coroutine:
            if len(chunks) == 1:  # the common case: no task and no loop iteration for gather
                return [await self._call_async(chunks[0])]
            return list(await asyncio.gather(*(self._call_async(c) for c in chunks)))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, lambda: [self._call_sync(c) for c in chunks]
        )

    def _call_sync(self, msgs: list[MessageExt]) -> ConsumeStatus:
        try:
            return _checked(self.listener(msgs))
        except Exception:  # a listener's error: RECONSUME_LATER, as RocketMQ
            log.exception("the message listener failed; the messages will be consumed again")
            return ConsumeStatus.RECONSUME_LATER

    async def _call_async(self, msgs: list[MessageExt]) -> ConsumeStatus:
        try:
            status = self.listener(msgs)
            if inspect.isawaitable(status):
                status = await status
            return _checked(status)
        except Exception:  # a listener's error: RECONSUME_LATER, as RocketMQ
            log.exception("the message listener failed; the messages will be consumed again")
            return ConsumeStatus.RECONSUME_LATER

    def submit(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue, dispatch: bool
    ) -> None:
        """Consume a pulled batch: its first step runs now, inside the pull loop's step, so a
        listener that returns at once has the messages before the next pull is written (no
        loop iteration in between, where the replies read meanwhile would run first); the
        rest, if it waits (the semaphore, a listener in the pool, one that awaits), goes on
        as the batch's task."""
        if self.orderly:
            if dispatch:
                self._start(self._consume_orderly(pq, mq))
            return
        self._start(self._consume_concurrently(msgs, pq, mq))

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        task = eager_task(asyncio.get_running_loop(), coro)
        if getattr(coro, "cr_frame", True) is None:  # ended in its first step: nothing for shutdown
            return  # to wait for (its task only completes on the next iteration)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ concurrently

    async def _consume_concurrently(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue
    ) -> None:
        # the semaphore's acquire, not its ``async with``: one coroutine less a batch (a free
        # slot is taken without a wait either way)
        await self._semaphore.acquire()
        try:
            if pq.dropped:  # at shutdown queued batches still run: what is pulled gets committed
                return
            retry_topic = common_topic.retry_topic(self.config.consumer_group)
            for msg in msgs:
                if msg.topic == retry_topic:  # restore_retry_topic's own first test, inlined
                    restore_retry_topic(msg, self.config.consumer_group)
            size = self.config.consume_message_batch_max_size
            started = time.monotonic()
            if len(msgs) <= size and self.trace is None and self._is_coroutine:
                # the common case (one chunk, untraced, an asyncio listener): the listener
                # awaited here, without the layers of call_listener_chunks and _call_async
                chunks = [msgs]
                try:
                    status = self.listener(msgs)
                    if not isinstance(status, ConsumeStatus) and inspect.isawaitable(status):
                        status = await status
                    status = _checked(status)
                except Exception:  # a listener's error: RECONSUME_LATER, as RocketMQ
                    log.exception(
                        "the message listener failed; the messages will be consumed again"
                    )
                    status = ConsumeStatus.RECONSUME_LATER
                statuses = [status]
            else:
                chunks = [msgs[i : i + size] for i in range(0, len(msgs), size)]
                statuses = await self.call_listener_chunks(chunks)
            if pq.is_dropped():
                return
            failed = [m for c, st in zip(chunks, statuses, strict=True) if not st.ok for m in c]
            rt_ms = (time.monotonic() - started) * 1000
            self.hooks.record_consume(mq.topic, rt_ms, len(msgs) - len(failed), len(failed))
            retry_locally: list[MessageExt] = []
            if failed and self.config.message_model is MessageModel.CLUSTERING:
                for msg in failed:
                    if not await self.hooks.send_message_back(msg, mq):
                        msg.reconsume_times += 1
                        retry_locally.append(msg)
            elif failed:
                log.warning("BROADCASTING: dropping %d failed messages", len(failed))
            if retry_locally:
                retry_ids = {id(m) for m in retry_locally}
                offset = pq.remove_message([m for m in msgs if id(m) not in retry_ids])
            else:
                offset = pq.remove_message(msgs)
            if offset >= 0 and not pq.dropped:
                self.hooks.record_offset(mq, offset)
            if retry_locally:
                self._spawn(self._retry_later(retry_locally, pq, mq))
        finally:
            self._semaphore.release()

    async def _retry_later(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue
    ) -> None:
        await asyncio.sleep(self.config.local_retry_delay_s)
        if not pq.dropped and not self.stopping:
            self._spawn(self._consume_concurrently(msgs, pq, mq))

    # ------------------------------------------------------------------ orderly

    async def _consume_orderly(self, pq: ProcessQueue, mq: MessageQueue) -> None:
        try:
            while not pq.dropped and not self.stopping:
                if not self.hooks.lock_valid(mq, pq) and not await self.hooks.lock(mq):
                    await asyncio.sleep(self.config.suspend_current_queue_time_s)
                    continue
                msgs = pq.take_messages(self.config.consume_message_batch_max_size)
                if not msgs:
                    return
                for msg in msgs:
                    restore_retry_topic(msg, self.config.consumer_group)
                started = time.monotonic()
                status = await self.call_listener(msgs)
                rt_ms = (time.monotonic() - started) * 1000
                ok = len(msgs) if status.ok else 0
                self.hooks.record_consume(mq.topic, rt_ms, ok, len(msgs) - ok)
                if pq.is_dropped():
                    return
                if status.ok:
                    offset = pq.commit()
                    if offset >= 0:
                        self.hooks.record_offset(mq, offset)
                    continue
                for msg in msgs:
                    msg.reconsume_times += 1
                pq.make_message_to_consume_again(msgs)
                await asyncio.sleep(self.config.suspend_current_queue_time_s)
        finally:
            pq.consume_running = False  # no await since take_messages: no put can interleave


def _checked(status: object) -> ConsumeStatus:
    if isinstance(status, ConsumeStatus):
        return status
    log.warning("the listener returned %r; treated as RECONSUME_LATER", status)
    return ConsumeStatus.RECONSUME_LATER
