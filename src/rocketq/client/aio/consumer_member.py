"""The consumer as its client instance sees it (MQConsumerInner).

Theory of operation: the instance keeps one member per group and never reaches into it. Its
timers ask for heartbeat data, subscribed topics, a rebalance and an offset persist; what a
broker relays from an admin (ClientRemotingProcessor: running info 307, consume directly 309,
reset offset 220) is answered by the member itself, so the processor needs only this protocol.
It lives in its own module so the processor, which the instance builds, imports no consumer.
"""

from __future__ import annotations

from typing import Protocol

from rocketq.common.message import MessageExt, MessageQueue
from rocketq.remoting.protocol.bodies import ConsumerData, ConsumeType
from rocketq.remoting.protocol.consumer_bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
)


class ConsumerMember(Protocol):
    group: str

    @property
    def consume_type(self) -> ConsumeType: ...

    def consumer_data(self) -> ConsumerData: ...
    def subscribed_topics(self) -> set[str]: ...
    def update_topic_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None: ...
    async def do_rebalance(self) -> None: ...
    async def persist_consumer_offset(self) -> None: ...

    async def consumer_running_info(self, *, with_jstack: bool) -> ConsumerRunningInfo:
        """MQConsumerInner.consumerRunningInfo: settings, subscriptions, queues, statistics."""
        ...

    async def consume_message_directly(
        self, msg: MessageExt, broker_name: str | None
    ) -> ConsumeMessageDirectlyResult:
        """ConsumeMessageService.consumeMessageDirectly: run the listener on this message."""
        ...

    async def reset_offset(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        """MQClientInstance.resetOffset: move the topic's queues to these offsets."""
        ...
