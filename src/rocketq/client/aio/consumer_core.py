"""What the push and the lite pull consumer share: subscriptions, the rebalance hooks the
client instance calls (heartbeat data, route updates, where a new queue starts) and the
running info an admin asks for (ConsumerMember)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from rocketq.client.aio import consumer_admin
from rocketq.client.aio.mq_admin import MQAdmin
from rocketq.client.aio.rebalance_impl import compute_pull_from_where
from rocketq.client.message_selector import Subscription, build_subscription
from rocketq.common.clock import now_ms
from rocketq.common.message import MessageQueue
from rocketq.errors import RocketQError
from rocketq.remoting.protocol.bodies import ConsumerData, ConsumeType
from rocketq.remoting.protocol.consumer_bodies import ConsumerRunningInfo
from rocketq.remoting.protocol.subscription import EXPRESSION_TYPE_TAG
from rocketq.remoting.protocol.topic_route import MASTER_ID

if TYPE_CHECKING:
    from rocketq.client.aio.instance import MQClientInstance
    from rocketq.client.aio.offset_store import OffsetStore
    from rocketq.client.aio.rebalance_impl import RebalanceImpl
    from rocketq.client.config import LitePullConsumerConfig, PushConsumerConfig


class ConsumerCore(MQAdmin):
    consume_type: ConsumeType
    config: PushConsumerConfig | LitePullConsumerConfig
    group: str
    offset_store: OffsetStore | None

    def __init__(self) -> None:
        self._subscriptions: dict[str, Subscription] = {}
        self._instance: MQClientInstance | None = None
        self._rebalance: RebalanceImpl | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._running = False
        self.start_timestamp_ms = 0  # when start() finished (ConsumerRunningInfo)

    def _add_subscription(self, topic: str, expression: Subscription) -> None:
        """Validate and record; a started consumer heartbeats it and rebalances at once."""
        data = build_subscription(topic, expression, now_ms())
        self._subscriptions[topic] = expression
        if self._rebalance is not None and self._instance is not None:
            self._rebalance.subscription_inner[topic] = data
            task = asyncio.get_running_loop().create_task(self._announce_subscription())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _announce_subscription(self) -> None:
        instance = self._instance
        if instance is not None:
            with contextlib.suppress(RocketQError, OSError):
                await instance.send_heartbeat_to_all()
            instance.rebalance_immediately()

    async def check_client_in_broker(self) -> None:
        """MQClientInstance.checkClientInBroker: every master accepts the SQL92 subscriptions.

        A broker without enablePropertyFilter, or an expression it cannot compile, makes
        ``start`` fail with the broker's reason instead of pulls that are refused later.
        """
        instance, rebalance = self._instance, self._rebalance
        if instance is None or rebalance is None:
            return
        for sub in list(rebalance.subscription_inner.values()):
            if sub.expression_type in ("", EXPRESSION_TYPE_TAG):
                continue
            for addrs in list(instance.broker_addr_table.values()):
                addr = addrs.get(MASTER_ID)
                if addr is not None:
                    await instance.api.check_client_config(
                        addr, self.group, instance.client_id, sub
                    )

    # ------------------------------------------------------------------ ConsumerMember

    def consumer_data(self) -> ConsumerData:
        subs = list(self._rebalance.subscription_inner.values()) if self._rebalance else []
        return ConsumerData(
            group_name=self.group,
            consume_type=self.consume_type,
            message_model=self.config.message_model,
            consume_from_where=self.config.consume_from_where,
            subscription_data_set=subs,
        )

    def subscribed_topics(self) -> set[str]:
        return set(self._rebalance.subscription_inner) if self._rebalance else set()

    def update_topic_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None:
        """Keep the topic's queues; when a route read after a broker failed (or the poll)
        changed them, rebalance now instead of at the next 20 s round."""
        if self._rebalance is not None:
            table = self._rebalance.topic_subscribe_info_table
            before = table.get(topic)
            table[topic] = mqs
            if before is not None and before != mqs and self._instance is not None:
                self._instance.rebalance_immediately()

    async def compute_pull_from_where(self, mq: MessageQueue) -> int:
        if self._instance is None or self.offset_store is None or not self._running:
            return -1
        return await compute_pull_from_where(self._instance, self.offset_store, self.config, mq)

    def is_consume_orderly(self) -> bool:
        """DefaultMQPushConsumerImpl.consumeOrderly; only a push consumer has a listener."""
        return False

    def core_pool_size(self) -> int:
        """The consume service's threads (ConsumeMessageService.getCorePoolSize)."""
        return 1

    async def consumer_running_info(self, *, with_jstack: bool) -> ConsumerRunningInfo:
        instance = self._instance
        return await consumer_admin.consumer_running_info(
            self.config,
            orderly=self.is_consume_orderly(),
            core_pool_size=self.core_pool_size(),
            start_timestamp_ms=self.start_timestamp_ms,
            rebalance=self._rebalance,
            offset_store=self.offset_store,
            stats=instance.consumer_stats_manager if instance is not None else None,
            with_jstack=with_jstack,
        )
