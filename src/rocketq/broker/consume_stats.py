"""How far a group is on this broker, computed once for GET_CONSUME_STATS (208), for
QUERY_TOPIC_CONSUME_BY_WHO (300) and for the exporter's ``rocketmq_group_diff`` family, so that
mqadmin consumerProgress, the dashboard and ``/metrics`` agree.

RocketMQ's AdminBrokerProcessor.getConsumeStats: for each read queue of a topic the group
consumes, ``brokerOffset`` is the queue's max offset and ``consumerOffset`` the committed one,
each at least 0, so a queue the group never committed on counts from offset 0
(``ConsumeStats.computeTotalDiff``). A topic the group's online consumers do not subscribe is
left out when they subscribe to anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocketq.remoting.protocol.admin_bodies import ConsumeStats, OffsetWrapper
from rocketq.remoting.protocol.bodies import MessageQueueData

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext


def topic_consumed_by(broker: BrokerContext, topic: str) -> set[str]:
    """QUERY_TOPIC_CONSUME_BY_WHO: the groups online on ``topic`` and those with offsets on it."""
    groups = {
        group
        for group, info in list(broker.consumer_manager.consumer_table.items())
        if topic in info.subscription_table
    }
    return groups | broker.consumer_offset_manager.which_group_by_topic(topic)


def consume_stats(broker: BrokerContext, group: str, topics: set[str]) -> ConsumeStats:
    """GET_CONSUME_STATS of ``group`` over ``topics`` (the store is read: not on the loop)."""
    stats = ConsumeStats()
    info = broker.consumer_manager.get_consumer_group_info(group)
    for topic in sorted(topics):
        config = broker.topic_config_manager.select_topic_config(topic)
        if config is None:
            continue
        if info is not None and info.subscription_table and topic not in info.subscription_table:
            continue
        for queue_id in range(config.read_queue_nums):
            queue = MessageQueueData(
                topic=topic, broker_name=broker.config.broker_name, queue_id=queue_id
            )
            stats.offset_table[queue] = offset_wrapper(broker, group, topic, queue_id)
    return stats


def offset_wrapper(broker: BrokerContext, group: str, topic: str, queue_id: int) -> OffsetWrapper:
    store = broker.message_store
    broker_offset = max(0, store.get_max_offset_in_queue(topic, queue_id))
    consumer_offset = max(0, broker.consumer_offset_manager.query_offset(group, topic, queue_id))
    last = 0
    if consumer_offset > 0:
        last = max(0, store.get_message_store_timestamp(topic, queue_id, consumer_offset - 1))
    return OffsetWrapper(
        broker_offset=broker_offset, consumer_offset=consumer_offset, last_timestamp=last
    )
