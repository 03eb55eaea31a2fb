"""The message page's trace panel (rocketmq-dashboard's message trace view): who sent the
message, when, the cost and where it was stored; which consumer groups and clients consumed
it, with status and retries; a transaction's end and a recall. The rows come from
``rocketq.admin``'s query_msg_trace_by_id (the records traced clients write)."""

from __future__ import annotations

import datetime
from typing import Any

from rocketq.admin import AsyncAdminClient
from rocketq.client.trace.view import TraceView
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC
from rocketq.errors import RocketQError


def _when(ms: int) -> str:
    if ms <= 0:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def trace_rows(views: list[TraceView]) -> list[dict[str, Any]]:
    """One row per record; a SubBefore whose SubAfter came is folded into it (its retry
    count), one without is shown as a consume still running (or whose client died)."""
    befores = {v.request_id: v for v in views if v.msg_type == "SubBefore"}
    ended = {v.request_id for v in views if v.msg_type == "SubAfter"}
    rows: list[dict[str, Any]] = []
    for v in views:
        if v.msg_type == "SubBefore" and v.request_id in ended:
            continue
        before = befores.get(v.request_id) if v.msg_type.startswith("Sub") else None
        consuming = v.msg_type == "SubBefore"
        rows.append(
            {
                "type": "Sub" if v.msg_type == "SubAfter" else v.msg_type,
                "group": v.group_name,
                "client": v.client_host,
                "time": _when(v.timestamp_ms),
                "cost": "" if consuming else f"{v.cost_time_ms} ms",
                "status": "consuming" if consuming else v.status,
                "store_host": v.store_host if v.store_host != "null" else "",
                "retries": before.retry_times if before is not None else "",
            }
        )
    return rows


async def message_trace(
    admin: AsyncAdminClient, msg_id: str, trace_topic: str = RMQ_SYS_TRACE_TOPIC
) -> tuple[list[dict[str, Any]], str]:
    """The rows of ``msg_id``'s trace, and a notice when there are none (and why)."""
    try:
        views = await admin.query_msg_trace_by_id(msg_id, trace_topic)
    except RocketQError as exc:
        return [], f"No trace: {trace_topic} cannot be read ({exc})."
    if not views:
        return [], (
            f"No trace found in {trace_topic}: its clients send traces with enable_msg_trace "
            "(RocketMQ's enableMsgTrace)."
        )
    return trace_rows(views), ""
