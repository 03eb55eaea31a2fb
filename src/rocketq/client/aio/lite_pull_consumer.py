"""LitePullConsumer (DefaultLitePullConsumer) on asyncio: subscribe or assign, poll, seek, commit.

Theory of operation: every queue held (assigned, or given by the rebalance in subscribe mode)
has a pull task that keeps up to ``pull_threshold_for_queue`` messages ahead in a ProcessQueue
and puts each non-empty pull on ``consume_request_cache``. ``poll`` takes requests off that
cache; polled messages leave the ProcessQueue and the queue's consume offset moves to what
``remove_message`` returns. ``commit`` copies consume offsets to the offset store and persists
them; with ``auto_commit`` that happens every ``auto_commit_interval_s`` inside ``poll`` (and at
shutdown). ``seek`` restarts the queue's pull task at the new offset under a new generation, so
requests pulled before the seek are discarded by ``poll``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketq.client.aio import consumer_admin
from rocketq.client.aio.consumer_core import ConsumerCore
from rocketq.client.aio.instance import MQClientInstance, subscribe_info_of
from rocketq.client.aio.offset_store import (
    LocalOffsetStore,
    OffsetStore,
    ReadOffsetType,
    RemoteBrokerOffsetStore,
    default_offset_store_dir,
)
from rocketq.client.aio.pull_api import pull_kernel, route_moved
from rocketq.client.aio.push_consumer import consumer_config
from rocketq.client.aio.rebalance_impl import RebalanceImpl
from rocketq.client.allocate_strategy import allocate_strategy
from rocketq.client.config import LitePullConsumerConfig
from rocketq.client.message import restore_retry_topic
from rocketq.client.message_selector import Subscription, build_subscription
from rocketq.client.process_queue import ProcessQueue
from rocketq.client.status import PullStatus
from rocketq.common.clock import now_ms
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.errors import ClientError, IllegalStateError, RocketQError
from rocketq.remoting.protocol.bodies import ConsumeType, MessageModel
from rocketq.remoting.protocol.consumer_bodies import ConsumeMessageDirectlyResult
from rocketq.remoting.protocol.subscription import build_subscription_data

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _QueueState:
    pq: ProcessQueue
    pull_offset: int
    generation: int = 0
    consume_offset: int = -1
    task: asyncio.Task[None] | None = None


@dataclass(slots=True)
class _ConsumeRequest:
    mq: MessageQueue
    state: _QueueState
    generation: int
    msgs: list[MessageExt] = field(default_factory=list)


class LitePullConsumer(ConsumerCore):
    consume_type = ConsumeType.CONSUME_ACTIVELY
    config: LitePullConsumerConfig

    def __init__(
        self,
        consumer_group: str = "DEFAULT_CONSUMER",
        *,
        namesrv_addr: str = "",
        config: LitePullConsumerConfig | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__()
        self.config = consumer_config(
            LitePullConsumerConfig, consumer_group, namesrv_addr, config, overrides
        )
        self.group = self.config.consumer_group
        self._assigned: set[MessageQueue] | None = None
        self._queues: dict[MessageQueue, _QueueState] = {}
        self._cache: asyncio.Queue[_ConsumeRequest] | None = None
        self.offset_store: OffsetStore | None = None
        self._next_auto_commit = 0.0

    # ------------------------------------------------------------------ setup

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        if self._assigned is not None:
            raise IllegalStateError("subscribe and assign are mutually exclusive")
        self._add_subscription(topic, expression)

    def set_assignment(self, mqs: Iterable[MessageQueue]) -> None:
        """The queues to read from when started (assign, before start)."""
        if self._subscriptions:
            raise IllegalStateError("subscribe and assign are mutually exclusive")
        self._assigned = set(mqs)

    async def assign(self, mqs: Iterable[MessageQueue]) -> None:
        self.set_assignment(mqs)
        if self._running:
            await self._update_assigned()

    @property
    def instance(self) -> MQClientInstance:
        if self._instance is None:
            raise IllegalStateError("the consumer is not started")
        return self._instance

    async def fetch_message_queues(self, topic: str) -> set[MessageQueue]:
        if not await self.instance.update_topic_route(topic):
            raise ClientError(f"no route info of this topic: {topic}")
        return subscribe_info_of(topic, self.instance.topic_route_table[topic])

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._instance is not None:
            raise IllegalStateError("the consumer is already started")
        instance = self._instance = MQClientInstance.get(self.config)
        self._cache = asyncio.Queue()
        if self.config.message_model is MessageModel.CLUSTERING:
            self.offset_store = RemoteBrokerOffsetStore(instance, self.group)
        else:
            root = self.config.offset_store_dir or default_offset_store_dir()
            self.offset_store = LocalOffsetStore(Path(root), instance.client_id, self.group)
        self.offset_store.load()
        strategy = allocate_strategy(self.config.allocate_strategy)
        rebalance = RebalanceImpl(instance, self.group, self.config.message_model, strategy, self)
        for topic, expression in self._subscriptions.items():
            rebalance.subscription_inner[topic] = build_subscription(topic, expression, now_ms())
        self._rebalance, self._running = rebalance, True
        self._next_auto_commit = time.monotonic() + self.config.auto_commit_interval_s
        instance.register_consumer(self)
        for topic in list(rebalance.subscription_inner):
            with contextlib.suppress(RocketQError, OSError):
                await instance.update_topic_route(topic)
        try:
            await self.check_client_in_broker()
        except RocketQError:
            await self.shutdown()
            raise
        await instance.send_heartbeat_to_all()
        if self._assigned is not None:
            await self._update_assigned()
        else:
            instance.rebalance_immediately()

    async def _update_assigned(self) -> None:
        assert self._rebalance is not None
        assigned = self._assigned or set()
        for topic in {mq.topic for mq in assigned}:
            self._rebalance.subscription_inner.setdefault(
                topic, build_subscription_data(topic, "*", now_ms())
            )
        for topic in {mq.topic for mq in assigned} | {mq.topic for mq in self._queues}:
            mqs = {mq for mq in assigned if mq.topic == topic}
            await self._rebalance.update_process_queue_table(topic, mqs, is_order=False)

    async def shutdown(self) -> None:
        instance = self._instance
        if instance is None:
            return
        self._running = False
        for state in self._queues.values():
            state.pq.dropped = True
            if state.task is not None:
                state.task.cancel()
        for state in self._queues.values():
            if state.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await state.task
        if self.config.auto_commit:
            await self.commit()
        self._instance = None
        await instance.unregister(consumer=self.group)

    async def __aenter__(self) -> LitePullConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    # ------------------------------------------------------------------ poll / seek / commit

    async def poll(self, timeout_s: float | None = None) -> list[MessageExt]:
        """Messages pulled ahead, waiting at most ``timeout_s``; [] when none came."""
        if self._cache is None or not self._running:
            raise IllegalStateError("the consumer is not started")
        if self.config.auto_commit and time.monotonic() >= self._next_auto_commit:
            self._next_auto_commit = time.monotonic() + self.config.auto_commit_interval_s
            await self.commit()
        timeout = self.config.poll_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        while True:
            try:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    request = await self._cache.get()
            except TimeoutError:
                return []
            state = request.state
            if state.pq.dropped or request.generation != state.generation:
                continue
            offset = state.pq.remove_message(request.msgs)
            if offset >= 0:
                state.consume_offset = offset
            return request.msgs

    async def __aiter__(self) -> AsyncIterator[MessageExt]:
        while self._running:
            for msg in await self.poll():
                yield msg

    async def seek(self, mq: MessageQueue, offset: int) -> None:
        state = self._queues.get(mq)
        if state is None:
            raise IllegalStateError(f"{mq} is not held by this consumer")
        if state.task is not None:
            state.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await state.task
        state.pq.clear()
        state.generation += 1
        state.pull_offset = offset
        state.consume_offset = offset
        state.task = asyncio.get_running_loop().create_task(self._pull_loop(mq, state))

    async def seek_to_begin(self, mq: MessageQueue) -> None:
        addr = await self.instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)
        await self.seek(mq, await self.instance.api.get_min_offset(addr, mq))

    async def seek_to_end(self, mq: MessageQueue) -> None:
        addr = await self.instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)
        await self.seek(mq, await self.instance.api.get_max_offset(addr, mq))

    async def offset_for_timestamp(self, mq: MessageQueue, timestamp_ms: int) -> int:
        addr = await self.instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)
        return await self.instance.api.search_offset(addr, mq, timestamp_ms)

    async def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        """commitSync: record the consume offsets (or ``offsets``) and persist them now."""
        store = self.offset_store
        if store is None:
            return
        chosen = offsets or {mq: s.consume_offset for mq, s in self._queues.items()}
        for mq, offset in chosen.items():
            if offset >= 0:
                store.update_offset(mq, offset, increase_only=False)
        await store.persist_all({mq for mq, off in chosen.items() if off >= 0})

    async def committed(self, mq: MessageQueue) -> int:
        assert self.offset_store is not None
        return await self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)

    def assignment(self) -> set[MessageQueue]:
        return set(self._queues)

    # ------------------------------------------------------------------ ConsumerMember

    async def do_rebalance(self) -> None:
        if self._running and self._assigned is None and self._rebalance is not None:
            await self._rebalance.do_rebalance(is_order=False)

    async def persist_consumer_offset(self) -> None:
        if self.offset_store is not None:
            await self.offset_store.persist_all(set(self._queues))

    async def consume_message_directly(
        self, msg: MessageExt, broker_name: str | None
    ) -> ConsumeMessageDirectlyResult:
        return consumer_admin.no_message_listener()  # the application polls; no listener

    async def reset_offset(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        consumer_admin.reset_offset_ignored(self.group, topic)  # seek is the pull way

    # ------------------------------------------------------------------ RebalanceHooks

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        state = self._queues.pop(mq, None)
        if state is not None and state.task is not None:
            state.task.cancel()
        if state is not None and self.offset_store is not None and state.consume_offset >= 0:
            self.offset_store.update_offset(mq, state.consume_offset, increase_only=False)
            await self.offset_store.persist_all({mq})
            self.offset_store.remove_offset(mq)
        return True

    def dispatch_pull_request(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        if not self._running:
            pq.dropped = True
            return
        state = _QueueState(pq=pq, pull_offset=offset, consume_offset=offset)
        self._queues[mq] = state
        state.task = asyncio.get_running_loop().create_task(self._pull_loop(mq, state))

    # ------------------------------------------------------------------ pulling

    async def _pull_loop(self, mq: MessageQueue, state: _QueueState) -> None:
        c = self.config
        pq, generation = state.pq, state.generation
        assert self._rebalance is not None
        assert self._cache is not None
        while self._running and not pq.dropped:
            if pq.msg_count > c.pull_threshold_for_queue or (
                pq.msg_size > c.pull_threshold_size_for_queue_bytes
            ):
                await pq.wait_for_space(c.pull_time_delay_when_flow_control_s)
                continue
            sub = self._rebalance.subscription_inner.get(mq.topic)
            if sub is None:
                return
            try:
                result = await pull_kernel(
                    self.instance,
                    self.group,
                    mq,
                    sub,
                    state.pull_offset,
                    c.pull_batch_size,
                    suspend_s=c.broker_suspend_max_time_s,
                    timeout_s=c.consumer_timeout_when_suspend_s,
                )
            except (RocketQError, OSError) as exc:
                log.info("pull of %s failed: %r", mq, exc)
                if not await route_moved(self.instance, mq, exc):
                    await asyncio.sleep(c.pull_time_delay_when_exception_s)
                continue
            if pq.is_dropped() or generation != state.generation:
                return
            state.pull_offset = result.next_begin_offset
            if result.status is PullStatus.FOUND and result.msg_found_list:
                for msg in result.msg_found_list:
                    restore_retry_topic(msg, self.group)
                pq.put_message(result.msg_found_list)
                self._cache.put_nowait(
                    _ConsumeRequest(mq, state, generation, result.msg_found_list)
                )
            elif pq.msg_count == 0 and state.consume_offset < state.pull_offset:
                state.consume_offset = state.pull_offset
