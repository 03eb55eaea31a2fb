"""The typed request/response headers of RocketMQ's ``remoting/protocol/header`` package (one
Java class each there, one dataclass each here).

Fields without a default are required (``@CFNotNull``); the rest are optional. Use
``Header.from_ext_fields(cmd.ext_fields)`` and ``header.to_ext_fields()`` (``custom_header``).
Sections follow the request codes: send, pull, offsets, query, clients, transactions, admin,
topics, broker -> client and broker stats. The name server's headers are in
``namesrv_headers``, ACL's in ``acl_headers``, POP's in ``pop_headers`` and the controller's in
``controller_headers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rocketq.remoting.protocol.custom_header import CommandCustomHeader, NativeTable, wire

# ----------------------------------------------------------------------------- send


@dataclass(frozen=True, kw_only=True, slots=True)
class SendMessageRequestHeader(CommandCustomHeader):
    producer_group: str
    topic: str
    default_topic: str
    default_topic_queue_nums: int
    queue_id: int
    sys_flag: int
    born_timestamp: int
    flag: int
    properties: str | None = None
    reconsume_times: int | None = None
    unit_mode: bool = False
    batch: bool = False
    max_reconsume_times: int | None = None

    def to_v2(self) -> SendMessageRequestHeaderV2:
        return SendMessageRequestHeaderV2(
            a=self.producer_group,
            b=self.topic,
            c=self.default_topic,
            d=self.default_topic_queue_nums,
            e=self.queue_id,
            f=self.sys_flag,
            g=self.born_timestamp,
            h=self.flag,
            i=self.properties,
            j=self.reconsume_times,
            k=self.unit_mode,
            l=self.max_reconsume_times,
            m=self.batch,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SendMessageRequestHeaderV2(CommandCustomHeader):
    """The one-letter form used by SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320)."""

    a: str  # producerGroup
    b: str  # topic
    c: str  # defaultTopic
    d: int  # defaultTopicQueueNums
    e: int  # queueId
    f: int  # sysFlag
    g: int  # bornTimestamp
    h: int  # flag
    i: str | None = None  # properties
    j: int | None = None  # reconsumeTimes
    k: bool = False  # unitMode
    l: int | None = None  # maxReconsumeTimes  # noqa: E741
    m: bool = False  # batch
    n: str | None = None  # brokerName (4.9.5+)

    @classmethod
    def decode_as_v1(cls, ext_fields: Mapping[str, str] | None) -> SendMessageRequestHeader:
        """``from_ext_fields(ext_fields).to_v1()`` building one header instead of two (every
        SEND_MESSAGE_V2 pays it); fields parse, and fail naming themselves, as V2's."""
        global _V1_TABLE_OF_V2
        if _V1_TABLE_OF_V2 is None:
            _V1_TABLE_OF_V2 = SendMessageRequestHeader.native_table(_V1_WIRES_OF_V2)
        header = SendMessageRequestHeader.read_native(ext_fields, _V1_TABLE_OF_V2)
        if header is not None:
            return header
        values = cls.parse_ext_fields(ext_fields)
        values.pop("n", None)  # to_v1 drops brokerName too
        return SendMessageRequestHeader(**{_V2_TO_V1[k]: v for k, v in values.items()})

    def to_v1(self) -> SendMessageRequestHeader:
        return SendMessageRequestHeader(
            producer_group=self.a,
            topic=self.b,
            default_topic=self.c,
            default_topic_queue_nums=self.d,
            queue_id=self.e,
            sys_flag=self.f,
            born_timestamp=self.g,
            flag=self.h,
            properties=self.i,
            reconsume_times=self.j,
            unit_mode=self.k,
            max_reconsume_times=self.l,
            batch=self.m,
        )


_V2_TO_V1 = {
    "a": "producer_group",
    "b": "topic",
    "c": "default_topic",
    "d": "default_topic_queue_nums",
    "e": "queue_id",
    "f": "sys_flag",
    "g": "born_timestamp",
    "h": "flag",
    "i": "properties",
    "j": "reconsume_times",
    "k": "unit_mode",
    "l": "max_reconsume_times",
    "m": "batch",
}
# SendMessageRequestHeader's fields read from V2's one-letter wire names (the C reader)
_V1_WIRES_OF_V2 = tuple((v1, v2) for v2, v1 in _V2_TO_V1.items())
_V1_TABLE_OF_V2: NativeTable | None = None  # built at the first SEND_MESSAGE_V2


@dataclass(frozen=True, kw_only=True, slots=True)
class SendMessageResponseHeader(CommandCustomHeader):
    msg_id: str
    queue_id: int
    queue_offset: int
    transaction_id: str | None = None
    recall_handle: str | None = None  # 5.3.2: a timer message's RecallMessageHandle

    def to_ext_fields(self) -> dict[str, str]:
        """The generic walk's fields in its order, written out: every send reply builds one."""
        fields = {
            "msgId": self.msg_id,
            "queueId": str(self.queue_id),
            "queueOffset": str(self.queue_offset),
        }
        if self.transaction_id is not None:
            fields["transactionId"] = self.transaction_id
        if self.recall_handle is not None:
            fields["recallHandle"] = self.recall_handle
        return fields


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallMessageRequestHeader(CommandCustomHeader):
    """RECALL_MESSAGE (370), RocketMQ 5.3.2's RecallMessageRequestHeader."""

    topic: str
    recall_handle: str
    producer_group: str | None = None
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallMessageResponseHeader(CommandCustomHeader):
    msg_id: str


# ----------------------------------------------------------------------------- pull


@dataclass(frozen=True, kw_only=True, slots=True)
class PullMessageRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int
    max_msg_nums: int
    sys_flag: int
    commit_offset: int
    suspend_timeout_millis: int
    sub_version: int
    subscription: str | None = None
    expression_type: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PullMessageResponseHeader(CommandCustomHeader):
    suggest_which_broker_id: int
    next_begin_offset: int
    min_offset: int
    max_offset: int


# ----------------------------------------------------------------------------- offsets


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryConsumerOffsetRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryConsumerOffsetResponseHeader(CommandCustomHeader):
    offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class UpdateConsumerOffsetRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    commit_offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetMaxOffsetRequestHeader(CommandCustomHeader):
    topic: str
    queue_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetMaxOffsetResponseHeader(CommandCustomHeader):
    offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetMinOffsetRequestHeader(CommandCustomHeader):
    topic: str
    queue_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetMinOffsetResponseHeader(CommandCustomHeader):
    offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchOffsetRequestHeader(CommandCustomHeader):
    topic: str
    queue_id: int
    timestamp: int


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchOffsetResponseHeader(CommandCustomHeader):
    offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetEarliestMsgStoretimeRequestHeader(CommandCustomHeader):
    topic: str
    queue_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class GetEarliestMsgStoretimeResponseHeader(CommandCustomHeader):
    timestamp: int


# ----------------------------------------------------------------------------- query


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewMessageRequestHeader(CommandCustomHeader):
    offset: int


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryMessageRequestHeader(CommandCustomHeader):
    topic: str
    key: str
    max_num: int
    begin_timestamp: int
    end_timestamp: int


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryMessageResponseHeader(CommandCustomHeader):
    index_last_update_timestamp: int
    index_last_update_phyoffset: int


# ----------------------------------------------------------------------------- clients


@dataclass(frozen=True, kw_only=True, slots=True)
class GetConsumerListByGroupRequestHeader(CommandCustomHeader):
    consumer_group: str


@dataclass(frozen=True, kw_only=True, slots=True)
class UnregisterClientRequestHeader(CommandCustomHeader):
    client_id: str = field(metadata=wire("clientID"))
    producer_group: str | None = None
    consumer_group: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class NotifyConsumerIdsChangedRequestHeader(CommandCustomHeader):
    consumer_group: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ConsumerSendMsgBackRequestHeader(CommandCustomHeader):
    offset: int
    group: str
    delay_level: int
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: int | None = None


# ----------------------------------------------------------------------------- transactions


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTransactionRequestHeader(CommandCustomHeader):
    producer_group: str
    tran_state_table_offset: int
    commit_log_offset: int
    commit_or_rollback: int
    msg_id: str
    from_transaction_check: bool = False
    transaction_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTransactionBatchRequestHeader(CommandCustomHeader):
    """END_TRANSACTION_BATCH (rocketq's extension): END_TRANSACTION's fields naming a batch
    half, and how many messages it holds (the broker checks the count)."""

    producer_group: str
    tran_state_table_offset: int
    commit_log_offset: int
    commit_or_rollback: int
    msg_id: str
    batch_count: int
    from_transaction_check: bool = False
    transaction_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckTransactionStateRequestHeader(CommandCustomHeader):
    tran_state_table_offset: int
    commit_log_offset: int
    msg_id: str | None = None
    transaction_id: str | None = None
    offset_msg_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ResumeCheckHalfMessageRequestHeader(CommandCustomHeader):
    msg_id: str | None = None


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
    attributes: str | None = None  # RocketMQ 5: "+message.type=FIFO,-reserve.time"


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


# ----------------------------------------------------------------------------- broker stats (315)


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewBrokerStatsDataRequestHeader(CommandCustomHeader):
    stats_name: str
    stats_key: str
