"""JSON bodies of client <-> broker requests: HEART_BEAT (34) HeartbeatData with its
ConsumerData and ProducerData, LOCK_BATCH_MQ / UNLOCK_BATCH_MQ (41, 42),
GET_CONSUMER_LIST_BY_GROUP (38) and CHECK_CLIENT_CONFIG (46) (RocketMQ's
``remoting/protocol/heartbeat`` and ``body``).

Enums are read by name (Java, ali-ons) or by ordinal (C++) and written by name, as fastjson
does; ``subVersion`` may be a number (Java) or a string (C++). A consumer sends
CheckClientRequestBody at start for each subscription that is not a TAG expression, so the
broker can refuse a filter it cannot run (``enablePropertyFilter``) or an expression that does
not compile (SUBSCRIPTION_PARSE_FAILED) before the first pull.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from rocketq.remoting.protocol.json_body import JsonBody, json_field
from rocketq.remoting.protocol.subscription import SubscriptionData


class ConsumeType(IntEnum):
    CONSUME_ACTIVELY = 0
    CONSUME_PASSIVELY = 1


class MessageModel(IntEnum):
    BROADCASTING = 0
    CLUSTERING = 1


class ConsumeFromWhere(IntEnum):
    CONSUME_FROM_LAST_OFFSET = 0
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = 1
    CONSUME_FROM_MIN_OFFSET = 2
    CONSUME_FROM_MAX_OFFSET = 3
    CONSUME_FROM_FIRST_OFFSET = 4
    CONSUME_FROM_TIMESTAMP = 5


@dataclass(slots=True, kw_only=True)
class ConsumerData(JsonBody):
    group_name: str
    consume_type: ConsumeType = ConsumeType.CONSUME_PASSIVELY
    message_model: MessageModel = MessageModel.CLUSTERING
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    subscription_data_set: list[SubscriptionData] = field(default_factory=list)
    unit_mode: bool = False


@dataclass(slots=True, kw_only=True)
class ProducerData(JsonBody):
    group_name: str


@dataclass(slots=True, kw_only=True)
class HeartbeatData(JsonBody):
    client_id: str = field(metadata=json_field("clientID"))
    producer_data_set: list[ProducerData] = field(default_factory=list)
    consumer_data_set: list[ConsumerData] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQueueData(JsonBody):
    """A MessageQueue as it appears in JSON bodies (same fields as common's MessageQueue)."""

    topic: str
    broker_name: str
    queue_id: int


@dataclass(slots=True, kw_only=True)
class LockBatchRequestBody(JsonBody):
    consumer_group: str
    client_id: str
    mq_set: list[MessageQueueData] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class UnlockBatchRequestBody(LockBatchRequestBody):
    only_this_broker: bool = False


@dataclass(slots=True, kw_only=True)
class LockBatchResponseBody(JsonBody):
    lock_ok_mq_set: list[MessageQueueData] = field(
        default_factory=list, metadata=json_field("lockOKMQSet")
    )


@dataclass(slots=True, kw_only=True)
class ConsumerListBody(JsonBody):
    consumer_id_list: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class CheckClientRequestBody(JsonBody):
    client_id: str
    group: str
    subscription_data: SubscriptionData
