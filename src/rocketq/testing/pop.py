"""Raw POP requests for tests (there is no SimpleConsumer yet): POP_MESSAGE with each popped
message's handle built as the Java client builds ``POP_CK`` (MQClientAPIImpl.processPopResponse),
ACK_MESSAGE, BATCH_ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME as the Java client sends them
(the real topic, queue and offset of the handle)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType

from rocketq.client.aio.pop_api import popped_messages
from rocketq.common import native_record
from rocketq.common.extra_info import (
    PROPERTY_POP_CK,
    ExtraInfo,
    group_handles,
    parse_extra_info,
    real_topic,
)
from rocketq.common.message import MessageExt
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    INIT_MODE_MAX,
    AckMessageRequestHeader,
    BatchAck,
    ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader,
    PopMessageRequestHeader,
    encode_batch_ack_body,
)
from rocketq.response_code import ResponseCode

TIMEOUT_S = 30.0
# the BitSet indexes a batch ack is written with (an offset less its checkpoint's): Java's
# client casts them to int; below that, a bound no pop's checkpoint comes near
MAX_BIT_INDEX = 1 << 20

COMPILED_CLIENT: ModuleType | None  # the C batch ack of handles (pop_client.c), if built
try:
    from rocketq._native import _pop_client as COMPILED_CLIENT
except ImportError:  # pragma: no cover - a source tree without the built extension
    COMPILED_CLIENT = None


@dataclass(slots=True)
class Popped:
    msg: MessageExt
    handle: str

    @property
    def extra(self) -> ExtraInfo:
        return parse_extra_info(self.handle)


def pop_request(
    group: str,
    topic: str,
    *,
    max_nums: int = 32,
    invisible_ms: int = 2000,
    poll_ms: int = 0,
    exp: str | None = None,
    exp_type: str | None = None,
    queue_id: int = -1,
    order: bool = False,
    attempt_id: str | None = None,
) -> RemotingCommand:
    header = PopMessageRequestHeader(
        consumer_group=group,
        topic=topic,
        queue_id=queue_id,
        max_msg_nums=max_nums,
        invisible_time=invisible_ms,
        poll_time=poll_ms,
        born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MAX,
        exp_type=exp_type,
        exp=exp,
        order=order,
        attempt_id=attempt_id,
    )
    return RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())


def popped_of(response: RemotingCommand, broker_name: str) -> list[Popped]:
    """The messages of a POP response with their handles (empty unless SUCCESS)."""
    if response.code != ResponseCode.SUCCESS:
        return []
    _, msgs = popped_messages(response, broker_name)
    return [Popped(msg, msg.properties[PROPERTY_POP_CK]) for msg in msgs]


def popped_handles(response: RemotingCommand, broker_name: str) -> list[str]:
    """The handles of a POP response's messages, in their order (empty unless SUCCESS): the
    messages decoded and given their handles as :func:`popped_of` does, without a
    :class:`Popped` a message (a load generator that only acks them)."""
    handles: list[str] = []
    if response.code == ResponseCode.SUCCESS:
        popped_messages(response, broker_name, handles)
    return handles


async def pop(
    client: RemotingClient, addr: str, broker_name: str, group: str, topic: str, **options: object
) -> tuple[RemotingCommand, list[Popped]]:
    response = await client.invoke(addr, pop_request(group, topic, **options), TIMEOUT_S)  # type: ignore[arg-type]
    return response, popped_of(response, broker_name)


async def ack(
    client: RemotingClient, addr: str, group: str, topic: str, handle: str
) -> RemotingCommand:
    extra = parse_extra_info(handle)
    header = AckMessageRequestHeader(
        consumer_group=group,
        topic=real_topic(topic, group, extra.mark),
        queue_id=extra.queue_id,
        extra_info=handle,
        offset=extra.queue_offset,
    )
    request = RemotingCommand.create_request(RequestCode.ACK_MESSAGE, header.to_ext_fields())
    return await client.invoke(addr, request, TIMEOUT_S)


def batch_ack_request(
    broker_name: str, group: str, topic: str, handles: list[str]
) -> RemotingCommand:
    """BATCH_ACK_MESSAGE of ``handles``: one BatchAck per checkpoint (mark, queue, start
    offset, pop time), the body written in C (``rocketq._native._pop_client``, with
    ``rocketq.common.native_record``'s switch) where the handles are plain, else by
    :func:`batch_ack_body_reference`."""
    body = None
    if COMPILED_CLIENT is not None and native_record.RECORD is not None:
        body = COMPILED_CLIENT.batch_ack_body(broker_name, group, topic, list(handles))
    if body is None:
        body = batch_ack_body_reference(broker_name, group, topic, handles)
    return RemotingCommand.create_request(RequestCode.BATCH_ACK_MESSAGE, body=body)


def batch_ack_body_reference(broker_name: str, group: str, topic: str, handles: list[str]) -> bytes:
    """The body of :func:`batch_ack_request` in Python: each handle's prefix is read once
    (``group_handles``); ExtraInfoError or ValueError for a handle it cannot ack (an offset
    before its checkpoint, or ``MAX_BIT_INDEX`` or more past it: a BitSet that large is not
    a pop's, and would take gigabytes for an offset billions past)."""
    for e, offsets in group_handles(handles):
        for offset in offsets:
            if not 0 <= offset - e.ck_queue_offset < MAX_BIT_INDEX:
                raise ValueError(f"offset {offset} is not within its checkpoint's BitSet")
    acks = [
        BatchAck(
            consumer_group=group,
            topic=topic,
            retry=e.mark,
            start_offset=e.ck_queue_offset,
            queue_id=e.queue_id,
            revive_queue_id=e.revive_qid,
            pop_time=e.pop_time,
            invisible_time=e.invisible_time,
            bit_set=tuple(offset - e.ck_queue_offset for offset in offsets),
        )
        for e, offsets in group_handles(handles)
    ]
    return encode_batch_ack_body(broker_name, acks)


async def batch_ack(
    client: RemotingClient, addr: str, broker_name: str, group: str, topic: str, handles: list[str]
) -> RemotingCommand:
    """:func:`batch_ack_request`, sent."""
    request = batch_ack_request(broker_name, group, topic, handles)
    return await client.invoke(addr, request, TIMEOUT_S)


async def change_invisible_time(
    client: RemotingClient, addr: str, group: str, topic: str, handle: str, invisible_ms: int
) -> tuple[RemotingCommand, str | None]:
    """The response and the new handle (None unless SUCCESS)."""
    e = parse_extra_info(handle)
    header = ChangeInvisibleTimeRequestHeader(
        consumer_group=group,
        topic=real_topic(topic, group, e.mark),
        queue_id=e.queue_id,
        extra_info=handle,
        offset=e.queue_offset,
        invisible_time=invisible_ms,
    )
    request = RemotingCommand.create_request(
        RequestCode.CHANGE_MESSAGE_INVISIBLETIME, header.to_ext_fields()
    )
    response = await client.invoke(addr, request, TIMEOUT_S)
    if response.code != ResponseCode.SUCCESS:
        return response, None
    r = ChangeInvisibleTimeResponseHeader.from_ext_fields(response.ext_fields)
    new = ExtraInfo(
        e.queue_offset, r.pop_time, r.invisible_time, r.revive_qid, e.mark, e.broker_name,
        e.queue_id, e.queue_offset,
    )  # fmt: skip
    return response, new.encode()
