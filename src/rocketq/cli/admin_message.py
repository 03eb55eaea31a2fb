"""``rocketq admin`` message commands: queryMsgById, queryMsgByKey, queryMsgByUniqueKey,
queryMsgByOffset, printMsg, consumeMessage, sendMessage."""

from __future__ import annotations

import sys
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, format_ms, parse_timestamp
from rocketq.common.message import MessageExt, MessageQueue

CHUNK = 32


def message_pairs(msg: MessageExt) -> list[tuple[str, Any]]:
    """The fields mqadmin's queryMsgById prints, with the body as text."""
    return [
        ("OffsetID", msg.offset_msg_id),
        ("Topic", msg.topic),
        ("Tags", f"[{msg.tags or ''}]"),
        ("Keys", f"[{' '.join(msg.keys) if msg.keys else ''}]"),
        ("Queue ID", msg.queue_id),
        ("Queue Offset", msg.queue_offset),
        ("CommitLog Offset", msg.commitlog_offset),
        ("Reconsume Times", msg.reconsume_times),
        ("Born Timestamp", format_ms(msg.born_timestamp)),
        ("Store Timestamp", format_ms(msg.store_timestamp)),
        ("Born Host", f"{msg.born_host[0]}:{msg.born_host[1]}"),
        ("Store Host", f"{msg.store_host[0]}:{msg.store_host[1]}"),
        ("System Flag", msg.sys_flag),
        ("Properties", dict(sorted(msg.properties.items()))),
        ("Message Body", msg.body.decode("utf-8", "replace")),
    ]


def message_json(msg: MessageExt) -> dict[str, Any]:
    return {k.replace(" ", ""): v for k, v in message_pairs(msg)} | {"msgId": msg.client_msg_id}


def _print_messages(ctx: AdminContext, msgs: list[MessageExt]) -> None:
    if ctx.as_json:
        ctx.json([message_json(m) for m in msgs])
        return
    for msg in msgs:
        ctx.pairs([(f"{k}:", v) for k, v in message_pairs(msg)], separator=" ")
        click.echo("")


@click.command("queryMsgById")
@click.option(
    "-i", "--msgId", "msg_id", required=True, help="The offset msgId (or a uniq key with -t)."
)
@click.option("-t", "--topic", default=None)
@admin_command
def query_msg_by_id(ctx: AdminContext, msg_id: str, topic: str | None) -> None:
    """Show one message by its id, with its properties and body.

    \b
    Example:
      rocketq admin queryMsgById -n 127.0.0.1:9876 -i 7F00000100002A9F0000000000000000
    """
    _print_messages(ctx, [ctx.run(lambda admin: admin.view_message(msg_id, topic))])


@click.command("queryMsgByKey")
@click.option("-t", "--topic", required=True)
@click.option("-k", "--msgKey", "key", required=True)
@click.option("-b", "--beginTimestamp", "begin", default="0", help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-m", "--maxNum", "max_num", type=int, default=64, show_default=True)
@admin_command
def query_msg_by_key(
    ctx: AdminContext, topic: str, key: str, begin: str, end: str | None, max_num: int
) -> None:
    """Find the messages of a topic whose KEYS hold a key.

    \b
    Example:
      rocketq admin queryMsgByKey -n 127.0.0.1:9876 -t TopicTest -k order-42
    """
    begin_ms = parse_timestamp(begin)
    end_ms = parse_timestamp(end) if end else 2**63 - 1
    result = ctx.run(lambda admin: admin.query_message(topic, key, max_num, begin_ms, end_ms))
    ctx.table(
        ["#Message ID", "#QID", "#Offset"],
        [(m.client_msg_id, m.queue_id, m.queue_offset) for m in result.message_list],
    )


@click.command("queryMsgByUniqueKey")
@click.option("-t", "--topic", required=True)
@click.option("-i", "--msgId", "msg_id", required=True, help="The client msgId (UNIQ_KEY).")
@admin_command
def query_msg_by_unique_key(ctx: AdminContext, topic: str, msg_id: str) -> None:
    """Show a message by the id its producer printed (the uniq key).

    \b
    Example:
      rocketq admin queryMsgByUniqueKey -n 127.0.0.1:9876 -t TopicTest -i 7F000001...
    """

    async def call(admin: AsyncAdminClient) -> MessageExt:
        found = await admin.query_message_by_uniq_key(topic, msg_id)
        if found is None:
            raise click.ClickException(f"no message of {topic} has the uniq key {msg_id}")
        return found

    _print_messages(ctx, [ctx.run(call)])


@click.command("queryMsgByOffset")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--brokerName", "broker", required=True)
@click.option("-i", "--queueId", "queue_id", type=int, required=True)
@click.option("-o", "--offset", type=int, required=True)
@admin_command
def query_msg_by_offset(
    ctx: AdminContext, topic: str, broker: str, queue_id: int, offset: int
) -> None:
    """Show the message at an offset of one queue.

    \b
    Example:
      rocketq admin queryMsgByOffset -n 127.0.0.1:9876 -t TopicTest -b broker-a -i 0 -o 0
    """
    mq = MessageQueue(topic, broker, queue_id)
    _print_messages(ctx, [ctx.run(lambda admin: admin.query_msg_by_offset(mq, offset))])


async def _range(
    admin: AsyncAdminClient,
    queues: list[tuple[MessageQueue, int, int]],
    limit: int,
    progress: Any,
) -> list[MessageExt]:
    found: list[MessageExt] = []
    for mq, start, stop in queues:
        offset = start
        while offset < stop and len(found) < limit:
            chunk = await admin.messages_of_queue(mq, offset, min(CHUNK, stop - offset))
            if not chunk:
                break
            found.extend(chunk[: limit - len(found)])
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
    ctx: AdminContext, plan: list[tuple[MessageQueue, int, int]], limit: int
) -> list[MessageExt]:
    total = min(limit, sum(max(0, stop - start) for _, start, stop in plan))
    bar: Any = click.progressbar(
        length=total, label="reading messages", file=sys.stderr, show_pos=True
    )
    with bar:
        return ctx.run(lambda admin: _range(admin, plan, limit, bar.update))


@click.command("printMsg")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--beginTimestamp", "begin", default=None, help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-m", "--maxNum", "max_num", type=int, default=1000, show_default=True)
@admin_command
def print_msg(
    ctx: AdminContext, topic: str, begin: str | None, end: str | None, max_num: int
) -> None:
    """Print a topic's messages stored in a time range (every queue; progress on stderr).

    \b
    Example:
      rocketq admin printMsg -n 127.0.0.1:9876 -t TopicTest -b 2026-01-01#00:00:00:000
    """
    begin_ms = parse_timestamp(begin) if begin else None
    end_ms = parse_timestamp(end) if end else None
    plan = ctx.run(lambda admin: _queues_of(admin, topic, begin_ms, end_ms))
    _print_messages(ctx, _fetch_with_progress(ctx, plan, max_num))


@click.command("consumeMessage")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--brokerName", "broker", default=None)
@click.option("-i", "--queueId", "queue_id", type=int, default=None)
@click.option("-o", "--offset", type=int, default=None, help="First queue offset (with -b, -i).")
@click.option("-c", "--messageNumber", "count", type=int, default=128, show_default=True)
@admin_command
def consume_message(
    ctx: AdminContext,
    topic: str,
    broker: str | None,
    queue_id: int | None,
    offset: int | None,
    count: int,
) -> None:
    """Read messages of a topic (or one queue from an offset) without committing anything.

    \b
    Example:
      rocketq admin consumeMessage -n 127.0.0.1:9876 -t TopicTest -b broker-a -i 0 -o 0 -c 10
    """
    plan = ctx.run(lambda admin: _queues_of(admin, topic, None, None))
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
    _print_messages(ctx, _fetch_with_progress(ctx, plan, count))


@click.command("sendMessage")
@click.option("-t", "--topic", required=True)
@click.option("-p", "--body", required=True)
@click.option("-k", "--keys", default=None)
@click.option("-c", "--tags", default=None)
@click.option("-b", "--broker", default=None, help="Send to this broker (with -i).")
@click.option("-i", "--qid", "queue_id", type=int, default=None)
@admin_command
def send_message(
    ctx: AdminContext,
    topic: str,
    body: str,
    keys: str | None,
    tags: str | None,
    broker: str | None,
    queue_id: int | None,
) -> None:
    """Send one message (for a quick test of a topic).

    \b
    Example:
      rocketq admin sendMessage -n 127.0.0.1:9876 -t TopicTest -p "hello" -k order-42 -c TagA
    """
    from rocketq.client import Message
    from rocketq.client.aio import Producer

    async def call(admin: AsyncAdminClient) -> Any:
        del admin
        msg = Message(topic, body.encode(), tags=tags, keys=keys)
        async with Producer("PID_ROCKETQ_ADMIN", namesrv_addr=ctx.namesrv_addr) as producer:
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


COMMANDS = [
    query_msg_by_id,
    query_msg_by_key,
    query_msg_by_unique_key,
    query_msg_by_offset,
    print_msg,
    consume_message,
    send_message,
]
