"""Bodies a broker forwards to a consumer and back (remoting.md §3.3.3, §3.3.4):
ConsumerRunningInfo (307), ConsumeMessageDirectlyResult (309), ResetOffsetBody (220, 222).

Shapes are fastjson's output of RocketMQ 4.9.8's classes: ``mqTable`` and ``offsetTable`` are
``Map<MessageQueue, ...>`` written with object keys; ``properties`` is a string map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Self

from rocketq.common.json_body import JsonBody, as_bool, as_int, as_object
from rocketq.common.subscription import SubscriptionData
from rocketq.remoting.admin_bodies import ObjectKeyBody, mq_map, read_mq_map
from rocketq.remoting.bodies import MessageQueueData

PROP_NAMESERVER_ADDR = "PROP_NAMESERVER_ADDR"
PROP_THREADPOOL_CORE_SIZE = "PROP_THREADPOOL_CORE_SIZE"
PROP_CONSUME_ORDERLY = "PROP_CONSUMEORDERLY"
PROP_CONSUME_TYPE = "PROP_CONSUME_TYPE"
PROP_CLIENT_VERSION = "PROP_CLIENT_VERSION"
PROP_CONSUMER_START_TIMESTAMP = "PROP_CONSUMER_START_TIMESTAMP"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessQueueInfo(JsonBody):
    commit_offset: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_size_in_mib: int = 0
    transaction_msg_min_offset: int = 0
    transaction_msg_max_offset: int = 0
    transaction_msg_count: int = 0
    locked: bool = False
    try_unlock_times: int = 0
    last_lock_timestamp: int = 0
    droped: bool = False  # RocketMQ's spelling
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0

    _WIRE = (
        ("commit_offset", "commitOffset"),
        ("cached_msg_min_offset", "cachedMsgMinOffset"),
        ("cached_msg_max_offset", "cachedMsgMaxOffset"),
        ("cached_msg_count", "cachedMsgCount"),
        ("cached_msg_size_in_mib", "cachedMsgSizeInMiB"),
        ("transaction_msg_min_offset", "transactionMsgMinOffset"),
        ("transaction_msg_max_offset", "transactionMsgMaxOffset"),
        ("transaction_msg_count", "transactionMsgCount"),
        ("try_unlock_times", "tryUnlockTimes"),
        ("last_lock_timestamp", "lastLockTimestamp"),
        ("last_pull_timestamp", "lastPullTimestamp"),
        ("last_consume_timestamp", "lastConsumeTimestamp"),
    )

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {wire: getattr(self, attr) for attr, wire in self._WIRE}
        obj["locked"] = self.locked
        obj["droped"] = self.droped
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        values: dict[str, Any] = {attr: as_int(obj, wire) for attr, wire in cls._WIRE}
        return cls(locked=as_bool(obj, "locked"), droped=as_bool(obj, "droped"), **values)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeStatus(JsonBody):
    """Per-topic consume rates of a client (ConsumerStatsManager.consumeStatus)."""

    pull_rt: float = 0.0
    pull_tps: float = 0.0
    consume_rt: float = 0.0
    consume_ok_tps: float = 0.0
    consume_failed_tps: float = 0.0
    consume_failed_msgs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "consumeFailedMsgs": self.consume_failed_msgs,
            "consumeFailedTPS": float(self.consume_failed_tps),
            "consumeOKTPS": float(self.consume_ok_tps),
            "consumeRT": float(self.consume_rt),
            "pullRT": float(self.pull_rt),
            "pullTPS": float(self.pull_tps),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        def num(key: str) -> float:
            return float(obj.get(key) or 0.0)

        return cls(
            pull_rt=num("pullRT"),
            pull_tps=num("pullTPS"),
            consume_rt=num("consumeRT"),
            consume_ok_tps=num("consumeOKTPS"),
            consume_failed_tps=num("consumeFailedTPS"),
            consume_failed_msgs=as_int(obj, "consumeFailedMsgs"),
        )


@dataclass(slots=True, kw_only=True)
class ConsumerRunningInfo(ObjectKeyBody):
    properties: dict[str, str] = field(default_factory=dict)
    subscription_set: list[SubscriptionData] = field(default_factory=list)
    mq_table: dict[MessageQueueData, ProcessQueueInfo] = field(default_factory=dict)
    status_table: dict[str, ConsumeStatus] = field(default_factory=dict)
    jstack: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "jstack": self.jstack,
            "mqTable": mq_map(self.mq_table),
            "properties": dict(self.properties),
            "statusTable": {t: s.to_json() for t, s in self.status_table.items()},
            "subscriptionSet": [
                s.to_json() for s in sorted(self.subscription_set, key=lambda s: s.topic)
            ],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        props = as_object(obj.get("properties"), "properties")
        status = as_object(obj.get("statusTable"), "statusTable")
        subs = obj.get("subscriptionSet")
        return cls(
            properties={str(k): str(v) for k, v in props.items()},
            subscription_set=[
                SubscriptionData.from_json(as_object(s, "subscriptionSet"))
                for s in (subs if isinstance(subs, list) else [])
            ],
            mq_table={
                mq: ProcessQueueInfo.from_json(as_object(v, "ProcessQueueInfo"))
                for mq, v in read_mq_map(obj, "mqTable").items()
            },
            status_table={t: ConsumeStatus.from_json(as_object(s, t)) for t, s in status.items()},
            jstack=obj.get("jstack"),
        )


class CMResult(Enum):
    CR_SUCCESS = "CR_SUCCESS"
    CR_LATER = "CR_LATER"
    CR_ROLLBACK = "CR_ROLLBACK"
    CR_COMMIT = "CR_COMMIT"
    CR_THROW_EXCEPTION = "CR_THROW_EXCEPTION"
    CR_RETURN_NULL = "CR_RETURN_NULL"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeMessageDirectlyResult(JsonBody):
    consume_result: CMResult | None = None
    order: bool = False
    auto_commit: bool = True
    remark: str | None = None
    spent_time_mills: int = 0  # RocketMQ's spelling

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "autoCommit": self.auto_commit,
            "order": self.order,
            "spentTimeMills": self.spent_time_mills,
        }
        if self.consume_result is not None:
            obj["consumeResult"] = self.consume_result.name
        if self.remark is not None:
            obj["remark"] = self.remark
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        result = obj.get("consumeResult")
        return cls(
            consume_result=None if result is None else CMResult(str(result)),
            order=as_bool(obj, "order"),
            auto_commit=as_bool(obj, "autoCommit", True),
            remark=obj.get("remark"),
            spent_time_mills=as_int(obj, "spentTimeMills"),
        )


@dataclass(slots=True, kw_only=True)
class ResetOffsetBody(ObjectKeyBody):
    """``{"offsetTable":{MessageQueue: offset}}``; C++ reads (and its brokers write, for C++
    peers) a list of ``{brokerName, queueId, topic, offset}`` instead (ResetOffsetBodyForC)."""

    offset_table: dict[MessageQueueData, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"offsetTable": mq_map(self.offset_table)}

    def to_json_for_c(self) -> dict[str, Any]:
        rows = [
            {**mq.to_json(), "offset": off}
            for mq, off in sorted(
                self.offset_table.items(), key=lambda kv: (kv[0].topic, kv[0].queue_id)
            )
        ]
        return {"offsetTable": rows}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        raw = obj.get("offsetTable")
        if isinstance(raw, list):
            rows = [as_object(r, "offsetTable") for r in raw]
            return cls(
                offset_table={MessageQueueData.from_json(r): as_int(r, "offset") for r in rows}
            )
        return cls(offset_table={mq: int(v) for mq, v in read_mq_map(obj, "offsetTable").items()})


__all__ = [
    "PROP_CLIENT_VERSION",
    "PROP_CONSUMER_START_TIMESTAMP",
    "PROP_CONSUME_ORDERLY",
    "PROP_CONSUME_TYPE",
    "PROP_NAMESERVER_ADDR",
    "PROP_THREADPOOL_CORE_SIZE",
    "CMResult",
    "ConsumeMessageDirectlyResult",
    "ConsumeStatus",
    "ConsumerRunningInfo",
    "ProcessQueueInfo",
    "ResetOffsetBody",
]
