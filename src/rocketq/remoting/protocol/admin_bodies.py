"""JSON bodies of the admin codes: connections (GET_CONSUMER_CONNECTION_LIST 203,
GET_PRODUCER_CONNECTION_LIST 204), consume and topic stats (GET_CONSUME_STATS 208,
GET_TOPIC_STATS_INFO 202) and group lists (RocketMQ's ``remoting/protocol/body`` and
``admin``: ConsumerConnection, ProducerConnection, Connection, ConsumeStats, OffsetWrapper,
TopicStatsTable, TopicOffset, GroupList).

Shapes are fastjson's output of RocketMQ 4.9.8's classes: keys sorted, enums by name,
``Map<MessageQueue, ...>`` with object keys (``ObjectKeyBody``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    MessageQueueData,
)
from rocketq.remoting.protocol.json_body import JsonBody, ObjectKeyBody, json_field
from rocketq.remoting.protocol.subscription import SubscriptionData

# ----------------------------------------------------------------------------- topics


@dataclass(slots=True, kw_only=True)
class CreateTopicListRequestBody(JsonBody):
    """UPDATE_AND_CREATE_TOPIC_LIST (18): RocketMQ 5's CreateTopicListRequestBody."""

    topic_config_list: list[TopicConfig] = field(default_factory=list)


# ----------------------------------------------------------------------------- connections


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection(JsonBody):
    client_id: str
    client_addr: str
    language: str = "JAVA"
    version: int = 0


@dataclass(slots=True, kw_only=True)
class ProducerConnection(JsonBody):
    connection_set: list[Connection] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerInfo(JsonBody):
    """One producer of RocketMQ 5's GET_ALL_PRODUCER_INFO (body/ProducerInfo)."""

    client_id: str
    remote_ip: str = field(default="", metadata=json_field("remoteIP"))
    language: str = "JAVA"
    version: int = 0
    last_update_timestamp: int = 0


@dataclass(slots=True, kw_only=True)
class ProducerTableInfo(JsonBody):
    """GET_ALL_PRODUCER_INFO (328): producer group -> its producers (body/ProducerTableInfo)."""

    data: dict[str, list[ProducerInfo]] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ConsumerConnection(JsonBody):
    connection_set: list[Connection] = field(default_factory=list)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict)
    consume_type: ConsumeType | None = None
    message_model: MessageModel | None = None
    consume_from_where: ConsumeFromWhere | None = None


# ----------------------------------------------------------------------------- stats


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetWrapper(JsonBody):
    broker_offset: int = 0
    consumer_offset: int = 0
    last_timestamp: int = 0


@dataclass(slots=True, kw_only=True)
class ConsumeStats(ObjectKeyBody):
    offset_table: dict[MessageQueueData, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0

    def compute_total_diff(self) -> int:
        """ConsumeStats.computeTotalDiff: messages not yet consumed over every queue."""
        return sum(w.broker_offset - w.consumer_offset for w in self.offset_table.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicOffset(JsonBody):
    min_offset: int = 0
    max_offset: int = 0
    last_update_timestamp: int = 0


@dataclass(slots=True, kw_only=True)
class TopicStatsTable(ObjectKeyBody):
    offset_table: dict[MessageQueueData, TopicOffset] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class GroupList(JsonBody):
    group_list: list[str] = field(default_factory=list, metadata=json_field(sort=True))
