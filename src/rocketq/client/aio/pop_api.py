"""The POP calls of MQClientAPIImpl (RocketMQ 5): POP_MESSAGE, ACK_MESSAGE and
CHANGE_MESSAGE_INVISIBLETIME, and the decoding of a pop's reply (processPopResponse).

Each popped message gets its handle in the ``POP_CK`` property, built from the reply's
``startOffsetInfo`` and popTime/invisibleTime/reviveQid unless the broker set it (a message
of the POP retry topic); a FIFO pop's ``orderCountInfo`` becomes the message's
``reconsume_times``; ``1ST_POP_TIME`` is set at the first pop. A message's handle names its
broker, so an ack or a change goes to that broker whatever the consumer does meanwhile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rocketq.client.aio.instance import MQClientInstance
from rocketq.common.extra_info import (
    PROPERTY_FIRST_POP_TIME,
    PROPERTY_POP_CK,
    ExtraInfo,
    order_count_of,
    parse_extra_info,
    parse_order_count_info,
    parse_start_offset_info,
    pop_handle_prefix,
    real_topic,
)
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_messages
from rocketq.errors import ClientError, for_code
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    INIT_MODE_MAX,
    AckMessageRequestHeader,
    ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader,
    PopMessageRequestHeader,
    PopMessageResponseHeader,
)
from rocketq.remoting.protocol.subscription import SubscriptionData, is_tag_matched
from rocketq.response_code import ResponseCode

# codes a pop answers when there is nothing to pop (PopStatus.POLLING_NOT_FOUND / NO_NEW_MSG)
NOT_FOUND_CODES = (ResponseCode.POLLING_TIMEOUT, ResponseCode.PULL_NOT_FOUND)


@dataclass(slots=True)
class PopResult:
    msgs: list[MessageExt] = field(default_factory=list)
    pop_time: int = 0
    invisible_time: int = 0
    rest_num: int = 0
    polling_full: bool = False


def handle_of(msg: MessageExt) -> ExtraInfo:
    """The message's receipt handle (its ``POP_CK``); ClientError if it was not popped."""
    return parse_extra_info(handle_text_of(msg))


def handle_text_of(msg: MessageExt) -> str:
    """The message's ``POP_CK`` string, sent as it is (ClientError if it was not popped)."""
    handle = msg.properties.get(PROPERTY_POP_CK)
    if handle is None:
        raise ClientError(f"message {msg.msg_id} was not popped: it has no receipt handle")
    return handle


async def pop_message(
    instance: MQClientInstance,
    addr: str,
    broker_name: str,
    group: str,
    subscription: SubscriptionData,
    *,
    max_nums: int,
    invisible_ms: int,
    poll_ms: int,
    order: bool = False,
    attempt_id: str | None = None,
    queue_id: int = -1,
) -> PopResult:
    """One POP_MESSAGE; POLLING_TIMEOUT and POLLING_FULL are empty results."""
    header = PopMessageRequestHeader(
        consumer_group=group,
        topic=subscription.topic,
        queue_id=queue_id,
        max_msg_nums=max_nums,
        invisible_time=invisible_ms,
        poll_time=poll_ms,
        born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MAX,
        exp_type=subscription.expression_type or None,
        exp=subscription.sub_string,
        order=order,
        attempt_id=attempt_id,
    )
    request = RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())
    timeout_s = poll_ms / 1000 + instance.config.request_timeout_s
    response = await instance.remoting.invoke(addr, request, timeout_s)
    if response.code in NOT_FOUND_CODES:
        return PopResult()
    if response.code == ResponseCode.POLLING_FULL:
        return PopResult(polling_full=True)
    if response.code != ResponseCode.SUCCESS:
        raise for_code(response.code, response.remark or "")
    return process_pop_response(response, broker_name, subscription)


def process_pop_response(
    response: RemotingCommand, broker_name: str, subscription: SubscriptionData
) -> PopResult:
    """MQClientAPIImpl.processPopResponse: messages with their handles and counts (read
    whenever the reply has orderCountInfo: a FIFO group's pops are FIFO without ``order``)."""
    h, msgs = popped_messages(response, broker_name)
    result = PopResult(pop_time=h.pop_time, invisible_time=h.invisible_time, rest_num=h.rest_num)
    for msg in msgs:
        msg.properties.setdefault(PROPERTY_FIRST_POP_TIME, str(h.pop_time))
        msg.msg_id = msg.uniq_key or msg.msg_id
        msg.topic = subscription.topic
        if is_tag_matched(subscription, msg.tags):
            result.msgs.append(msg)
    return result


def popped_messages(
    response: RemotingCommand, broker_name: str, handles: list[str] | None = None
) -> tuple[PopMessageResponseHeader, list[MessageExt]]:
    """A POP reply's header and its messages, each with its receipt handle in ``POP_CK`` (built
    from ``startOffsetInfo`` unless the broker set one) and a FIFO pop's count as its
    ``reconsume_times``: the part of processPopResponse every reader of a pop shares. The
    handles are also appended to ``handles``, in the messages' order, when it is given (a
    reader that acks them all needs no second walk over the messages)."""
    h = PopMessageResponseHeader.from_ext_fields(response.ext_fields)
    starts = parse_start_offset_info(h.start_offset_info)
    counts = parse_order_count_info(h.order_count_info)
    msgs = decode_messages(response.body or b"", decompress=True)
    # the handles of one (topic, queue) differ only in their last field: one prefix for each
    # (the last one found is tried first: a pop's messages come queue by queue)
    prefixes: dict[tuple[str, int], str] = {}
    last_topic: str | None = None  # no queue met yet
    last_qid, prefix = 0, ""
    keep = handles.append if handles is not None else None
    for msg in msgs:
        properties = msg.properties
        if PROPERTY_POP_CK in properties:
            if keep is not None:
                keep(properties[PROPERTY_POP_CK])
            continue
        topic, qid = msg.topic, msg.queue_id
        if qid != last_qid or topic != last_topic:
            last_topic, last_qid = topic, qid
            known = prefixes.get((topic, qid))
            if known is None:
                known = prefixes[(topic, qid)] = pop_handle_prefix(
                    starts, h.pop_time, h.invisible_time, h.revive_qid, topic, broker_name, qid
                )
            prefix = known
        handle = properties[PROPERTY_POP_CK] = prefix + str(msg.queue_offset)
        if keep is not None:
            keep(handle)
        if counts:
            count = order_count_of(counts, topic, qid, msg.queue_offset)
            if count > 0:
                msg.reconsume_times = count
    return h, msgs


async def ack_message(instance: MQClientInstance, addr: str, group: str, msg: MessageExt) -> None:
    """ACK_MESSAGE with the message's handle (to its real topic, queue and offset)."""
    text = handle_text_of(msg)
    e = parse_extra_info(text)
    header = AckMessageRequestHeader(
        consumer_group=group,
        topic=real_topic(msg.topic, group, e.mark),
        queue_id=e.queue_id,
        extra_info=text,
        offset=e.queue_offset,
    )
    request = RemotingCommand.create_request(RequestCode.ACK_MESSAGE, header.to_ext_fields())
    response = await instance.remoting.invoke(addr, request, instance.config.request_timeout_s)
    if response.code != ResponseCode.SUCCESS:
        raise for_code(response.code, response.remark or "")


async def change_invisible_time(
    instance: MQClientInstance, addr: str, group: str, msg: MessageExt, invisible_ms: int
) -> None:
    """CHANGE_MESSAGE_INVISIBLETIME; the message's ``POP_CK`` becomes the new handle (whose
    checkpoint starts at the message: the broker wrote a one-message checkpoint for it)."""
    e = handle_of(msg)
    header = ChangeInvisibleTimeRequestHeader(
        consumer_group=group,
        topic=real_topic(msg.topic, group, e.mark),
        queue_id=e.queue_id,
        extra_info=e.encode(),
        offset=e.queue_offset,
        invisible_time=invisible_ms,
    )
    request = RemotingCommand.create_request(
        RequestCode.CHANGE_MESSAGE_INVISIBLETIME, header.to_ext_fields()
    )
    response = await instance.remoting.invoke(addr, request, instance.config.request_timeout_s)
    if response.code != ResponseCode.SUCCESS:
        raise for_code(response.code, response.remark or "")
    r = ChangeInvisibleTimeResponseHeader.from_ext_fields(response.ext_fields)
    msg.properties[PROPERTY_POP_CK] = ExtraInfo(
        e.queue_offset, r.pop_time, r.invisible_time, r.revive_qid, e.mark, e.broker_name,
        e.queue_id, e.queue_offset,
    ).encode()  # fmt: skip
