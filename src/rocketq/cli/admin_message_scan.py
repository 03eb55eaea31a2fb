"""``rocketq admin`` commands that read ranges of a topic or send to it: printMsg,
consumeMessage, sendMessage (mqadmin's names and short options)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, parse_timestamp
from rocketq.cli.admin_message import UTF8, check_charset, print_messages
from rocketq.common.message import MessageExt, MessageQueue

CHUNK = 32
Keep = Callable[[MessageExt], bool]


def tag_filter(sub_expression: str) -> Keep:
    """printMsg's -s: ``*`` or tags joined by ``||`` (a tag subscription's syntax)."""
    tags = {t.strip() for t in sub_expression.split("||") if t.strip()}
    if not tags or "*" in tags:
        return lambda msg: True
    return lambda msg: msg.tags in tags


async def _range(
    admin: AsyncAdminClient,
    queues: list[tuple[MessageQueue, int, int]],
    limit: int,
    progress: Any,
    keep: Keep,
) -> list[MessageExt]:
    found: list[MessageExt] = []
    for mq, start, stop in queues:
        offset = start
        while offset < stop and len(found) < limit:
            chunk = await admin.messages_of_queue(mq, offset, min(CHUNK, stop - offset))
            if not chunk:
                break
            found.extend([m for m in chunk if keep(m)][: limit - len(found)])
            progress(len(chunk))
            offset += len(chunk)
    return found


async def _queues_of(
    admin: AsyncAdminClient, topic: str, begin_ms: int | None, end_ms: int | None
) -> list[tuple[MessageQueue, int, int]]:
    stats = await admin.examine_topic_stats(topic)
    out = []
    for data, off in sorted(
        stats.offset_table.items(), key=lambda kv: (kv[0].broker_name, kv[0].queue_id)
    ):
        mq = MessageQueue(data.topic, data.broker_name, data.queue_id)
        start = off.min_offset if begin_ms is None else await admin.search_offset(mq, begin_ms)
        stop = off.max_offset if end_ms is None else await admin.search_offset(mq, end_ms)
        out.append((mq, max(start, off.min_offset), min(stop, off.max_offset)))
    return out


def _fetch_with_progress(
    ctx: AdminContext,
    plan: list[tuple[MessageQueue, int, int]],
    limit: int,
    keep: Keep = lambda msg: True,
) -> list[MessageExt]:
    total = min(limit, sum(max(0, stop - start) for _, start, stop in plan))
    bar: Any = click.progressbar(
        length=total, label="reading messages", file=sys.stderr, show_pos=True
    )
    with bar:
        return ctx.run(lambda admin: _range(admin, plan, limit, bar.update, keep))


def refuse_lmq(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        raise click.BadParameter("not supported by rocketq: it has no light message queues (LMQ)")


@click.command("printMsg")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--beginTimestamp", "begin", default=None, help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-m", "--maxNum", "max_num", type=int, default=1000, show_default=True)
@click.option(
    "-c",
    "--charsetName",
    "charset",
    default=UTF8,
    show_default=True,
    callback=check_charset,
    help="The charset to print bodies in.",
)
@click.option(
    "-s", "--subExpression", "sub_expression", default="*", show_default=True, help="TagA || TagB"
)
@click.option("-d", "--printBody", "print_body", type=bool, default=True, show_default=True)
@click.option(
    "-l",
    "--lmqParentTopic",
    default=None,
    expose_value=False,
    callback=refuse_lmq,
    help="Refused: rocketq has no light message queues (LMQ).",
)
@admin_command
def print_msg(
    ctx: AdminContext,
    topic: str,
    begin: str | None,
    end: str | None,
    max_num: int,
    charset: str,
    sub_expression: str,
    print_body: bool,
) -> None:
    """Print a topic's messages stored in a time range (every queue; progress on stderr).

    \b
    Example:
      rocketq admin printMsg -n 127.0.0.1:9876 -t TopicTest -b 2026-01-01#00:00:00:000
    """
    begin_ms = parse_timestamp(begin) if begin else None
    end_ms = parse_timestamp(end) if end else None
    plan = ctx.run(lambda admin: _queues_of(admin, topic, begin_ms, end_ms))
    found = _fetch_with_progress(ctx, plan, max_num, tag_filter(sub_expression))
    print_messages(ctx, found, charset=charset, print_body=print_body)


@click.command("consumeMessage")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--brokerName", "broker", default=None)
@click.option("-i", "--queueId", "queue_id", type=int, default=None)
@click.option("-o", "--offset", type=int, default=None, help="First queue offset (with -b, -i).")
@click.option(
    "-c", "--messageNumber", "--MessageNumber", "count", type=int, default=128, show_default=True
)
@click.option("-s", "--beginTimestamp", "begin", default=None, help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option(
    "-g",
    "--consumerGroup",
    "group",
    default=None,
    help="The group mqadmin reads as; nothing is committed either way.",
)
@admin_command
def consume_message(
    ctx: AdminContext,
    topic: str,
    broker: str | None,
    queue_id: int | None,
    offset: int | None,
    count: int,
    begin: str | None,
    end: str | None,
    group: str | None,
) -> None:
    """Read messages of a topic (or one queue from an offset) without committing anything.

    \b
    Example:
      rocketq admin consumeMessage -n 127.0.0.1:9876 -t TopicTest -b broker-a -i 0 -o 0 -c 10
    """
    del group  # reads go through the admin client; no offset is committed
    begin_ms = parse_timestamp(begin) if begin else None
    end_ms = parse_timestamp(end) if end else None
    plan = ctx.run(lambda admin: _queues_of(admin, topic, begin_ms, end_ms))
    if broker is not None or queue_id is not None:
        plan = [
            p
            for p in plan
            if (broker in (None, p[0].broker_name)) and (queue_id in (None, p[0].queue_id))
        ]
        if not plan:
            raise click.ClickException(f"{topic} has no queue {broker}:{queue_id}")
    if offset is not None:
        plan = [(mq, max(start, offset), stop) for mq, start, stop in plan]
    print_messages(ctx, _fetch_with_progress(ctx, plan, count))


@click.command("sendMessage")
@click.option("-t", "--topic", required=True)
@click.option("-p", "--body", required=True)
@click.option("-k", "--keys", "--key", "keys", default=None)
@click.option("-c", "--tags", default=None)
@click.option("-b", "--broker", default=None, help="Send to this broker (with -i).")
@click.option("-i", "--qid", "queue_id", type=int, default=None)
@click.option(
    "-m",
    "--msgTraceEnable",
    "trace",
    type=bool,
    default=False,
    help="true: the producer sends a trace record (queryMsgTraceById shows it).",
)
@admin_command
def send_message(
    ctx: AdminContext,
    topic: str,
    body: str,
    keys: str | None,
    tags: str | None,
    broker: str | None,
    queue_id: int | None,
    trace: bool,
) -> None:
    """Send one message (for a quick test of a topic).

    \b
    Example:
      rocketq admin sendMessage -n 127.0.0.1:9876 -t TopicTest -p "hello" -k order-42 -c TagA
    """
    from rocketq.client import Message

    async def call(admin: AsyncAdminClient) -> Any:
        del admin
        msg = Message(topic, body.encode(), tags=tags, keys=keys)
        async with ctx.producer("PID_ROCKETQ_ADMIN", enable_msg_trace=trace) as producer:
            if broker is not None:
                mq = MessageQueue(topic, broker, queue_id or 0)
                return await producer.send(msg, message_queue=mq)
            return await producer.send(msg)

    result = ctx.run(call)
    ctx.table(
        ["#Broker Name", "#QID", "#Send Result", "#MsgId"],
        [
            (
                result.message_queue.broker_name,
                result.message_queue.queue_id,
                result.status.name,
                result.msg_id,
            )
        ],
    )


COMMANDS = [print_msg, consume_message, send_message]
