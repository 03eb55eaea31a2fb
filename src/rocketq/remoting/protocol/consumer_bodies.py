"""Bodies a broker forwards to a consumer and back: ConsumerRunningInfo with ProcessQueueInfo
and ConsumeStatus (GET_CONSUMER_RUNNING_INFO 307), ConsumeMessageDirectlyResult
(CONSUME_MESSAGE_DIRECTLY 309) and ResetOffsetBody (RESET_CONSUMER_CLIENT_OFFSET 220,
INVOKE_BROKER_TO_RESET_OFFSET 222), RocketMQ's ``remoting/protocol/body`` classes.

Shapes are fastjson's output of RocketMQ 4.9.8's classes: ``mqTable`` and ``offsetTable`` are
``Map<MessageQueue, ...>`` written with object keys; ``properties`` is a string map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Self

from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.remoting.protocol.json_body import (
    JsonBody,
    ObjectKeyBody,
    as_int,
    as_object,
    json_field,
)
from rocketq.remoting.protocol.subscription import SubscriptionData

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
    cached_msg_size_in_mib: int = field(default=0, metadata=json_field("cachedMsgSizeInMiB"))
    transaction_msg_min_offset: int = 0
    transaction_msg_max_offset: int = 0
    transaction_msg_count: int = 0
    locked: bool = False
    try_unlock_times: int = 0
    last_lock_timestamp: int = 0
    droped: bool = False  # RocketMQ's spelling
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeStatus(JsonBody):
    """Per-topic consume rates of a client (ConsumerStatsManager.consumeStatus)."""

    pull_rt: float = field(default=0.0, metadata=json_field("pullRT"))
    pull_tps: float = field(default=0.0, metadata=json_field("pullTPS"))
    consume_rt: float = field(default=0.0, metadata=json_field("consumeRT"))
    consume_ok_tps: float = field(default=0.0, metadata=json_field("consumeOKTPS"))
    consume_failed_tps: float = field(default=0.0, metadata=json_field("consumeFailedTPS"))
    consume_failed_msgs: int = 0


def _by_topic(subscription: SubscriptionData) -> str:
    return subscription.topic


@dataclass(slots=True, kw_only=True)
class ConsumerRunningInfo(ObjectKeyBody):
    properties: dict[str, str] = field(default_factory=dict)
    subscription_set: list[SubscriptionData] = field(
        default_factory=list, metadata=json_field(sort=_by_topic)
    )
    mq_table: dict[MessageQueueData, ProcessQueueInfo] = field(default_factory=dict)
    status_table: dict[str, ConsumeStatus] = field(default_factory=dict)
    jstack: str | None = field(default=None, metadata=json_field(null=True))


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


@dataclass(slots=True, kw_only=True)
class ResetOffsetBody(ObjectKeyBody):
    """``{"offsetTable":{MessageQueue: offset}}``; C++ reads (and its brokers write, for C++
    peers) a list of ``{brokerName, queueId, topic, offset}`` instead (ResetOffsetBodyForC)."""

    offset_table: dict[MessageQueueData, int] = field(default_factory=dict)

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
        return super(ResetOffsetBody, cls).from_json(obj)


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
