"""JSON bodies of the admin codes (remoting.md §3.4): connections, stats, groups, offsets.

Field names and shapes are fastjson's output of RocketMQ 4.9.8's body classes (keys sorted,
enums by name, ``Map<MessageQueue, ...>`` with object keys written by ``object_key_json``).
Decoding is lenient as fastjson is: missing keys take defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Self, TypeVar

from rocketq.common.json_body import JsonBody, as_int, as_object, as_str
from rocketq.common.subscription import SubscriptionData
from rocketq.remoting import object_key_json
from rocketq.remoting.bodies import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    MessageQueueData,
    as_enum,
)
from rocketq.remoting.object_key_json import ObjectKeyMap, key_object

_E = TypeVar("_E", bound=IntEnum)


class ObjectKeyBody(JsonBody):
    """A body that may hold maps with object keys: written and read with object_key_json."""

    __slots__ = ()

    def encode(self) -> bytes:
        return object_key_json.dumps(self.to_json())

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        obj = object_key_json.loads(data, cls.__name__)
        return cls.from_json(as_object(obj, cls.__name__))


def mq_map(table: dict[MessageQueueData, Any]) -> ObjectKeyMap:
    """A ``Map<MessageQueue, V>``; values with ``to_json`` are converted."""
    ordered = sorted(table.items(), key=lambda kv: (kv[0].topic, kv[0].broker_name, kv[0].queue_id))
    return ObjectKeyMap(
        [(mq.to_json(), v.to_json() if hasattr(v, "to_json") else v) for mq, v in ordered]
    )


def read_mq_map(obj: dict[str, Any], key: str) -> dict[MessageQueueData, Any]:
    """The raw values of a ``Map<MessageQueue, V>`` read by object_key_json.loads."""
    table = as_object(obj.get(key), key)
    return {MessageQueueData.from_json(key_object(k)): v for k, v in table.items()}


def _opt_enum(enum: type[_E], obj: dict[str, Any], key: str) -> _E | None:
    return None if obj.get(key) is None else as_enum(enum, obj, key, next(iter(enum)))


def sorted_objects(obj: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = obj.get(key)
    return [as_object(v, key) for v in value] if isinstance(value, list) else []


# ----------------------------------------------------------------------------- connections


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection(JsonBody):
    client_id: str
    client_addr: str
    language: str = "JAVA"
    version: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "clientAddr": self.client_addr,
            "clientId": self.client_id,
            "language": self.language,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            client_id=as_str(obj, "clientId"),
            client_addr=as_str(obj, "clientAddr"),
            language=as_str(obj, "language", "JAVA"),
            version=as_int(obj, "version"),
        )


@dataclass(slots=True, kw_only=True)
class ProducerConnection(JsonBody):
    connection_set: list[Connection] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"connectionSet": [c.to_json() for c in self.connection_set]}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            connection_set=[Connection.from_json(c) for c in sorted_objects(obj, "connectionSet")]
        )


@dataclass(slots=True, kw_only=True)
class ConsumerConnection(JsonBody):
    connection_set: list[Connection] = field(default_factory=list)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict)
    consume_type: ConsumeType | None = None
    message_model: MessageModel | None = None
    consume_from_where: ConsumeFromWhere | None = None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "connectionSet": [c.to_json() for c in self.connection_set],
            "subscriptionTable": {t: s.to_json() for t, s in self.subscription_table.items()},
        }
        for key, value in (
            ("consumeType", self.consume_type),
            ("messageModel", self.message_model),
            ("consumeFromWhere", self.consume_from_where),
        ):
            if value is not None:
                obj[key] = value.name
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        subs = as_object(obj.get("subscriptionTable"), "subscriptionTable")
        return cls(
            connection_set=[Connection.from_json(c) for c in sorted_objects(obj, "connectionSet")],
            subscription_table={
                t: SubscriptionData.from_json(as_object(s, t)) for t, s in subs.items()
            },
            consume_type=_opt_enum(ConsumeType, obj, "consumeType"),
            message_model=_opt_enum(MessageModel, obj, "messageModel"),
            consume_from_where=_opt_enum(ConsumeFromWhere, obj, "consumeFromWhere"),
        )


# ----------------------------------------------------------------------------- stats


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetWrapper(JsonBody):
    broker_offset: int = 0
    consumer_offset: int = 0
    last_timestamp: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerOffset": self.broker_offset,
            "consumerOffset": self.consumer_offset,
            "lastTimestamp": self.last_timestamp,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            broker_offset=as_int(obj, "brokerOffset"),
            consumer_offset=as_int(obj, "consumerOffset"),
            last_timestamp=as_int(obj, "lastTimestamp"),
        )


@dataclass(slots=True, kw_only=True)
class ConsumeStats(ObjectKeyBody):
    offset_table: dict[MessageQueueData, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"consumeTps": float(self.consume_tps), "offsetTable": mq_map(self.offset_table)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = read_mq_map(obj, "offsetTable")
        return cls(
            offset_table={
                mq: OffsetWrapper.from_json(as_object(v, "OffsetWrapper"))
                for mq, v in table.items()
            },
            consume_tps=float(obj.get("consumeTps") or 0.0),
        )

    def compute_total_diff(self) -> int:
        """ConsumeStats.computeTotalDiff: messages not yet consumed over every queue."""
        return sum(w.broker_offset - w.consumer_offset for w in self.offset_table.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicOffset(JsonBody):
    min_offset: int = 0
    max_offset: int = 0
    last_update_timestamp: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "lastUpdateTimestamp": self.last_update_timestamp,
            "maxOffset": self.max_offset,
            "minOffset": self.min_offset,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            min_offset=as_int(obj, "minOffset"),
            max_offset=as_int(obj, "maxOffset"),
            last_update_timestamp=as_int(obj, "lastUpdateTimestamp"),
        )


@dataclass(slots=True, kw_only=True)
class TopicStatsTable(ObjectKeyBody):
    offset_table: dict[MessageQueueData, TopicOffset] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"offsetTable": mq_map(self.offset_table)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = read_mq_map(obj, "offsetTable")
        return cls(
            offset_table={
                mq: TopicOffset.from_json(as_object(v, "TopicOffset")) for mq, v in table.items()
            }
        )


@dataclass(slots=True, kw_only=True)
class GroupList(JsonBody):
    group_list: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"groupList": sorted(self.group_list)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(group_list=[str(g) for g in obj.get("groupList") or []])
