"""The message model mapping between RocketMQ 5's gRPC ``Message`` and the 4.x message the
broker stores (the Java proxy's ``GrpcConverter`` and ``SendMessageActivity.buildMessage``).

On send, system properties become 4.x properties: tag → ``TAGS``, keys → ``KEYS`` (joined by a
space), message_id → ``UNIQ_KEY``, TRANSACTION → ``TRAN_MSG`` and the prepared sys flag,
delivery_timestamp → ``TIMER_DELIVER_MS``, message_group → ``__SHARDINGKEY``, trace_context →
``TRACE_CONTEXT``, born_host → ``__BORNHOST``, orphaned_transaction_recovery_duration →
``CHECK_IMMUNITY_TIME_IN_SECONDS`` and always ``PGROUP`` = the topic (the producer group of the
transaction check). Each rule Java checks is checked here with Java's code (ILLEGAL_MESSAGE_TAG,
ILLEGAL_MESSAGE_KEY, ILLEGAL_MESSAGE_GROUP, ILLEGAL_MESSAGE_PROPERTY_KEY, ILLEGAL_MESSAGE_ID,
ILLEGAL_DELIVERY_TIME, MESSAGE_BODY_EMPTY/TOO_LARGE, MESSAGE_PROPERTIES_TOO_LARGE).

On delivery the reverse: ``UNIQ_KEY`` is the message id, the body digest is MD5 in upper-case
hex (the clients check it), the type is read back from the properties, the delivery attempt is
``reconsumeTimes + 1``, and every property outside MessageConst's reserved names is a user
property.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from rocketq.common import message_const as mc
from rocketq.common.attribute import TopicMessageType
from rocketq.common.extra_info import (
    PROPERTY_DLQ_ORIGIN_MESSAGE_ID,
    PROPERTY_DLQ_ORIGIN_TOPIC,
    PROPERTY_FIRST_POP_TIME,
    PROPERTY_POP_CK,
)
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.status import Code, ProxyError

PROPERTY_TRACE_CONTEXT = "TRACE_CONTEXT"
PROPERTY_BORN_HOST = "__BORNHOST"
PROPERTY_BORN_TIMESTAMP = "BORN_TIMESTAMP"
# names a user property may not take, and that delivery never shows as user properties
RESERVED = mc.STRING_HASH_SET | {
    PROPERTY_TRACE_CONTEXT,
    PROPERTY_BORN_HOST,
    PROPERTY_BORN_TIMESTAMP,
    PROPERTY_POP_CK,
    PROPERTY_FIRST_POP_TIME,
    PROPERTY_DLQ_ORIGIN_TOPIC,
    PROPERTY_DLQ_ORIGIN_MESSAGE_ID,
    mc.PROPERTY_SHARDING_KEY,
    mc.PROPERTY_TIMER_DELIVER_MS,
    mc.PROPERTY_TIMER_DELAY_SEC,
    mc.PROPERTY_TIMER_DELAY_MS,
    mc.PROPERTY_TIMER_ENQUEUE_MS,
    mc.PROPERTY_TIMER_DEQUEUE_MS,
    mc.PROPERTY_TIMER_ROLL_TIMES,
    mc.PROPERTY_TIMER_OUT_MS,
    mc.PROPERTY_TIMER_DEL_UNIQKEY,
    mc.PROPERTY_TIMER_DELAY_LEVEL,
}
_TYPES_ON_WIRE: dict[TopicMessageType, pb.MessageType] = {
    TopicMessageType.NORMAL: pb.NORMAL,
    TopicMessageType.FIFO: pb.FIFO,
    TopicMessageType.DELAY: pb.DELAY,
    TopicMessageType.TRANSACTION: pb.TRANSACTION,
}


@dataclass(slots=True)
class OutgoingMessage:
    """A gRPC message as the broker takes it: SEND_MESSAGE_V2's parts."""

    topic: str
    body: bytes
    properties: dict[str, str]
    sys_flag: int
    born_timestamp_ms: int
    message_id: str

    @property
    def message_group(self) -> str | None:
        return self.properties.get(mc.PROPERTY_SHARDING_KEY)

    @property
    def is_transaction(self) -> bool:
        return self.properties.get(mc.PROPERTY_TRANSACTION_PREPARED) == "true"


def accept_types(topic_type: TopicMessageType | None) -> list[pb.MessageType]:
    """QueryRoute's ``accept_message_types`` for a topic's ``message.type``."""
    if topic_type is None or topic_type is TopicMessageType.UNSPECIFIED:
        return [pb.MESSAGE_TYPE_UNSPECIFIED]
    if topic_type is TopicMessageType.MIXED:
        return [pb.NORMAL, pb.FIFO, pb.DELAY, pb.TRANSACTION]
    return [_TYPES_ON_WIRE[topic_type]]


def message_type_of(properties: dict[str, str]) -> TopicMessageType:
    """TopicMessageType.parseFromMessageProperty: the type a message's properties say."""
    if properties.get(mc.PROPERTY_TRANSACTION_PREPARED) == "true":
        return TopicMessageType.TRANSACTION
    delay_keys = (
        mc.PROPERTY_DELAY_TIME_LEVEL,
        mc.PROPERTY_TIMER_DELIVER_MS,
        mc.PROPERTY_TIMER_DELAY_SEC,
        mc.PROPERTY_TIMER_DELAY_MS,
    )
    if any(properties.get(key) for key in delay_keys):
        return TopicMessageType.DELAY
    if properties.get(mc.PROPERTY_SHARDING_KEY):
        return TopicMessageType.FIFO
    return TopicMessageType.NORMAL


def from_grpc(
    msg: pb.Message, peer_host: str, max_body_bytes: int, *, max_delay_ms: int, now_ms: int
) -> OutgoingMessage:
    """SendMessageActivity.buildMessage with its checks (ProxyError with Java's code)."""
    body = bytes(msg.body)
    if not body:
        raise ProxyError(Code.MESSAGE_BODY_EMPTY, "message body cannot be empty")
    if len(body) > max_body_bytes:
        raise ProxyError(
            Code.MESSAGE_BODY_TOO_LARGE,
            f"message body size {len(body)} exceeds the limit {max_body_bytes}",
        )
    sp = msg.system_properties
    if not sp.message_id:
        raise ProxyError(Code.ILLEGAL_MESSAGE_ID, "message id cannot be empty")
    props = _user_properties(msg)
    _system_properties(sp, props, max_delay_ms, now_ms)
    props[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = sp.message_id
    props[mc.PROPERTY_PRODUCER_GROUP] = msg.topic.name
    props[PROPERTY_BORN_HOST] = sp.born_host or peer_host
    born_ms = _ms(sp.born_timestamp) if sp.HasField("born_timestamp") else now_ms
    sys_flag = 0
    if sp.message_type == pb.TRANSACTION:
        props[mc.PROPERTY_TRANSACTION_PREPARED] = "true"
        sys_flag |= MessageSysFlag.TRANSACTION_PREPARED_TYPE
    if sp.body_encoding == pb.GZIP:
        sys_flag |= MessageSysFlag.COMPRESSED_FLAG
    return OutgoingMessage(msg.topic.name, body, props, sys_flag, born_ms, sp.message_id)


def _user_properties(msg: pb.Message) -> dict[str, str]:
    props: dict[str, str] = {}
    for key, value in msg.user_properties.items():
        if key in RESERVED:
            raise ProxyError(
                Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property key {key} is a system property"
            )
        if _has_control(key) or _has_control(value):
            raise ProxyError(
                Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property {key} has a control character"
            )
        props[key] = value
    if len(props) > 128:
        raise ProxyError(Code.MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties (> 128)")
    return props


def _system_properties(
    sp: pb.SystemProperties, props: dict[str, str], max_delay_ms: int, now_ms: int
) -> None:
    if sp.HasField("tag"):
        if not sp.tag.strip() or "|" in sp.tag or _has_control(sp.tag):
            raise ProxyError(Code.ILLEGAL_MESSAGE_TAG, f"tag {sp.tag!r} is illegal")
        props[mc.PROPERTY_TAGS] = sp.tag
    for key in sp.keys:
        if not key.strip() or _has_control(key):
            raise ProxyError(Code.ILLEGAL_MESSAGE_KEY, f"key {key!r} is illegal")
    if sp.keys:
        props[mc.PROPERTY_KEYS] = mc.KEY_SEPARATOR.join(sp.keys)
    if sp.HasField("message_group"):
        group = sp.message_group
        if not group.strip() or len(group.encode()) >= 64 or _has_control(group):
            raise ProxyError(Code.ILLEGAL_MESSAGE_GROUP, f"message group {group!r} is illegal")
        props[mc.PROPERTY_SHARDING_KEY] = group
    if sp.HasField("delivery_timestamp"):
        deliver_ms = _ms(sp.delivery_timestamp)
        if deliver_ms - now_ms > max_delay_ms:
            raise ProxyError(
                Code.ILLEGAL_DELIVERY_TIME, f"delivery time is more than {max_delay_ms} ms ahead"
            )
        props[mc.PROPERTY_TIMER_DELIVER_MS] = str(deliver_ms)
    if sp.HasField("trace_context"):
        props[PROPERTY_TRACE_CONTEXT] = sp.trace_context
    if sp.HasField("orphaned_transaction_recovery_duration"):
        seconds = sp.orphaned_transaction_recovery_duration.seconds
        if seconds > 3600:
            raise ProxyError(Code.BAD_REQUEST, "orphaned transaction recovery duration > 1 h")
        props[mc.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS] = str(seconds)
    if sp.HasField("delivery_attempt") and sp.delivery_attempt > 0:
        props[mc.PROPERTY_RECONSUME_TIME] = str(sp.delivery_attempt)
    size = sum(len(k) + len(v) for k, v in props.items())
    if size > 16 * 1024:
        raise ProxyError(Code.MESSAGE_PROPERTIES_TOO_LARGE, "properties exceed 16 KiB")


def to_grpc(msg: MessageExt, topic: str, *, receipt_handle: str | None = None) -> pb.Message:
    """GrpcConverter.buildMessage: a stored message as the 5.x clients read it."""
    props = msg.properties
    sp = pb.SystemProperties(
        message_id=props.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg.msg_id,
        body_digest=pb.Digest(type=pb.MD5, checksum=hashlib.md5(msg.body).hexdigest().upper()),
        body_encoding=pb.GZIP if msg.sys_flag & MessageSysFlag.COMPRESSED_FLAG else pb.IDENTITY,
        message_type=_TYPES_ON_WIRE[message_type_of(props)],
        born_timestamp=_timestamp(msg.born_timestamp),
        born_host=props.get(PROPERTY_BORN_HOST) or msg.born_host[0],
        store_timestamp=_timestamp(msg.store_timestamp),
        store_host=f"{msg.store_host[0]}:{msg.store_host[1]}",
        queue_id=msg.queue_id,
        queue_offset=msg.queue_offset,
        delivery_attempt=msg.reconsume_times + 1,
    )
    if mc.PROPERTY_TAGS in props:
        sp.tag = props[mc.PROPERTY_TAGS]
    if props.get(mc.PROPERTY_KEYS):
        sp.keys.extend(k for k in props[mc.PROPERTY_KEYS].split(mc.KEY_SEPARATOR) if k)
    if mc.PROPERTY_SHARDING_KEY in props:
        sp.message_group = props[mc.PROPERTY_SHARDING_KEY]
    if PROPERTY_TRACE_CONTEXT in props:
        sp.trace_context = props[PROPERTY_TRACE_CONTEXT]
    deliver = props.get(mc.PROPERTY_TIMER_DELIVER_MS)
    if deliver and deliver.isdigit():
        sp.delivery_timestamp.CopyFrom(_timestamp(int(deliver)))
    if receipt_handle is not None:
        sp.receipt_handle = receipt_handle
    origin_topic = props.get(PROPERTY_DLQ_ORIGIN_TOPIC)
    origin_id = props.get(PROPERTY_DLQ_ORIGIN_MESSAGE_ID)
    if origin_topic and origin_id:
        sp.dead_letter_queue.CopyFrom(pb.DeadLetterQueue(topic=origin_topic, message_id=origin_id))
    user = {k: v for k, v in props.items() if k not in RESERVED}
    return pb.Message(
        topic=pb.Resource(name=topic), user_properties=user, system_properties=sp, body=msg.body
    )


def duration(ms: int) -> Duration:
    return Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def duration_ms(d: Duration) -> int:
    return d.seconds * 1000 + d.nanos // 1_000_000


def now_timestamp() -> Timestamp:
    return _timestamp(int(time.time() * 1000))


def _timestamp(ms: int) -> Timestamp:
    return Timestamp(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def _ms(ts: Timestamp) -> int:
    return ts.seconds * 1000 + ts.nanos // 1_000_000


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)
