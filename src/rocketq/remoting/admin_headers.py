"""Headers of the admin, consumer-admin and request-reply codes (4.9.8
``common/protocol/header``); same conventions as ``headers``. The topic administration and
the admin tool's and broker -> client consumer/stats headers are re-exported by ``headers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.remoting.header_base import CommandCustomHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteSubscriptionGroupRequestHeader(CommandCustomHeader):
    group_name: str
    remove_offset: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class GetBrokerConfigResponseHeader(CommandCustomHeader):
    version: str


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryConsumeQueueRequestHeader(CommandCustomHeader):
    topic: str
    queue_id: int
    index: int
    count: int
    consumer_group: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplyMessageRequestHeader(CommandCustomHeader):
    """PUSH_REPLY_MESSAGE_TO_CLIENT (326): the reply as the broker pushes it to the requester."""

    producer_group: str
    topic: str
    default_topic: str
    default_topic_queue_nums: int
    queue_id: int
    sys_flag: int
    born_timestamp: int
    flag: int
    born_host: str
    store_host: str
    store_timestamp: int
    properties: str | None = None
    reconsume_times: int | None = None
    unit_mode: bool = False


# ----------------------------------------------------------------------------- topics (admin)


@dataclass(frozen=True, kw_only=True, slots=True)
class CreateTopicRequestHeader(CommandCustomHeader):
    topic: str
    default_topic: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_filter_type: str
    order: bool
    topic_sys_flag: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteTopicRequestHeader(CommandCustomHeader):
    topic: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteTopicFromNamesrvRequestHeader(CommandCustomHeader):
    topic: str
    cluster_name: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetTopicsByClusterRequestHeader(CommandCustomHeader):
    cluster: str


# ------------------------------------------------------------------ admin, broker -> client


@dataclass(frozen=True, kw_only=True, slots=True)
class GetConsumerRunningInfoRequestHeader(CommandCustomHeader):
    consumer_group: str
    client_id: str
    jstack_enable: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ResetOffsetRequestHeader(CommandCustomHeader):
    topic: str
    group: str
    timestamp: int
    is_force: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class GetConsumerStatusRequestHeader(CommandCustomHeader):
    topic: str
    group: str
    client_addr: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ConsumeMessageDirectlyResultRequestHeader(CommandCustomHeader):
    consumer_group: str
    client_id: str | None = None
    msg_id: str | None = None
    broker_name: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetConsumeStatsRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetTopicStatsInfoRequestHeader(CommandCustomHeader):
    topic: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GetConsumerConnectionListRequestHeader(CommandCustomHeader):
    consumer_group: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GetProducerConnectionListRequestHeader(CommandCustomHeader):
    producer_group: str


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryTopicConsumeByWhoRequestHeader(CommandCustomHeader):
    topic: str
