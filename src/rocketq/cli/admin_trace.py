"""``rocketq admin queryMsgTraceById``: a message's trace, as mqadmin's
QueryMsgTraceByIdSubCommand prints it (a Pub block, then one Sub block per consumer group;
Java's columns first, then rocketq's: where the message was stored, and each consume's retry
count). The records are those producers and consumers with ``enable_msg_trace`` write."""

from __future__ import annotations

import datetime

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, parse_timestamp
from rocketq.client.trace.view import TraceView
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC

_ROW = "%-10s %-20s %-20s %-20s %-10s %-10s %s"


def _when(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def trace_lines(views: list[TraceView]) -> list[str]:
    """printMessageTrace: the Pub rows, then the SubAfter rows grouped by consumer group;
    a consume's retry count comes from its SubBefore (same request, same group)."""
    lines: list[str] = []
    retries = {v.request_id: v.retry_times for v in views if v.msg_type == "SubBefore"}
    by_group: dict[str, list[TraceView]] = {}
    for v in views:
        if v.msg_type == "Pub":
            head = ("#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes")
            lines.append(_ROW % (*head, "#Status", "#StoreHost"))
            row = ("Pub", v.group_name, v.client_host, _when(v.timestamp_ms))
            lines.append(_ROW % (*row, f"{v.cost_time_ms}ms", v.status, v.store_host))
            lines.append("")
        elif v.msg_type == "SubAfter":
            by_group.setdefault(v.group_name, []).append(v)
    for subs in by_group.values():
        head = ("#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes")
        lines.append(_ROW % (*head, "#Status", "#RetryTimes"))
        for v in subs:
            retry = retries.get(v.request_id, 0)
            row = ("Sub", v.group_name, v.client_host, _when(v.timestamp_ms))
            lines.append(_ROW % (*row, f"{v.cost_time_ms}ms", v.status, retry))
        lines.append("")
    return lines


@click.command("queryMsgTraceById")
@click.option("-i", "--msgId", "msg_id", required=True, help="The message's client msgId.")
@click.option("-t", "--traceTopic", "trace_topic", default=RMQ_SYS_TRACE_TOPIC, show_default=True)
@click.option("-b", "--beginTimestamp", "begin", default=None, help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-c", "--maxNum", "max_num", type=int, default=64, show_default=True)
@admin_command
def query_msg_trace_by_id(
    ctx: AdminContext,
    msg_id: str,
    trace_topic: str,
    begin: str | None,
    end: str | None,
    max_num: int,
) -> None:
    """Show a message's trace: who sent it, when, the cost, where it was stored, which
    consumer groups and clients consumed it, with status and retries.

    \b
    Example:
      rocketq admin queryMsgTraceById -n 127.0.0.1:9876 -i 7F0000010F2A18B4AAC2...
    """
    begin_ms = parse_timestamp(begin) if begin is not None else 0
    end_ms = parse_timestamp(end) if end is not None else 2**63 - 1

    async def call(admin: AsyncAdminClient) -> list[TraceView]:
        return await admin.query_msg_trace_by_id(
            msg_id.strip(), trace_topic.strip(), max_num, begin_ms, end_ms
        )

    views = ctx.run(call)
    if ctx.as_json:
        ctx.json([_view_json(v) for v in views])
        return
    for line in trace_lines(views):
        click.echo(line)


def _view_json(v: TraceView) -> dict[str, object]:
    return {
        "msgId": v.msg_id,
        "type": v.msg_type,
        "groupName": v.group_name,
        "clientHost": v.client_host,
        "timeStamp": v.timestamp_ms,
        "costTime": v.cost_time_ms,
        "status": v.status,
        "topic": v.topic,
        "storeHost": v.store_host,
        "offsetMsgId": v.offset_msg_id,
        "retryTimes": v.retry_times,
        "requestId": v.request_id,
    }


COMMANDS = [query_msg_trace_by_id]
