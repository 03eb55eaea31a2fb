"""SimpleConsumer (RocketMQ 5's SimpleConsumer) on asyncio, over remoting POP.

Theory of operation: the consumer decides nothing about queues. ``receive`` pops up to
``max_message_num`` (≤ 32) messages of one subscribed topic from one broker (the next
(topic, broker) pair of the routes, round robin), all queues at once (queueId -1), long-polling
the broker for ``await_duration_s``; each message stays invisible to other receives for
``invisible_duration``. ``ack`` ends a message for the group; ``change_invisible_duration``
moves its next visibility (and renews its receipt handle, kept in the message's ``POP_CK``).
A message neither acked nor changed in time is received again with ``reconsume_times`` + 1.
For a FIFO group (``consumeMessageOrderly``) the broker hands out a queue's next messages only
once the previous ones of that queue are acked or expired, and an expired batch comes first
again. The consumer joins its client instance as a member (CONSUME_ACTIVELY, as RocketMQ's
proxy registers a simple consumer) for routes and heartbeats.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

from rocketq.client.aio import pop_api
from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.producer import start_trace_dispatcher
from rocketq.client.config import ClientConfig
from rocketq.client.message_selector import Subscription, build_subscription
from rocketq.client.trace.hooks import PopTraceHook
from rocketq.common.clock import now_ms
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.errors import ClientError, ConfigError, IllegalStateError
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumerData,
    ConsumeType,
    MessageModel,
)
from rocketq.remoting.protocol.consumer_bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
)
from rocketq.remoting.protocol.pop_headers import MAX_POP_MSG_NUMS
from rocketq.remoting.protocol.subscription import SubscriptionData


@dataclass(frozen=True, kw_only=True, slots=True)
class SimpleConsumerConfig(ClientConfig):
    consumer_group: str = "DEFAULT_CONSUMER"
    await_duration_s: float = 5.0  # how long a receive long-polls the broker

    def __post_init__(self) -> None:
        ClientConfig.__post_init__(self)
        if not self.consumer_group:
            raise ConfigError("consumer_group is empty")
        if self.await_duration_s < 0:
            raise ConfigError("await_duration_s must not be negative")


class SimpleConsumer:
    consume_type = ConsumeType.CONSUME_ACTIVELY

    def __init__(
        self,
        consumer_group: str = "DEFAULT_CONSUMER",
        *,
        namesrv_addr: str = "",
        config: SimpleConsumerConfig | None = None,
        **overrides: Any,
    ) -> None:
        base = config or SimpleConsumerConfig(
            consumer_group=consumer_group, namesrv_addr=namesrv_addr
        )
        self.config = dataclasses.replace(base, **overrides) if overrides else base
        self.group = self.config.consumer_group
        self._subscriptions: dict[str, SubscriptionData] = {}
        self._queues: dict[str, set[MessageQueue]] = {}
        self._instance: MQClientInstance | None = None
        self._turn = itertools.count()
        self._trace: PopTraceHook | None = None  # when enable_msg_trace is on

    # ------------------------------------------------------------------ setup

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        self._subscriptions[topic] = build_subscription(topic, expression, now_ms())

    def unsubscribe(self, topic: str) -> None:
        self._subscriptions.pop(topic, None)
        self._queues.pop(topic, None)

    @property
    def instance(self) -> MQClientInstance:
        if self._instance is None:
            raise IllegalStateError("the simple consumer is not started")
        return self._instance

    async def start(self) -> None:
        if self._instance is not None:
            raise IllegalStateError("the simple consumer is already started")
        if not self._subscriptions:
            raise ClientError("subscribe to a topic before start")
        instance = MQClientInstance.get(self.config)
        instance.register_consumer(self)
        self._instance = instance
        for topic in list(self._subscriptions):
            await instance.update_topic_route(topic)
        await instance.send_heartbeat_to_all()
        if self.config.enable_msg_trace:
            dispatcher = await start_trace_dispatcher(self.group, self.config)
            self._trace = PopTraceHook(self.group, dispatcher)

    async def shutdown(self) -> None:
        trace, self._trace = self._trace, None
        if trace is not None:
            await trace.dispatcher.shutdown()
        instance, self._instance = self._instance, None
        if instance is not None:
            await instance.unregister(consumer=self.group)

    async def __aenter__(self) -> SimpleConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    # ------------------------------------------------------------------ the API

    async def receive(
        self, max_message_num: int = 16, invisible_duration_s: float = 30.0
    ) -> list[MessageExt]:
        """Up to ``max_message_num`` messages, invisible for ``invisible_duration_s``; empty
        when none arrived within ``await_duration_s``."""
        if not 1 <= max_message_num <= MAX_POP_MSG_NUMS:
            raise ClientError(f"max_message_num must be 1..{MAX_POP_MSG_NUMS}")
        if invisible_duration_s <= 0:
            raise ClientError("invisible_duration_s must be positive")
        instance = self.instance
        topic, broker_name = await self._next_target()
        addr = await instance.find_broker_addr_or_refresh(broker_name, topic)
        result = await pop_api.pop_message(
            instance,
            addr,
            broker_name,
            self.group,
            self._subscriptions[topic],
            max_nums=max_message_num,
            invisible_ms=int(invisible_duration_s * 1000),
            poll_ms=int(self.config.await_duration_s * 1000),
        )
        if self._trace is not None:
            self._trace.received(result.msgs)
        return result.msgs

    async def ack(self, msg: MessageExt) -> None:
        """End ``msg`` for the group (refused once its invisible duration is over)."""
        handle = pop_api.handle_of(msg)
        addr = await self.instance.find_broker_addr_or_refresh(handle.broker_name, msg.topic)
        await pop_api.ack_message(self.instance, addr, self.group, msg)
        if self._trace is not None:
            self._trace.ended(msg, success=True)

    async def change_invisible_duration(self, msg: MessageExt, invisible_duration_s: float) -> None:
        """Make ``msg`` visible again ``invisible_duration_s`` from now; its handle renews."""
        handle = pop_api.handle_of(msg)
        addr = await self.instance.find_broker_addr_or_refresh(handle.broker_name, msg.topic)
        await pop_api.change_invisible_time(
            self.instance, addr, self.group, msg, int(invisible_duration_s * 1000)
        )
        if self._trace is not None:
            self._trace.ended(msg, success=False)

    async def _next_target(self) -> tuple[str, str]:
        """The next (topic, broker name) in round robin over the subscribed routes."""
        pairs = self._targets()
        if not pairs:
            for topic in list(self._subscriptions):
                await self.instance.update_topic_route(topic)
            pairs = self._targets()
        if not pairs:
            raise ClientError(f"no route for the topics {sorted(self._subscriptions)}")
        return pairs[next(self._turn) % len(pairs)]

    def _targets(self) -> list[tuple[str, str]]:
        return sorted(
            {(t, mq.broker_name) for t in self._subscriptions for mq in self._queues.get(t, ())}
        )

    # ------------------------------------------------------------------ ConsumerMember

    def consumer_data(self) -> ConsumerData:
        return ConsumerData(
            group_name=self.group,
            consume_type=self.consume_type,
            message_model=MessageModel.CLUSTERING,
            consume_from_where=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
            subscription_data_set=list(self._subscriptions.values()),
        )

    def subscribed_topics(self) -> set[str]:
        return set(self._subscriptions)

    def update_topic_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None:
        self._queues[topic] = set(mqs)

    async def do_rebalance(self) -> None:
        """Nothing to rebalance: the broker picks the queues of every pop."""

    async def persist_consumer_offset(self) -> None:
        """Nothing to persist: the broker keeps POP offsets."""

    async def consumer_running_info(self, *, with_jstack: bool) -> ConsumerRunningInfo:
        props = {"consumerGroup": self.group, "consumeType": self.consume_type.name}
        return ConsumerRunningInfo(
            properties=props, subscription_set=list(self._subscriptions.values())
        )

    async def consume_message_directly(
        self, msg: MessageExt, broker_name: str | None
    ) -> ConsumeMessageDirectlyResult:
        return ConsumeMessageDirectlyResult(remark="a simple consumer has no listener")

    async def reset_offset(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        """The broker resets POP offsets itself."""
