"""A store put's answer to a send: the response code and remark of each PutMessageStatus
(SendMessageProcessor.handlePutMessageResult), the SEND_MESSAGE response header, and the
BrokerStatsManager put figures with RocketMQ 5's message_type label.
"""

from __future__ import annotations

import time

from rocketq.broker.broker_context import BrokerContext
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_id import create_message_id
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageResponseHeader
from rocketq.response_code import ResponseCode
from rocketq.store.config import StoreConfig
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.store.timer.timer_hook import TIMER_TOPIC

REGION_ID = "DefaultRegion"

#: Store status -> (response code, remark) (SendMessageProcessor.handlePutMessageResult).
STATUS_TO_RESPONSE: dict[PutMessageStatus, tuple[int, str | None]] = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    PutMessageStatus.CREATE_MAPPED_FILE_FAILED: (
        ResponseCode.SYSTEM_ERROR,
        "create mapped file failed, server is busy or broken.",
    ),
    PutMessageStatus.MESSAGE_ILLEGAL: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg body or properties length not matched.",
    ),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg properties length limit 32k.",
    ),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (
        ResponseCode.SERVICE_NOT_AVAILABLE,
        "service not available now. It may be caused by one of the following reasons: "
        "the broker's disk is full, messages are put to the slave, "
        "message store has been shut down, etc.",
    ),
    PutMessageStatus.OS_PAGE_CACHE_BUSY: (
        ResponseCode.SYSTEM_BUSY,
        "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
    ),
    PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH: (
        ResponseCode.SYSTEM_ERROR,
        "in-sync replicas not enough",
    ),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
    # the timer's remarks carry the store's settings (timer_remark fills them in)
    PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL: (
        ResponseCode.MESSAGE_ILLEGAL,
        "timer message illegal, the delay time should not be bigger than the max delay "
        "{max_delay_ms}ms; or if set del msg, the delay time should be bigger than the current "
        "time",
    ),
    PutMessageStatus.WHEEL_TIMER_FLOW_CONTROL: (
        ResponseCode.SYSTEM_ERROR,
        "timer message is under flow control, max num limit is {congest_twice} or the current "
        "value is greater than {congest} and less than {congest_twice}, trigger random flow "
        "control",
    ),
    PutMessageStatus.WHEEL_TIMER_NOT_ENABLE: (
        ResponseCode.SYSTEM_ERROR,
        "accurate timer message is not enabled, timerWheelEnable is {enabled}",
    ),
}

assert set(STATUS_TO_RESPONSE) == set(PutMessageStatus)


def record_put(
    broker: BrokerContext, topic: str, result: PutMessageResult, started: float, message_type: str
) -> None:
    """BrokerStatsManager's put figures, for puts the store accepted."""
    stats = broker.broker_stats_manager
    stats.record_put_latency((time.perf_counter() - started) * 1000)
    append = result.append_result
    if append is None or not result.is_ok:
        return
    stats.record_put(topic, append.msg_num, append.wrote_bytes, message_type=message_type)


def timer_remark(status: PutMessageStatus, config: StoreConfig) -> str | None:
    """The remark of a status, the timer's with the store's settings filled in
    (SendMessageProcessor.handlePutMessageResult)."""
    remark = STATUS_TO_RESPONSE[status][1]
    if remark is None or not status.name.startswith("WHEEL_TIMER"):
        return remark
    congest = config.timer_congest_num_each_slot
    return remark.format(
        max_delay_ms=config.timer_max_delay_sec * 1000,
        congest=congest,
        congest_twice=congest * 2,
        enabled=str(config.timer_wheel_enable).lower(),
    )


def put_response(
    broker: BrokerContext,
    result: PutMessageResult,
    *,
    queue_id: int,
    recall_handle: str | None = None,
) -> RemotingCommand:
    """A send's response to its put (SendMessageProcessor.handlePutMessageResult)."""
    code = STATUS_TO_RESPONSE[result.status][0]
    remark = timer_remark(result.status, broker.message_store.config)
    append = result.append_result
    if not result.is_ok or append is None:
        return RemotingCommand.create_response(code, remark or result.status.name)
    header = SendMessageResponseHeader(
        msg_id=append.msg_id or create_message_id(broker.store_host, append.wrote_offset),
        queue_id=queue_id,
        queue_offset=append.queue_offset,
        recall_handle=recall_handle,
    )
    fields = header.to_ext_fields()
    fields[mc.PROPERTY_MSG_REGION] = REGION_ID
    fields[mc.PROPERTY_TRACE_SWITCH] = "true"
    return RemotingCommand.create_response(code, None, ext_fields=fields)


def message_type_of(msg: MessageExt) -> str:
    """The message_type label of RocketMQ 5's metrics: Delay, Transaction or Normal."""
    return message_type_for(msg.topic, msg.sys_flag)


def message_type_for(topic: str, sys_flag: int) -> str:
    """``message_type_of`` a message of ``topic`` with ``sys_flag``."""
    if topic in (SCHEDULE_TOPIC, TIMER_TOPIC):
        return "Delay"
    tran = MessageSysFlag.get_transaction_value(sys_flag)
    if tran == MessageSysFlag.TRANSACTION_PREPARED_TYPE:
        return "Transaction"
    return "Normal"
