"""AsyncTraceDispatcher (client/trace/AsyncTraceDispatcher.java): trace records leave the
send and consume paths through a bounded queue and go out in batches from one task.

Theory of operation: ``append`` is synchronous and never waits: it puts the record in an
``asyncio.Queue`` of ``queue_size`` and, when that is full, drops it and counts the drop
(Java's ``discardCount``). The worker takes what is queued, up to ``batch_size`` records or
what arrived within ``flush_interval_s``, encodes them (TraceDataEncoder) and sends them as
one message per ``max_msg_size_bytes`` to the trace topic through its own producer (group
``_INNER_TRACE_PRODUCER-<group>``, its own client instance, with no tracing of its own). The
message's keys are every traced msgId and key, so the broker's index finds the records of a
message (queryMsgTraceById). A failed trace send is logged and lost, never retried."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from typing import Protocol

from rocketq.client.config import ClientConfig, ProducerConfig
from rocketq.client.trace.context import TRACE_GROUP_NAME_PREFIX, TraceContext
from rocketq.client.trace.encoder import encode_trace_context
from rocketq.common.message import Message
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC


class TraceSender(Protocol):
    """What the dispatcher sends with: the trace producer (``client.aio.producer.Producer``,
    given by the traced client, since the client's modules import this one)."""

    async def send(self, msg: Message, *, timeout_s: float | None = None) -> object: ...

    async def shutdown(self) -> None: ...


log = logging.getLogger(__name__)

#: TraceConstants.TRACE_INSTANCE_NAME
TRACE_INSTANCE_NAME = "PID_CLIENT_INNER_TRACE_PRODUCER"


class AsyncTraceDispatcher:
    def __init__(
        self,
        group: str,
        client_config: ClientConfig,
        *,
        trace_topic: str = "",
        queue_size: int = 2048,
        batch_size: int = 10,
        max_msg_size_bytes: int = 128_000,
        flush_interval_s: float = 0.1,
    ) -> None:
        self.group = group
        self.trace_topic = trace_topic or RMQ_SYS_TRACE_TOPIC
        self.batch_size = batch_size
        self.max_msg_size_bytes = max_msg_size_bytes
        self.flush_interval_s = flush_interval_s
        self.dropped_count = 0
        self.sent_count = 0  # trace messages the broker accepted
        self._client_config = client_config
        self._queue: asyncio.Queue[TraceContext] = asyncio.Queue(queue_size)
        self._producer: TraceSender | None = None
        self._worker: asyncio.Task[None] | None = None

    def trace_producer_config(self) -> ProducerConfig:
        base = {
            f.name: getattr(self._client_config, f.name) for f in dataclasses.fields(ClientConfig)
        }
        base["enable_msg_trace"] = False
        base["instance_name"] = f"{TRACE_INSTANCE_NAME}_{os.getpid()}_{id(self)}"
        return ProducerConfig(
            **base,
            producer_group=f"{TRACE_GROUP_NAME_PREFIX}-{self.group}",
            max_message_size_bytes=self.max_msg_size_bytes,
        )

    def start(self, producer: TraceSender) -> None:
        """Start the worker on ``producer``, started with ``trace_producer_config()``."""
        self._producer = producer
        self._worker = asyncio.create_task(self._run(), name=f"trace-{self.group}")

    def append(self, ctx: TraceContext) -> bool:
        """Queue a record; False (and one more drop counted) when the queue is full."""
        try:
            self._queue.put_nowait(ctx)
        except asyncio.QueueFull:
            self.dropped_count += 1
            return False
        return True

    async def flush(self) -> None:
        """Wait until every record queued so far has been sent (or failed to be)."""
        await self._queue.join()

    async def shutdown(self) -> None:
        if self._worker is not None:
            if not self._worker.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.flush(), 5.0)
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.shutdown()

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.flush_interval_s
            while len(batch) < self.batch_size:
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), deadline - loop.time()))
                except TimeoutError:
                    break
            try:
                await self._send_batch(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _send_batch(self, batch: list[TraceContext]) -> None:
        buffer: list[str] = []
        size = 0
        keys: set[str] = set()
        for ctx in batch:
            data = encode_trace_context(ctx)
            buffer.append(data)
            size += len(data)
            keys |= ctx.trans_keys()
            if size >= self.max_msg_size_bytes:
                await self._send_data(keys, "".join(buffer))
                buffer, size, keys = [], 0, set()
        if buffer:
            await self._send_data(keys, "".join(buffer))

    async def _send_data(self, keys: set[str], data: str) -> None:
        msg = Message(topic=self.trace_topic, body=data.encode("utf-8"))
        msg.keys = sorted(k for k in keys if k and k != "null")
        assert self._producer is not None
        try:
            await self._producer.send(msg, timeout_s=5.0)
        except Exception:  # a trace is best effort: the traced client never sees this
            log.exception("send trace data failed, the traceData is %r", data)
        else:
            self.sent_count += 1
