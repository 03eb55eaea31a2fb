"""rocketq.broker: the broker (RocketMQ's BrokerController and its processors).

Modules:
    controller        BrokerController: builds the parts, starts and stops them in order
    broker_context    BrokerContext: what processors and services use of the broker
    config            BrokerConfig (broker.conf); config_manager: the JSON config files
    topic_config      TopicConfigManager (topics.json); subscription_group, offsets
    client_manager    producers and consumers by channel; rebalance_lock
    long_polling      PullRequestHoldService; filter: ExpressionMessageFilter
    store_future      awaiting the threaded store's futures on the loop (BurstWaker)
    schedule          ScheduleMessageService (delay levels)
    outer_api         REGISTER_BROKER / UNREGISTER_BROKER to the name servers
    processors/       one module per RocketMQ request processor
"""

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.config import BrokerConfig, BrokerRole
from rocketq.broker.controller import BrokerController

__all__ = ["BrokerConfig", "BrokerContext", "BrokerController", "BrokerRole"]
