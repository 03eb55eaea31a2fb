"""JSON bodies of the subscription-group and offset-table admin codes: SubscriptionGroupConfig
and its wrapper (200, 201), ConsumerOffsetSerializeWrapper (43), DelayOffsetSerializeWrapper
(45) and QueryConsumeQueueResponseBody with its ConsumeQueueData (321), as fastjson writes
RocketMQ 4.9.8's classes (integer map keys bare, nulls left out). RocketMQ 5's group fields
(consumeMessageOrderly, groupRetryPolicy, groupSysFlag, consumeTimeoutMinute, attributes) are
None until set, and then written as RocketMQ 5 writes them, so a 4.x group keeps 4.x's bytes."""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.json_body import JsonBody, ObjectKeyBody, json_field
from rocketq.remoting.protocol.retry_policy import (
    DEFAULT_RETRY_POLICY,
    GroupRetryPolicy,
    RetryPolicy,
)
from rocketq.remoting.protocol.subscription import SubscriptionData


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
    # RocketMQ 5
    consume_message_orderly: bool | None = None
    group_retry_policy: GroupRetryPolicy | None = None
    group_sys_flag: int | None = None
    consume_timeout_minute: int | None = None
    attributes: dict[str, str] | None = None

    @property
    def orderly(self) -> bool:
        """isConsumeMessageOrderly: FIFO consumption (POP serves a queue one batch at a time)."""
        return bool(self.consume_message_orderly)

    @property
    def retry_policy(self) -> RetryPolicy:
        """The delays between deliveries (the CUSTOMIZED default table when none is set)."""
        policy = self.group_retry_policy
        return DEFAULT_RETRY_POLICY if policy is None else policy.retry_policy


@dataclass(slots=True, kw_only=True)
class SubscriptionGroupWrapper(JsonBody):
    subscription_group_table: dict[str, SubscriptionGroupConfig] = field(default_factory=dict)
    data_version: DataVersion = field(default_factory=DataVersion)


@dataclass(slots=True, kw_only=True)
class ConsumerOffsetSerializeWrapper(ObjectKeyBody):
    """GET_ALL_CONSUMER_OFFSET: ``{"offsetTable":{"topic@group":{0:5}}}``."""

    offset_table: dict[str, dict[int, int]] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class DelayOffsetSerializeWrapper(ObjectKeyBody):
    """GET_ALL_DELAY_OFFSET: ``{"offsetTable":{1:10,2:0}}`` (delay level -> queue offset)."""

    offset_table: dict[int, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------- consume queue


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeQueueData(JsonBody):
    physic_offset: int
    physic_size: int
    tags_code: int
    extend_data_json: str | None = field(default=None, metadata=json_field(null=True))
    bit_map: str | None = field(default=None, metadata=json_field(null=True))
    eval: bool = False
    msg: str | None = field(default=None, metadata=json_field(null=True))


@dataclass(slots=True, kw_only=True)
class QueryConsumeQueueResponseBody(ObjectKeyBody):
    subscription_data: SubscriptionData | None = field(default=None, metadata=json_field(null=True))
    filter_data: str | None = field(default=None, metadata=json_field(null=True))
    queue_data: list[ConsumeQueueData] = field(default_factory=list)
    max_queue_index: int = 0
    min_queue_index: int = 0
