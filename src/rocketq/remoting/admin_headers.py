"""Headers of the admin, consumer-admin and request-reply codes (4.9.8
``common/protocol/header``) that ``headers`` does not hold; same conventions as there."""

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
