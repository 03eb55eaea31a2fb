"""JSON bodies of client <-> broker requests (remoting.md §3.2.3, §3.2.5, §3.2.11, §6.2).

Enums are read by name (Java, ali-ons) or by ordinal (C++) and written by name, as fastjson
does. ``subVersion`` may be a number (Java) or a string (C++). Route and registration bodies
live in ``register_broker_body`` and ``topic_route``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Self, TypeVar

from rocketq.common.json_body import JsonBody, as_bool, as_int, as_object, as_str
from rocketq.common.subscription import SubscriptionData
from rocketq.errors import RemotingCommandError


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


_E = TypeVar("_E", bound=IntEnum)


def as_enum(enum: type[_E], obj: dict[str, Any], key: str, default: _E) -> _E:
    """An enum given by name or by ordinal."""
    value = obj.get(key)
    if value is None:
        return default
    try:
        if isinstance(value, str) and not value.lstrip("-").isdigit():
            return enum[value]
        return enum(int(value))
    except (KeyError, ValueError):
        raise RemotingCommandError(
            f"body field {key} is not a {enum.__name__}: {value!r}"
        ) from None


def _objects(obj: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [as_object(item, key) for item in value]


@dataclass(slots=True, kw_only=True)
class ConsumerData(JsonBody):
    group_name: str
    consume_type: ConsumeType = ConsumeType.CONSUME_PASSIVELY
    message_model: MessageModel = MessageModel.CLUSTERING
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    subscription_data_set: list[SubscriptionData] = field(default_factory=list)
    unit_mode: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "consumeFromWhere": self.consume_from_where.name,
            "consumeType": self.consume_type.name,
            "groupName": self.group_name,
            "messageModel": self.message_model.name,
            "subscriptionDataSet": [s.to_json() for s in self.subscription_data_set],
            "unitMode": self.unit_mode,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            group_name=as_str(obj, "groupName"),
            consume_type=as_enum(ConsumeType, obj, "consumeType", ConsumeType.CONSUME_PASSIVELY),
            message_model=as_enum(MessageModel, obj, "messageModel", MessageModel.CLUSTERING),
            consume_from_where=as_enum(
                ConsumeFromWhere,
                obj,
                "consumeFromWhere",
                ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
            ),
            subscription_data_set=[
                SubscriptionData.from_json(s) for s in _objects(obj, "subscriptionDataSet")
            ],
            unit_mode=as_bool(obj, "unitMode"),
        )


@dataclass(slots=True, kw_only=True)
class ProducerData(JsonBody):
    group_name: str

    def to_json(self) -> dict[str, Any]:
        return {"groupName": self.group_name}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(group_name=as_str(obj, "groupName"))


@dataclass(slots=True, kw_only=True)
class HeartbeatData(JsonBody):
    client_id: str
    producer_data_set: list[ProducerData] = field(default_factory=list)
    consumer_data_set: list[ConsumerData] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "clientID": self.client_id,
            "consumerDataSet": [c.to_json() for c in self.consumer_data_set],
            "producerDataSet": [p.to_json() for p in self.producer_data_set],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            client_id=as_str(obj, "clientID"),
            producer_data_set=[ProducerData.from_json(p) for p in _objects(obj, "producerDataSet")],
            consumer_data_set=[ConsumerData.from_json(c) for c in _objects(obj, "consumerDataSet")],
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQueueData(JsonBody):
    """A MessageQueue as it appears in JSON bodies (same fields as common's MessageQueue)."""

    topic: str
    broker_name: str
    queue_id: int

    def to_json(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            topic=as_str(obj, "topic"),
            broker_name=as_str(obj, "brokerName"),
            queue_id=as_int(obj, "queueId"),
        )


@dataclass(slots=True, kw_only=True)
class LockBatchRequestBody(JsonBody):
    consumer_group: str
    client_id: str
    mq_set: list[MessageQueueData] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "clientId": self.client_id,
            "consumerGroup": self.consumer_group,
            "mqSet": [mq.to_json() for mq in self.mq_set],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            consumer_group=as_str(obj, "consumerGroup"),
            client_id=as_str(obj, "clientId"),
            mq_set=[MessageQueueData.from_json(m) for m in _objects(obj, "mqSet")],
        )


@dataclass(slots=True, kw_only=True)
class UnlockBatchRequestBody(LockBatchRequestBody):
    only_this_broker: bool = False

    def to_json(self) -> dict[str, Any]:
        obj = super(UnlockBatchRequestBody, self).to_json()
        obj["onlyThisBroker"] = self.only_this_broker
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            consumer_group=as_str(obj, "consumerGroup"),
            client_id=as_str(obj, "clientId"),
            mq_set=[MessageQueueData.from_json(m) for m in _objects(obj, "mqSet")],
            only_this_broker=as_bool(obj, "onlyThisBroker"),
        )


@dataclass(slots=True, kw_only=True)
class LockBatchResponseBody(JsonBody):
    lock_ok_mq_set: list[MessageQueueData] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"lockOKMQSet": [mq.to_json() for mq in self.lock_ok_mq_set]}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            lock_ok_mq_set=[MessageQueueData.from_json(m) for m in _objects(obj, "lockOKMQSet")]
        )


@dataclass(slots=True, kw_only=True)
class ConsumerListBody(JsonBody):
    consumer_id_list: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"consumerIdList": list(self.consumer_id_list)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(consumer_id_list=[str(c) for c in obj.get("consumerIdList") or []])
