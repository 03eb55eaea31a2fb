"""JSON bodies of the subscription-group and offset-table admin codes: SubscriptionGroupConfig
and its wrapper (200, 201), ConsumerOffsetSerializeWrapper (43), DelayOffsetSerializeWrapper
(45) and QueryConsumeQueueResponseBody (321), as fastjson writes RocketMQ 4.9.8's classes
(integer map keys bare, nulls left out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from rocketq.common.data_version import DataVersion
from rocketq.common.json_body import JsonBody, as_bool, as_int, as_object, as_str
from rocketq.common.subscription import SubscriptionData
from rocketq.remoting.admin_bodies import ObjectKeyBody, sorted_objects


@dataclass(frozen=True, kw_only=True, slots=True)
class SubscriptionGroupConfig(JsonBody):
    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerId": self.broker_id,
            "consumeBroadcastEnable": self.consume_broadcast_enable,
            "consumeEnable": self.consume_enable,
            "consumeFromMinEnable": self.consume_from_min_enable,
            "groupName": self.group_name,
            "notifyConsumerIdsChangedEnable": self.notify_consumer_ids_changed_enable,
            "retryMaxTimes": self.retry_max_times,
            "retryQueueNums": self.retry_queue_nums,
            "whichBrokerWhenConsumeSlowly": self.which_broker_when_consume_slowly,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            group_name=as_str(obj, "groupName"),
            consume_enable=as_bool(obj, "consumeEnable", True),
            consume_from_min_enable=as_bool(obj, "consumeFromMinEnable", True),
            consume_broadcast_enable=as_bool(obj, "consumeBroadcastEnable", True),
            retry_queue_nums=as_int(obj, "retryQueueNums", 1),
            retry_max_times=as_int(obj, "retryMaxTimes", 16),
            broker_id=as_int(obj, "brokerId"),
            which_broker_when_consume_slowly=as_int(obj, "whichBrokerWhenConsumeSlowly", 1),
            notify_consumer_ids_changed_enable=as_bool(obj, "notifyConsumerIdsChangedEnable", True),
        )


@dataclass(slots=True, kw_only=True)
class SubscriptionGroupWrapper(JsonBody):
    subscription_group_table: dict[str, SubscriptionGroupConfig] = field(default_factory=dict)
    data_version: DataVersion = field(default_factory=DataVersion)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataVersion": self.data_version.to_json(),
            "subscriptionGroupTable": {
                g: c.to_json() for g, c in sorted(self.subscription_group_table.items())
            },
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = as_object(obj.get("subscriptionGroupTable"), "subscriptionGroupTable")
        return cls(
            subscription_group_table={
                g: SubscriptionGroupConfig.from_json(as_object(c, g)) for g, c in table.items()
            },
            data_version=DataVersion.from_json(as_object(obj.get("dataVersion"), "dataVersion")),
        )


@dataclass(slots=True, kw_only=True)
class ConsumerOffsetSerializeWrapper(ObjectKeyBody):
    """GET_ALL_CONSUMER_OFFSET: ``{"offsetTable":{"topic@group":{0:5}}}``."""

    offset_table: dict[str, dict[int, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"offsetTable": {k: dict(v) for k, v in self.offset_table.items()}}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = as_object(obj.get("offsetTable"), "offsetTable")
        return cls(
            offset_table={
                k: {int(q): int(o) for q, o in as_object(v, k).items()} for k, v in table.items()
            }
        )


@dataclass(slots=True, kw_only=True)
class DelayOffsetSerializeWrapper(ObjectKeyBody):
    """GET_ALL_DELAY_OFFSET: ``{"offsetTable":{1:10,2:0}}`` (delay level -> queue offset)."""

    offset_table: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"offsetTable": dict(self.offset_table)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = as_object(obj.get("offsetTable"), "offsetTable")
        return cls(offset_table={int(k): int(v) for k, v in table.items()})


# ----------------------------------------------------------------------------- consume queue


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeQueueData(JsonBody):
    physic_offset: int
    physic_size: int
    tags_code: int
    extend_data_json: str | None = None
    bit_map: str | None = None
    eval: bool = False
    msg: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "bitMap": self.bit_map,
            "eval": self.eval,
            "extendDataJson": self.extend_data_json,
            "msg": self.msg,
            "physicOffset": self.physic_offset,
            "physicSize": self.physic_size,
            "tagsCode": self.tags_code,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            physic_offset=as_int(obj, "physicOffset"),
            physic_size=as_int(obj, "physicSize"),
            tags_code=as_int(obj, "tagsCode"),
            extend_data_json=obj.get("extendDataJson"),
            bit_map=obj.get("bitMap"),
            eval=as_bool(obj, "eval"),
            msg=obj.get("msg"),
        )


@dataclass(slots=True, kw_only=True)
class QueryConsumeQueueResponseBody(ObjectKeyBody):
    subscription_data: SubscriptionData | None = None
    filter_data: str | None = None
    queue_data: list[ConsumeQueueData] = field(default_factory=list)
    max_queue_index: int = 0
    min_queue_index: int = 0

    def to_json(self) -> dict[str, Any]:
        sub = self.subscription_data
        return {
            "filterData": self.filter_data,
            "maxQueueIndex": self.max_queue_index,
            "minQueueIndex": self.min_queue_index,
            "queueData": [q.to_json() for q in self.queue_data],
            "subscriptionData": None if sub is None else sub.to_json(),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        sub = obj.get("subscriptionData")
        return cls(
            subscription_data=None if sub is None else SubscriptionData.from_json(sub),
            filter_data=obj.get("filterData"),
            queue_data=[ConsumeQueueData.from_json(q) for q in sorted_objects(obj, "queueData")],
            max_queue_index=as_int(obj, "maxQueueIndex"),
            min_queue_index=as_int(obj, "minQueueIndex"),
        )
