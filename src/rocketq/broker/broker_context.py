"""BrokerContext: what the request processors and the broker's services use of the broker.

The BrokerController builds the parts and satisfies this protocol; processors and services
(``processors/*``, ``schedule.py``) are typed against it, so they depend on the parts, not on
the controller, and the controller can import them without a loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from rocketq.broker.acl.access_validator import PlainAccessValidator
from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.broker.client_manager import ConsumerManager, ProducerManager
from rocketq.broker.config import BrokerConfig
from rocketq.broker.long_polling import PullRequest, PullRequestHoldService
from rocketq.broker.metadata_acks import SlaveVersionAcks
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.pop.pop_service import PopService
from rocketq.broker.rebalance_lock import RebalanceLockManager
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.transaction import TransactionalMessageService
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.rpc_stats import RpcLatencyStats
from rocketq.remoting.server import RemotingServer
from rocketq.store.message_store import MessageStore


class DelayOffsets(Protocol):
    """What admin calls read of the ScheduleMessageService: the delay-level offsets."""

    @property
    def offset_table(self) -> dict[int, int]: ...


class BrokerContext(Protocol):
    config: BrokerConfig
    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager
    subscription_group_manager: SubscriptionGroupManager
    producer_manager: ProducerManager
    consumer_manager: ConsumerManager
    rebalance_lock_manager: RebalanceLockManager
    remoting_server: RemotingServer
    pull_request_hold_service: PullRequestHoldService
    pull_wakeup: Callable[[PullRequest], Awaitable[None]] | None
    access_validator: PlainAccessValidator | None
    transactional_message_service: TransactionalMessageService
    pop_service: PopService
    broker_stats_manager: BrokerStatsManager
    rpc_latency_stats: RpcLatencyStats
    slave_version_acks: SlaveVersionAcks
    start_time_ms: int

    @property
    def message_store(self) -> MessageStore: ...

    @property
    def schedule_message_service(self) -> DelayOffsets | None: ...

    @property
    def broker_addr(self) -> str: ...

    @property
    def store_host(self) -> tuple[str, int]: ...

    async def register_broker_all(self) -> None: ...

    async def register_increment_broker_data(
        self, configs: list[TopicConfig], data_version: DataVersion
    ) -> None: ...

    def register_broker_all_soon(self) -> None: ...
