"""TraceView (client/trace/TraceView.java): one row of a message's trace as
queryMsgTraceById prints it, decoded from a trace message of the trace topic."""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.client.trace.encoder import decode_trace_data


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceView:
    msg_id: str
    msg_type: str  # the TraceType's name: Pub, SubBefore, SubAfter, ...
    group_name: str
    client_host: str  # the born host of the trace message: the traced client's address
    timestamp_ms: int
    cost_time_ms: int
    status: str  # "success" or "failed"
    topic: str
    tags: str
    keys: str
    store_host: str
    offset_msg_id: str
    retry_times: int
    request_id: str  # ties a SubAfter to its SubBefore (one consume of one message)


def decode_trace_views(msg_id: str, body: bytes, born_host: str) -> list[TraceView]:
    """TraceView.decodeFromTraceTransData: the records of ``body`` about ``msg_id``."""
    views: list[TraceView] = []
    for ctx in decode_trace_data(body.decode("utf-8", errors="replace")):
        bean = ctx.trace_beans[0]
        if bean.msg_id != msg_id:
            continue
        views.append(
            TraceView(
                msg_id=bean.msg_id,
                msg_type=ctx.trace_type.value,
                group_name=ctx.group_name,
                client_host=born_host,
                timestamp_ms=ctx.timestamp_ms,
                cost_time_ms=ctx.cost_time_ms,
                status="success" if ctx.success else "failed",
                topic=bean.topic,
                tags=bean.tags,
                keys=bean.keys,
                store_host=bean.store_host,
                offset_msg_id=bean.offset_msg_id,
                retry_times=bean.retry_times,
                request_id=ctx.request_id,
            )
        )
    return views
