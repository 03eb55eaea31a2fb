"""The records the client's hooks write: SendMessageTraceHookImpl (Pub),
ConsumeMessageTraceHookImpl (SubBefore, SubAfter) and EndTransactionTraceHookImpl
(EndTransaction) of RocketMQ's client/trace/hook, as pure builders."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from rocketq.client.status import SendResult, SendStatus
from rocketq.client.trace.context import (
    DEFAULT_REGION_ID,
    ConsumeReturnType,
    MessageType,
    TraceBean,
    TraceContext,
    TraceType,
)
from rocketq.client.trace.dispatcher import AsyncTraceDispatcher
from rocketq.common import message_const as mc
from rocketq.common.clock import now_ms
from rocketq.common.message import Message, MessageExt
from rocketq.common.message_client_id import create_uniq_id


def _text(value: str | None) -> str:
    return value if value else "null"


def _keys(msg: Message) -> str:
    return _text(msg.get_property(mc.PROPERTY_KEYS))


def message_type_of(msg: Message) -> MessageType:
    if msg.get_property(mc.PROPERTY_TRANSACTION_PREPARED) == "true":
        return MessageType.Trans_Msg_Half
    if msg.get_property(mc.PROPERTY_DELAY_TIME_LEVEL):
        return MessageType.Delay_Msg
    return MessageType.Normal_Msg


def pub_context(
    group: str, msg: Message, store_host: str, started_ms: int, now_ms: int, result: SendResult
) -> TraceContext:
    """sendMessageBefore + sendMessageAfter: one Pub record of a send the broker answered."""
    bean = TraceBean(
        topic=msg.topic,
        msg_id=result.msg_id,
        offset_msg_id=_text(result.offset_msg_id),
        tags=_text(msg.tags),
        keys=_keys(msg),
        store_host=store_host,
        body_length=len(msg.body),
        msg_type=message_type_of(msg),
    )
    return TraceContext(
        trace_type=TraceType.Pub,
        timestamp_ms=started_ms,
        region_id=result.region_id or DEFAULT_REGION_ID,
        group_name=group,
        cost_time_ms=now_ms - started_ms,
        success=result.status is SendStatus.SEND_OK,
        trace_beans=[bean],
    )


def recall_context(group: str, topic: str, msg_id: str) -> TraceContext:
    """A Recall record: the producer took back the timer message ``msg_id``."""
    return TraceContext(
        trace_type=TraceType.Recall,
        timestamp_ms=now_ms(),
        group_name=group,
        trace_beans=[TraceBean(topic=topic, msg_id=msg_id)],
    )


def end_transaction_context(
    group: str,
    msg: Message | None,
    *,
    topic: str,
    msg_id: str,
    store_host: str,
    transaction_id: str,
    state: str,
    from_check: bool,
) -> TraceContext:
    """EndTransactionTraceHookImpl: the end of a half (``state`` is LocalTransactionState's
    name), with the message's tags and keys when the ending client has it."""
    bean = TraceBean(
        topic=topic,
        msg_id=msg_id,
        tags=_text(msg.tags) if msg is not None else "null",
        keys=_keys(msg) if msg is not None else "null",
        store_host=store_host,
        msg_type=MessageType.Trans_msg_Commit,
        transaction_id=_text(transaction_id),
        transaction_state=state,
        from_transaction_check=from_check,
    )
    region = msg.get_property(mc.PROPERTY_MSG_REGION) if msg is not None else None
    return TraceContext(
        trace_type=TraceType.EndTransaction,
        timestamp_ms=now_ms(),
        region_id=region or DEFAULT_REGION_ID,
        group_name=group,
        trace_beans=[bean],
    )


def sub_before_context(group: str, msgs: Sequence[MessageExt], now_ms: int) -> TraceContext:
    """consumeMessageBefore: one SubBefore context for the messages handed to a listener
    (those with TRACE_ON=false left out, as Java does)."""
    beans = [
        TraceBean(
            topic=m.topic,
            msg_id=_text(m.uniq_key or m.msg_id),
            tags=_text(m.tags),
            keys=_keys(m),
            store_time_ms=m.store_timestamp,
            body_length=len(m.body),
            retry_times=m.reconsume_times,
        )
        for m in msgs
        if m.get_property(mc.PROPERTY_TRACE_SWITCH) != "false"
    ]
    region = msgs[0].get_property(mc.PROPERTY_MSG_REGION) if msgs else None
    return TraceContext(
        trace_type=TraceType.SubBefore,
        timestamp_ms=now_ms,
        region_id=region or DEFAULT_REGION_ID,
        group_name=group,
        request_id=create_uniq_id(),
        trace_beans=beans,
    )


def sub_after_context(
    before: TraceContext, msg_count: int, success: bool, code: ConsumeReturnType, now_ms: int
) -> TraceContext:
    """consumeMessageAfter: the cost is the listener's time shared over its messages."""
    return TraceContext(
        trace_type=TraceType.SubAfter,
        timestamp_ms=now_ms,
        region_id=before.region_id,
        group_name=before.group_name,
        request_id=before.request_id,
        success=success,
        cost_time_ms=(now_ms - before.timestamp_ms) // max(msg_count, 1),
        context_code=int(code),
        trace_beans=before.trace_beans,
    )


class PopTraceHook:
    """A simple consumer's trace: SubBefore when it receives a message, SubAfter when it acks
    it (success) or hands it back with change_invisible_duration (failed). The SubBefore of a
    message not yet ended is kept, at most ``max_pending`` of them (the oldest go first)."""

    def __init__(self, group: str, dispatcher: AsyncTraceDispatcher, max_pending: int = 4096):
        self.group = group
        self.dispatcher = dispatcher
        self.max_pending = max_pending
        self._pending: OrderedDict[str, TraceContext] = OrderedDict()

    def received(self, msgs: Sequence[MessageExt]) -> None:
        for msg in msgs:
            before = sub_before_context(self.group, [msg], now_ms())
            if not before.trace_beans:
                continue
            self.dispatcher.append(before)
            self._pending[before.trace_beans[0].msg_id] = before
            if len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)

    def ended(self, msg: MessageExt, *, success: bool) -> None:
        before = self._pending.pop(_text(msg.uniq_key or msg.msg_id), None)
        if before is not None:
            code = ConsumeReturnType.SUCCESS if success else ConsumeReturnType.FAILED
            self.dispatcher.append(sub_after_context(before, 1, success, code, now_ms()))
