"""TraceDataEncoder: trace records as text, fields split by ``\\x01`` and each record ended by
``\\x02`` (TraceConstants). Pure functions; the layouts, field by field, are those of
client/trace/TraceDataEncoder.java (encoderFromContextBean, decoderFromTraceDataString)::

    Pub            type ts region group topic msgId tags keys storeHost bodyLen cost msgType
                   offsetMsgId success [clientHost]
    SubBefore      type ts region group requestId msgId retryTimes keys
    SubAfter       type requestId msgId cost success keys [contextCode [ts group]]
    EndTransaction type ts region group topic msgId tags keys storeHost msgType transactionId
                   transactionState fromTransactionCheck
    Recall         type ts region group topic msgId success

Booleans are Java's ``true``/``false``; SubBefore and SubAfter write one record per bean.
"""

from __future__ import annotations

from rocketq.client.trace.context import (
    CONTENT_SPLITOR,
    FIELD_SPLITOR,
    MessageType,
    TraceBean,
    TraceContext,
    TraceType,
)


def _java_bool(value: bool) -> str:
    return "true" if value else "false"


def _record(*fields: object) -> str:
    return CONTENT_SPLITOR.join(_java_bool(f) if isinstance(f, bool) else str(f) for f in fields)


def encode_trace_context(ctx: TraceContext) -> str:
    """encoderFromContextBean's transData: the record(s) of ``ctx``, each ending in \\x02."""
    t = ctx.trace_type
    head = (t.value, ctx.timestamp_ms, ctx.region_id, ctx.group_name)
    if t in (TraceType.SubBefore, TraceType.SubAfter):
        return "".join(_encode_sub(ctx, bean) + FIELD_SPLITOR for bean in ctx.trace_beans)
    b = ctx.trace_beans[0]
    if t is TraceType.Pub:
        body = (b.topic, b.msg_id, b.tags, b.keys, b.store_host, b.body_length, ctx.cost_time_ms)
        line = _record(*head, *body, int(b.msg_type), b.offset_msg_id, ctx.success)
    elif t is TraceType.EndTransaction:
        line = _record(
            *head, b.topic, b.msg_id, b.tags, b.keys, b.store_host, int(b.msg_type),
            b.transaction_id, b.transaction_state, b.from_transaction_check,
        )  # fmt: skip
    else:
        line = _record(*head, b.topic, b.msg_id, ctx.success)
    return line + FIELD_SPLITOR


def _encode_sub(ctx: TraceContext, b: TraceBean) -> str:
    if ctx.trace_type is TraceType.SubBefore:
        return _record(
            ctx.trace_type.value, ctx.timestamp_ms, ctx.region_id, ctx.group_name,
            ctx.request_id, b.msg_id, b.retry_times, b.keys,
        )  # fmt: skip
    # SubAfter ends in a splitter before its last two fields' absence is possible (CLOUD)
    return _record(
        ctx.trace_type.value, ctx.request_id, b.msg_id, ctx.cost_time_ms, ctx.success, b.keys,
        ctx.context_code, ctx.timestamp_ms, ctx.group_name,
    )  # fmt: skip


def decode_trace_data(data: str) -> list[TraceContext]:
    """decoderFromTraceDataString: every record of a trace message's body; unknown types are
    skipped as Java skips them, a malformed record raises ValueError naming it."""
    found: list[TraceContext] = []
    for record in data.split(FIELD_SPLITOR):
        line = record.split(CONTENT_SPLITOR)
        if not record:
            continue
        try:
            ctx = _decode_line(line)
        except (IndexError, ValueError) as exc:
            raise ValueError(f"malformed trace record {record!r}: {exc}") from None
        if ctx is not None:
            found.append(ctx)
    return found


def _jbool(text: str) -> bool:
    return text.lower() == "true"  # Boolean.parseBoolean


def _decode_line(line: list[str]) -> TraceContext | None:
    kind = line[0]
    if kind == TraceType.SubAfter.value:
        return _decode_sub_after(line)
    if kind not in TraceType._value2member_map_:
        return None
    ctx = TraceContext(
        trace_type=TraceType(kind), timestamp_ms=int(line[1]), region_id=line[2], group_name=line[3]
    )
    if ctx.trace_type is TraceType.SubBefore:
        ctx.request_id = line[4]
        keys = line[7] if len(line) > 7 else ""
        ctx.trace_beans = [TraceBean(msg_id=line[5], retry_times=int(line[6]), keys=keys)]
        return ctx
    bean = TraceBean(topic=line[4], msg_id=line[5])
    ctx.trace_beans = [bean]
    if ctx.trace_type is TraceType.Recall:
        ctx.success = _jbool(line[6])
    elif ctx.trace_type is TraceType.Pub:
        _decode_pub(ctx, bean, line)
    else:
        bean.tags, bean.keys, bean.store_host = line[6], line[7], line[8]
        bean.msg_type = MessageType(int(line[9]))
        bean.transaction_id, bean.transaction_state = line[10], line[11]
        bean.from_transaction_check = _jbool(line[12])
    return ctx


def _decode_pub(ctx: TraceContext, bean: TraceBean, line: list[str]) -> None:
    bean.tags, bean.keys, bean.store_host = line[6], line[7], line[8]
    bean.body_length = int(line[9])
    ctx.cost_time_ms = int(line[10])
    bean.msg_type = MessageType(int(line[11]))
    if len(line) == 13:
        ctx.success = _jbool(line[12])
    elif len(line) >= 14:
        bean.offset_msg_id = line[12]
        ctx.success = _jbool(line[13])
    if len(line) >= 15:
        bean.client_host = line[14]


def _decode_sub_after(line: list[str]) -> TraceContext:
    ctx = TraceContext(trace_type=TraceType.SubAfter, request_id=line[1])
    ctx.trace_beans = [TraceBean(msg_id=line[2], keys=line[5])]
    ctx.cost_time_ms = int(line[3])
    ctx.success = _jbool(line[4])
    if len(line) >= 7 and line[6]:
        ctx.context_code = int(line[6])
    if len(line) >= 9:
        ctx.timestamp_ms = int(line[7])
        ctx.group_name = line[8]
    return ctx
