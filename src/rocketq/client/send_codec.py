"""The producer's send codec: the SEND_MESSAGE_V2 request fields and the send reply's values
(RocketMQ's ``SendMessageRequestHeaderV2`` and ``MQClientAPIImpl.processSendResponse``).

Every send builds the short-name extFields ``a`` .. ``m`` of its request and reads a
``SendResult`` out of its reply. ``CODEC`` is the C module ``rocketq._native._client``
(``client_codec.c``) or None: None when the extension is missing or the environment says
``ROCKETQ_NATIVE=0`` (the switch of every native path, ``rocketq.common.native_record``);
:func:`use` flips it for the tests, which run both. The Python functions here are the
reference: C returns None for anything outside the common forms and they decide, or word
the error. The request's frame head is written by the remoting codec (C's
``encode_json_head`` or ``codec.encode_head``), after any RPC hook has signed the fields, so
ACL signing and the message trace (``trace.hooks.pub_context``, RocketMQ's
``SendMessageTraceHookImpl``) see the same request on both paths.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from rocketq.client.status import SendResult, SendStatus
from rocketq.common import message_const as mc
from rocketq.common.message import Message, MessageQueue
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.native_record import ENV_SWITCH
from rocketq.common.properties import properties_to_string
from rocketq.errors import for_code
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageRequestHeader, SendMessageResponseHeader
from rocketq.response_code import ResponseCode

if TYPE_CHECKING:
    from rocketq.client.config import ProducerConfig

log = logging.getLogger(__name__)

ReplyValues = tuple[str, int, int, str | None, str | None, str, bool]

SEND_STATUS = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}


class SendCodec(Protocol):
    """What this module uses of ``rocketq._native._client`` (its stub has the details)."""

    def send_v2_fields(
        self,
        group: str,
        topic: str,
        default_topic: str,
        default_topic_queue_nums: int,
        queue_id: int,
        sys_flag: int,
        born_timestamp: int,
        flag: int,
        properties: Mapping[str, str | None] | str | None,
        reconsume_times: int | None,
        unit_mode: bool,
        max_reconsume_times: int | None,
        batch: bool,
        /,
    ) -> dict[str, str] | None: ...
    def send_result_values(self, ext_fields: dict[str, str], /) -> ReplyValues | None: ...


COMPILED: SendCodec | None
try:
    from rocketq._native import _client as _compiled
except ImportError as exc:  # pragma: no cover - a source tree without the built extension
    log.debug("rocketq._native._client not built (%s): the Python send codec", exc)
    COMPILED = None
else:
    COMPILED = _compiled

CODEC: SendCodec | None = None


def use(native: bool) -> bool:
    """Select the C send codec (when built) or the Python one; True when C is now in use."""
    global CODEC
    CODEC = COMPILED if native else None
    return CODEC is not None


# --------------------------------------------------------------------------- requests


def send_v2_ext_fields(header: SendMessageRequestHeader) -> dict[str, str]:
    """``header.to_v2().to_ext_fields()`` written out, the same keys in the same order
    (every SEND_MESSAGE_V2 pays it: no second dataclass, no per-field reflection)."""
    out = {
        "a": header.producer_group,
        "b": header.topic,
        "c": header.default_topic,
        "d": str(header.default_topic_queue_nums),
        "e": str(header.queue_id),
        "f": str(header.sys_flag),
        "g": str(header.born_timestamp),
        "h": str(header.flag),
    }
    if header.properties is not None:
        out["i"] = header.properties
    if header.reconsume_times is not None:
        out["j"] = str(header.reconsume_times)
    out["k"] = "true" if header.unit_mode else "false"
    if header.max_reconsume_times is not None:
        out["l"] = str(header.max_reconsume_times)
    out["m"] = "true" if header.batch else "false"
    return out


def header_carries_properties(sys_flag: int, *, batch: bool) -> bool:
    """A message's properties go in the header; a batch's are its messages' (in the body),
    except for a transactional batch (rocketq's extension, broker/transaction_batch.py),
    whose header carries the batch half's own (TRAN_MSG, PGROUP, the sender's)."""
    prepared = MessageSysFlag.TRANSACTION_PREPARED_TYPE
    return not batch or MessageSysFlag.get_transaction_value(sys_flag) == prepared


def message_ext_fields(
    config: ProducerConfig,
    msg: Message,
    queue_id: int,
    sys_flag: int,
    born_timestamp: int,
    *,
    batch: bool,
) -> dict[str, str]:
    """The extFields of the producer's send of ``msg`` to queue ``queue_id`` (a batch's
    properties are its messages', in the body): C's when it takes them, else the
    reference's."""
    codec = CODEC
    if codec is not None:
        fields = codec.send_v2_fields(
            config.producer_group,
            msg.topic,
            config.create_topic_key,
            config.default_topic_queue_nums,
            queue_id,
            sys_flag,
            born_timestamp,
            msg.flag,
            msg.properties if header_carries_properties(sys_flag, batch=batch) else "",
            0,
            False,
            None,
            batch,
        )
        if fields is not None:
            return fields
    return python_ext_fields(config, msg, queue_id, sys_flag, born_timestamp, batch=batch)


def python_ext_fields(
    config: ProducerConfig,
    msg: Message,
    queue_id: int,
    sys_flag: int,
    born_timestamp: int,
    *,
    batch: bool,
) -> dict[str, str]:
    """The reference of :func:`message_ext_fields`: the typed header, then its fields."""
    header = SendMessageRequestHeader(
        producer_group=config.producer_group,
        topic=msg.topic,
        default_topic=config.create_topic_key,
        default_topic_queue_nums=config.default_topic_queue_nums,
        queue_id=queue_id,
        sys_flag=sys_flag,
        born_timestamp=born_timestamp,
        flag=msg.flag,
        properties=(
            properties_to_string(msg.properties)
            if header_carries_properties(sys_flag, batch=batch)
            else ""
        ),
        reconsume_times=0,
        unit_mode=False,
        batch=batch,
    )
    return send_v2_ext_fields(header)


# --------------------------------------------------------------------------- replies


def send_result(response: RemotingCommand, mq: MessageQueue, uniq_id: str) -> SendResult:
    """The SendResult of a send reply, or the error its code names."""
    status = SEND_STATUS.get(response.code)  # type: ignore[call-overload]
    if status is None:
        raise for_code(response.code, response.remark or "")
    values = None
    codec = CODEC
    if codec is not None:
        values = codec.send_result_values(response.ext_fields)
    if values is None:
        values = python_result_values(response.ext_fields)
    msg_id, queue_id, queue_offset, transaction_id, recall_handle, region_id, trace_on = values
    return SendResult(
        status=status,
        msg_id=uniq_id,
        message_queue=MessageQueue(mq.topic, mq.broker_name, queue_id),
        queue_offset=queue_offset,
        offset_msg_id=msg_id,
        transaction_id=transaction_id,
        region_id=region_id,
        trace_on=trace_on,
        recall_handle=recall_handle,
    )


def python_result_values(ext_fields: dict[str, str]) -> ReplyValues:
    """The reference of C's ``send_result_values``: a missing or malformed field raises
    ``RemotingCommandError`` naming it."""
    rh = SendMessageResponseHeader.from_ext_fields(ext_fields)
    return (
        rh.msg_id,
        rh.queue_id,
        rh.queue_offset,
        rh.transaction_id,
        rh.recall_handle,
        ext_fields.get(mc.PROPERTY_MSG_REGION, "DefaultRegion"),
        ext_fields.get(mc.PROPERTY_TRACE_SWITCH, "true") != "false",
    )


use(os.environ.get(ENV_SWITCH, "1") != "0")
