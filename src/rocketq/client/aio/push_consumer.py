"""PushConsumer (DefaultMQPushConsumer) on asyncio.

Theory of operation: ``start`` registers with the shared MQClientInstance, which refreshes routes,
heartbeats and triggers rebalances. Each queue the rebalance assigns gets a ProcessQueue and one
pull-loop task: it waits while the queue is over its flow-control limits
(``pull_threshold_for_queue`` messages, ``pull_threshold_size_for_queue_bytes``, and for
concurrent consumers a span over ``consume_concurrently_max_span`` offsets), long-polls the
broker (suspend ``broker_suspend_max_time_s``), and hands what it found to the consume service.
Offsets are recorded increase-only in memory, piggy-backed on pulls, persisted by the instance's
timer, when a queue moves away, and at shutdown. In clustering mode the group's retry topic
``%RETRY%<group>`` is subscribed too, and offsets live on the broker; broadcasting keeps them in
a local file.

With ``client_rebalance=False`` the consumer runs RocketMQ 5's POP mode instead of the pull
path: no queue is assigned, the broker picks the queues of each pop (``PopConsumeService``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from pathlib import Path
from typing import Any

from rocketq.client.aio import consumer_admin
from rocketq.client.aio.consume_service import ConsumeService, MessageListener
from rocketq.client.aio.consumer_core import ConsumerCore
from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.offset_store import (
    LocalOffsetStore,
    OffsetStore,
    RemoteBrokerOffsetStore,
    default_offset_store_dir,
)
from rocketq.client.aio.pop_consume_service import PopConsumeService
from rocketq.client.aio.producer import start_trace_dispatcher
from rocketq.client.aio.pull_api import route_moved
from rocketq.client.aio.pull_chain import PullChain
from rocketq.client.aio.rebalance_impl import RebalanceImpl
from rocketq.client.allocate_strategy import allocate_strategy
from rocketq.client.config import PushConsumerConfig
from rocketq.client.message_selector import Subscription, build_subscription
from rocketq.client.process_queue import ProcessQueue
from rocketq.client.status import PullResult, PullStatus
from rocketq.common.clock import now_ms
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.topic import retry_topic
from rocketq.errors import ClientError, IllegalStateError, RocketQError
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, ConsumeType, MessageModel
from rocketq.remoting.protocol.consumer_bodies import ConsumeMessageDirectlyResult
from rocketq.remoting.protocol.headers import ConsumerSendMsgBackRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData, build_subscription_data
from rocketq.remoting.protocol.topic_route import MASTER_ID

log = logging.getLogger(__name__)

DEFAULT_MAX_RECONSUME_TIMES = 16
ORDERLY_UNLOCK_WAIT_S = 1.0


def consumer_config(
    cls: type[Any], group: str, namesrv_addr: str, config: Any, overrides: dict[str, Any]
) -> Any:
    base = config or cls(consumer_group=group, namesrv_addr=namesrv_addr)
    model = overrides.get("message_model")
    if isinstance(model, str):
        overrides["message_model"] = MessageModel[model]
    where = overrides.get("consume_from_where")
    if isinstance(where, str):
        overrides["consume_from_where"] = ConsumeFromWhere[where]
    return dataclasses.replace(base, **overrides) if overrides else base


class PushConsumer(ConsumerCore):
    consume_type = ConsumeType.CONSUME_PASSIVELY
    config: PushConsumerConfig

    def __init__(
        self,
        consumer_group: str = "DEFAULT_CONSUMER",
        *,
        namesrv_addr: str = "",
        config: PushConsumerConfig | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__()
        self.config = consumer_config(
            PushConsumerConfig, consumer_group, namesrv_addr, config, overrides
        )
        self.group = self.config.consumer_group
        self._listener: MessageListener | None = None
        self._orderly = False
        self._consume: ConsumeService | None = None
        self.offset_store: OffsetStore | None = None
        self._pull_tasks: dict[MessageQueue, asyncio.Task[None]] = {}
        self._lock_task: asyncio.Task[None] | None = None
        self._pop: PopConsumeService | None = None

    # ------------------------------------------------------------------ setup

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        self._add_subscription(topic, expression)

    def unsubscribe(self, topic: str) -> None:
        self._subscriptions.pop(topic, None)
        if self._rebalance is not None:
            self._rebalance.subscription_inner.pop(topic, None)

    def register_message_listener(
        self, listener: MessageListener, *, orderly: bool = False
    ) -> None:
        self._listener = listener
        self._orderly = orderly

    def register_message_listener_orderly(self, listener: MessageListener) -> None:
        self.register_message_listener(listener, orderly=True)

    @property
    def clustering(self) -> bool:
        return self.config.message_model is MessageModel.CLUSTERING

    @property
    def rebalance(self) -> RebalanceImpl:
        if self._rebalance is None:
            raise IllegalStateError("the consumer is not started")
        return self._rebalance

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._instance is not None:
            raise IllegalStateError("the consumer is already started")
        if self._listener is None:
            raise ClientError("register a message listener before start")
        if not self._subscriptions:
            raise ClientError("subscribe to a topic before start")
        pop_mode = not self.config.client_rebalance
        if pop_mode and not self.clustering:
            raise ClientError("POP mode (client_rebalance=False) needs CLUSTERING")
        instance = MQClientInstance.get(self.config)
        rebalance = RebalanceImpl(
            instance,
            self.group,
            self.config.message_model,
            allocate_strategy(self.config.allocate_strategy),
            self,
        )
        rebalance.lock_max_live_time_s = self.config.lock_max_live_time_s
        for topic, expression in self._subscriptions.items():
            rebalance.subscription_inner[topic] = build_subscription(topic, expression, now_ms())
        if self.clustering and not pop_mode:  # a POP retry topic is the broker's business
            retry = retry_topic(self.group)
            rebalance.subscription_inner[retry] = build_subscription_data(retry, "*", now_ms())
        if self.clustering:
            self.offset_store = RemoteBrokerOffsetStore(instance, self.group)
        else:
            root = self.config.offset_store_dir or default_offset_store_dir()
            self.offset_store = LocalOffsetStore(Path(root), instance.client_id, self.group)
        self.offset_store.load()
        self._consume = ConsumeService(self.config, self._listener, self, orderly=self._orderly)
        if self.config.enable_msg_trace:
            self._consume.trace = await start_trace_dispatcher(self.group, self.config)
        if pop_mode:
            self._pop = PopConsumeService(
                instance, self.config, self._consume, lambda: rebalance.subscription_inner,
                orderly=self._orderly,
            )  # fmt: skip
        self._instance, self._rebalance, self._running = instance, rebalance, True
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
        if self._orderly and self.clustering and self._pop is None:
            self._lock_task = asyncio.get_running_loop().create_task(self._lock_loop())
        instance.rebalance_immediately()
        self.start_timestamp_ms = now_ms()

    async def shutdown(self, await_termination_s: float = 10.0) -> None:
        instance = self._instance
        if instance is None:
            return
        self._running = False
        tasks = list(self._pull_tasks.values())
        if self._lock_task is not None:
            tasks.append(self._lock_task)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._pull_tasks.clear()
        if self._pop is not None:
            await self._pop.shutdown(await_termination_s)
        if self._consume is not None:
            await self._consume.shutdown(await_termination_s)
            trace, self._consume.trace = self._consume.trace, None
            if trace is not None:
                await trace.shutdown()
        await self.persist_consumer_offset()
        if self._orderly and self.clustering and self._pop is None:
            await self.rebalance.unlock(sorted(self.rebalance.process_queue_table))
        for pq in self.rebalance.process_queue_table.values():
            pq.dropped = True
        self._instance = None
        await instance.unregister(consumer=self.group)

    async def __aenter__(self) -> PushConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    async def _lock_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.lock_interval_s)
            await self.rebalance.lock_all()

    # ------------------------------------------------------------------ ConsumerMember

    async def do_rebalance(self) -> None:
        if self._running and self._pop is not None:
            await self._pop.refresh()
        elif self._running:
            await self.rebalance.do_rebalance(is_order=self._orderly)

    async def persist_consumer_offset(self) -> None:
        if self.offset_store is not None and self._rebalance is not None:
            await self.offset_store.persist_all(set(self._rebalance.process_queue_table))

    def assigned_queues(self) -> set[MessageQueue]:
        return set(self._rebalance.process_queue_table) if self._rebalance else set()

    def is_consume_orderly(self) -> bool:
        return self._orderly

    def core_pool_size(self) -> int:
        return self.config.consume_thread_max

    async def consume_message_directly(
        self, msg: MessageExt, broker_name: str | None
    ) -> ConsumeMessageDirectlyResult:
        return await consumer_admin.consume_message_directly(
            self._consume, self.group, msg, broker_name
        )

    async def reset_offset(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        await consumer_admin.reset_offset(
            topic,
            offsets,
            group=self.group,
            rebalance=self._rebalance,
            store=self.offset_store,
            pull_tasks=self._pull_tasks,
            rebalance_now=self._rebalance_now,
        )

    def _rebalance_now(self) -> None:
        if self._instance is not None:
            self._instance.rebalance_immediately()

    # ------------------------------------------------------------------ RebalanceHooks

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        task = self._pull_tasks.pop(mq, None)
        if task is not None:
            task.cancel()
        assert self.offset_store is not None
        await self.offset_store.persist_all({mq})
        self.offset_store.remove_offset(mq)
        if self._orderly and self.clustering:
            # let a batch still in the listener finish before another client may lock the
            # queue (ConsumeMessageOrderlyService's consume lock, waited for at most 1 s)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + ORDERLY_UNLOCK_WAIT_S
            while pq.consume_running and loop.time() < deadline:  # noqa: ASYNC110 -- set by the consume task, bounded 1 s
                await asyncio.sleep(0.01)
            await self.rebalance.unlock([mq])
        return True

    def dispatch_pull_request(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        assert self.offset_store is not None
        if not self._running:  # a rebalance that was under way when shutdown began
            pq.dropped = True
            return
        self.offset_store.load_offset(mq, offset)
        loop = asyncio.get_running_loop()
        self._pull_tasks[mq] = loop.create_task(self._pull_loop(mq, pq, offset))

    # ------------------------------------------------------------------ ConsumerHooks

    def record_offset(self, mq: MessageQueue, offset: int) -> None:
        assert self.offset_store is not None
        self.offset_store.update_offset(mq, offset, increase_only=True)

    async def send_message_back(self, msg: MessageExt, mq: MessageQueue) -> bool:
        instance = self._instance
        if instance is None:
            return False
        max_times = self.config.max_reconsume_times
        header = ConsumerSendMsgBackRequestHeader(
            offset=msg.commitlog_offset,
            group=self.group,
            delay_level=0,
            origin_msg_id=msg.msg_id,
            origin_topic=msg.topic,
            max_reconsume_times=DEFAULT_MAX_RECONSUME_TIMES if max_times < 0 else max_times,
        )
        try:
            addr = await instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)
            await instance.api.consumer_send_message_back(addr, header)
        except (RocketQError, OSError) as exc:
            log.warning("send back of %s failed: %r", msg.msg_id, exc)
            return False
        return True

    def record_consume(self, topic: str, rt_ms: float, ok: int, failed: int) -> None:
        if self._instance is not None:
            self._instance.consumer_stats_manager.inc_consume(self.group, topic, rt_ms, ok, failed)

    def lock_valid(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        return not self.clustering or self.rebalance.lock_valid(pq)

    async def lock(self, mq: MessageQueue) -> bool:
        return await self.rebalance.lock(mq)

    # ------------------------------------------------------------------ pulling

    def _over_limits(self, pq: ProcessQueue) -> bool:
        c = self.config
        if pq.msg_count > c.pull_threshold_for_queue:
            return True
        if pq.msg_size > c.pull_threshold_size_for_queue_bytes:
            return True
        return not self._orderly and pq.max_span() > c.consume_concurrently_max_span

    def may_pull_now(self, pq: ProcessQueue) -> bool:
        """The pull loop's checks before a pull, but the subscription's: a pull may go now."""
        return self._running and not pq.dropped and not self._over_limits(pq)

    def commit_offset_of(self, mq: MessageQueue) -> int:
        """The offset a pull of ``mq`` commits (0: none to commit)."""
        store = self.offset_store
        assert store is not None
        return max(store.read(mq), 0) if self.clustering and mq in store.advanced else 0

    def took_found(
        self,
        instance: MQClientInstance,
        consume: ConsumeService,
        mq: MessageQueue,
        pq: ProcessQueue,
        result: PullResult,
        pull_ms: float,
    ) -> None:
        """A pull's found messages into the process queue and to the listener."""
        found = result.msg_found_list
        dispatch = pq.put_message(found)
        # the listener has them before the next pull is written (submit runs the batch's
        # first step at once), and before the pull's figures
        consume.submit(found, pq, mq, dispatch)
        instance.consumer_stats_manager.inc_pull(self.group, mq.topic, pull_ms, len(found))

    async def _start_pull(
        self,
        instance: MQClientInstance,
        consume: ConsumeService,
        mq: MessageQueue,
        pq: ProcessQueue,
        sub: SubscriptionData,
        offset: int,
    ) -> PullChain:
        """Write a pull of ``mq`` from ``offset`` on a PullChain: its responses are taken on
        the reader while they find messages and the next pull may go at once
        (pull_chain.py); its ``future`` tells the loop where the chain stopped."""
        broker_id = instance.pull_from_which_node.get(mq, MASTER_ID)
        addr, is_slave = await instance.find_broker_addr_in_subscribe_or_refresh(
            mq.broker_name, mq.topic, broker_id
        )
        instance.pull_addr_table[mq] = addr  # where a failure happened, for route_moved
        channel = await instance.api.remoting.get_channel(addr)
        chain = PullChain(self, instance, consume, mq, pq, addr, channel)
        # a slave does not take the commit offset a pull carries
        chain.pull(sub, offset, 0 if is_slave else self.commit_offset_of(mq))
        return chain

    async def _pull_loop(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        c = self.config
        instance, consume = self._instance, self._consume
        assert self.offset_store is not None
        if instance is None or consume is None:
            return
        while self._running and not pq.dropped:
            if self._over_limits(pq):
                await pq.wait_for_space(c.pull_time_delay_when_flow_control_s)
                continue
            sub = self.rebalance.subscription_inner.get(mq.topic)
            if sub is None:
                await asyncio.sleep(c.pull_time_delay_when_exception_s)
                continue
            chain: PullChain | None = None
            try:
                chain = await self._start_pull(instance, consume, mq, pq, sub, offset)
                result, pull_ms, offset = await chain.future
            except (RocketQError, OSError) as exc:
                if chain is not None:  # the failed pull's offset: the chain took the ones before
                    offset = chain.offset
                log.info("pull of %s failed: %r", mq, exc)
                if not await route_moved(instance, mq, exc):
                    await asyncio.sleep(c.pull_time_delay_when_exception_s)
                continue
            finally:
                if chain is not None:
                    chain.stop()
            if result is None:  # the chain took what it found and handed over
                continue
            found = result.msg_found_list
            if pq.is_dropped():
                instance.consumer_stats_manager.inc_pull(self.group, mq.topic, pull_ms, len(found))
                return
            offset = result.next_begin_offset
            if result.status is PullStatus.FOUND and found:
                self.took_found(instance, consume, mq, pq, result, pull_ms)
                continue
            instance.consumer_stats_manager.inc_pull(self.group, mq.topic, pull_ms, 0)
            if result.status is PullStatus.OFFSET_ILLEGAL:
                log.warning("offset of %s is illegal, moving to %d", mq, offset)
                self.offset_store.update_offset(mq, offset, increase_only=False)
            elif pq.msg_count == 0:
                self.offset_store.update_offset(mq, offset, increase_only=True)
