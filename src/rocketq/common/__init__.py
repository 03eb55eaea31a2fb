"""rocketq.common: RocketMQ's IO-free vocabulary, shared by every other package.

Wire shapes (DataVersion, SubscriptionData, JSON bodies) are ``rocketq.remoting.protocol``'s.

Modules:
    message           Message, MessageExt, MessageQueue
    message_const     property names (MessageConst) and SYSFLAG bits (MessageSysFlag)
    record_layout     the commitlog record layout: byte diagram, structs, named positions
    message_decoder   the record codec (encode/decode_message) and batch bodies
    message_id        offset msgIds and host bytes; message_client_id: UNIQ_KEY ids
    properties        the properties string codec; java_properties: broker.conf files
    topic             system topic names, %RETRY%/%DLQ%, validate_topic (TopicValidator)
    topic_config      TopicConfig and PERM_* (PermName)
    pull_sys_flag     PullSysFlag bits
    hashing           Java's String.hashCode and the index key hash
    clock             now_ms
"""

from rocketq.common.clock import now_ms
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import (
    decode_batch_messages,
    decode_message,
    decode_messages,
    encode_batch_messages,
    encode_message,
)
from rocketq.common.message_id import Host, create_message_id, decode_message_id
from rocketq.common.topic import dlq_topic, retry_topic, validate_topic
from rocketq.common.topic_config import PERM_INHERIT, PERM_READ, PERM_WRITE, TopicConfig

__all__ = [
    "PERM_INHERIT",
    "PERM_READ",
    "PERM_WRITE",
    "Host",
    "Message",
    "MessageExt",
    "MessageQueue",
    "MessageSysFlag",
    "TopicConfig",
    "create_message_id",
    "decode_batch_messages",
    "decode_message",
    "decode_message_id",
    "decode_messages",
    "dlq_topic",
    "encode_batch_messages",
    "encode_message",
    "now_ms",
    "retry_topic",
    "validate_topic",
]
