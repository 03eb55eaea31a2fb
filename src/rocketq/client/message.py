"""What a producer does to a Message before it leaves.

The message is ``rocketq.common.message.Message``, as RocketMQ's client sends
``common.message.Message``. ``prepare_for_send`` checks it as RocketMQ's ``Validators`` does,
gives it a UNIQ_KEY (MessageClientIDSetter) and zlib-compresses a body of 4 KiB or more
(``tryToCompressMessage``), returning the body and sysflag to send.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from rocketq.common import message_const as mc
from rocketq.common import topic as common_topic
from rocketq.common.hashing import message_group_queue_index
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.common.message_client_id import create_uniq_id
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import validate_topic
from rocketq.errors import ClientError

COMPRESSED_SYS_FLAG = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB


def check_topic(topic: str) -> None:
    """Validators.checkTopic: the common topic rules, raised as ClientError."""
    reason = validate_topic(topic)
    if reason is not None:
        raise ClientError(reason)


def check_message(msg: Message, max_message_size_bytes: int) -> None:
    """Validators.checkMessage."""
    check_topic(msg.topic)
    if not msg.body:
        raise ClientError("the message body is empty")
    if len(msg.body) > max_message_size_bytes:
        raise ClientError(f"the message body size over max value, MAX: {max_message_size_bytes}")


def message_group_queue(mqs: Sequence[MessageQueue], msg: Message) -> MessageQueue | None:
    """The write queue of the message's group, None without one: RocketMQ 5's proxy
    (SendMessageActivity.SendMessageQueueSelector) takes the write queues sorted by broker name
    and queue id and ``Hashing.consistentHash(group.hashCode(), count)`` of them."""
    group = msg.message_group
    if not group or not mqs:
        return None
    queues = sorted(mqs, key=lambda mq: (mq.broker_name, mq.queue_id))
    return queues[message_group_queue_index(group, len(queues))]


def set_uniq_id(msg: Message) -> str:
    uniq = msg.uniq_key
    if uniq is None:
        uniq = create_uniq_id()
        msg.put_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq)
    return uniq


def compress_body(body: bytes, over_bytes: int, level: int) -> tuple[bytes, int]:
    """(body to send, sysflag bits): zlib at ``level`` when the body is ``over_bytes`` or more."""
    if len(body) >= over_bytes:
        return zlib.compress(body, level), COMPRESSED_SYS_FLAG
    return body, 0


def prepare_for_send(
    msg: Message, *, max_size: int, compress_over: int, level: int
) -> tuple[bytes, int]:
    check_message(msg, max_size)
    set_uniq_id(msg)
    body, sys_flag = compress_body(msg.body, compress_over, level)
    if msg.get_property(mc.PROPERTY_TRANSACTION_PREPARED) == "true":
        sys_flag |= MessageSysFlag.TRANSACTION_PREPARED_TYPE
    return body, sys_flag


def restore_retry_topic(msg: MessageExt, group: str) -> None:
    """Show a redelivered message under its original topic (resetRetryAndNamespace)."""
    retry_topic = msg.get_property(mc.PROPERTY_RETRY_TOPIC)
    if retry_topic and msg.topic == common_topic.retry_topic(group):
        msg.topic = retry_topic
