"""PopContext: what the POP parts use of the broker (the BrokerController satisfies it), so
``broker/pop`` depends on the parts and ``broker_context`` may name the PopService."""

from __future__ import annotations

from typing import Protocol

from rocketq.broker.config import BrokerConfig
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.store.message_store import MessageStore


class PopContext(Protocol):
    config: BrokerConfig
    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager
    subscription_group_manager: SubscriptionGroupManager

    @property
    def message_store(self) -> MessageStore: ...

    @property
    def store_host(self) -> tuple[str, int]: ...
