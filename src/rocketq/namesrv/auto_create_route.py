"""A route for a topic that does not exist yet, on brokers that would create it.

RocketMQ's name server answers TOPIC_NOT_EXIST for a topic no broker registered. The Java and
C++ clients then fall back to the route of ``TBW102`` (AUTO_CREATE_TOPIC_KEY_TOPIC) and send
with ``defaultTopic=TBW102``, so a broker with ``autoCreateTopicEnable=true`` creates the topic
on the first send. ali-ons 3.12.0 has no such fallback: TOPIC_NOT_EXIST reaches ``send()``
("No topic route info in name server for the topic", ali-sdk/ali-ons#90).

A broker registers TBW102 only when it auto-creates topics, and with PERM_INHERIT set. So the
name server can answer, for an unknown ordinary topic, what those clients would have built
themselves: TBW102's brokers, with the queue counts cut to the clients' default
``defaultTopicQueueNums`` (4, the count the broker creates the topic with) and PERM_INHERIT
cleared. Once the broker has created the topic and registered it, the real route answers.
``NamesrvConfig.auto_create_topic_route_enable`` turns this on; it is off by default (RocketMQ's
answer, which tools such as ``examineTopicRouteInfo`` after a topic's deletion rely on) and on
in the ``rocketq namesrv`` and ``rocketq server`` commands (``--no-auto-create-topic-route``).
"""

from __future__ import annotations

from rocketq.common.topic import AUTO_CREATE_TOPIC_KEY_TOPIC, is_system_topic, validate_topic
from rocketq.common.topic_config import PERM_INHERIT
from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.remoting.protocol.topic_route import QueueData, TopicRouteData

DEFAULT_TOPIC_QUEUE_NUMS = 4  # DefaultMQProducer.defaultTopicQueueNums, ali-ons' too


def is_auto_creatable_topic(topic: str) -> bool:
    """An ordinary topic name: valid, not a retry/DLQ (``%``) or system topic (TBW102 is one)."""
    return validate_topic(topic) is None and "%" not in topic and not is_system_topic(topic)


def pickup_auto_create_route(route_info: RouteInfoManager, topic: str) -> TopicRouteData | None:
    """TBW102's route narrowed to inheritable brokers, or None when no broker auto-creates."""
    if not is_auto_creatable_topic(topic):
        return None
    template = route_info.pickup_topic_route_data(AUTO_CREATE_TOPIC_KEY_TOPIC)
    if template is None:
        return None
    queue_datas = [
        QueueData(
            broker_name=q.broker_name,
            read_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.read_queue_nums),
            write_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.write_queue_nums),
            perm=q.perm & ~PERM_INHERIT,
        )
        for q in template.queue_datas
        if q.perm & PERM_INHERIT
    ]
    names = {q.broker_name for q in queue_datas}
    brokers = [b for b in template.broker_datas if b.broker_name in names]
    if not brokers:
        return None
    return TopicRouteData(
        queue_datas=queue_datas,
        broker_datas=brokers,
        filter_server_table=dict(template.filter_server_table),
    )
