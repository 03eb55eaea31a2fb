"""``rocketq admin printMsgByQueue``: one queue's messages in a time range, printed and/or
counted by tag, as mqadmin's PrintMessageByQueueCommand does (its ``-p``, ``-d`` and ``-f`` take
``true``; without one of them it reads and prints nothing)."""

from __future__ import annotations

from collections import Counter

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, parse_timestamp
from rocketq.cli.admin_message import UTF8, check_charset, print_messages
from rocketq.cli.admin_message_scan import _fetch_with_progress, tag_filter
from rocketq.common.message import MessageQueue

#: the most messages read from the queue in one run
MAX_READ = 100_000


@click.command("printMsgByQueue")
@click.option("-t", "--topic", required=True)
@click.option("-a", "--brokerName", "broker", required=True)
@click.option("-i", "--queueId", "queue_id", type=int, required=True)
@click.option(
    "-c", "--charsetName", "charset", default=UTF8, show_default=True, callback=check_charset
)
@click.option("-s", "--subExpression", "sub_expression", default="*", show_default=True)
@click.option("-b", "--beginTimestamp", "begin", default=None, help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-p", "print_msg", type=bool, default=False, help="true: print each message.")
@click.option("-d", "--printBody", "print_body", type=bool, default=False, help="With -p.")
@click.option("-f", "--calculate", type=bool, default=False, help="true: count by tag.")
@admin_command
def print_msg_by_queue(
    ctx: AdminContext,
    topic: str,
    broker: str,
    queue_id: int,
    charset: str,
    sub_expression: str,
    begin: str | None,
    end: str | None,
    print_msg: bool,
    print_body: bool,
    calculate: bool,
) -> None:
    """Print or count by tag the messages of one queue stored in a time range.

    \b
    Example:
      rocketq admin printMsgByQueue -n 127.0.0.1:9876 -t TopicA -a broker-a -i 0 -f true
    """
    mq = MessageQueue(topic, broker, queue_id)

    async def plan(admin: AsyncAdminClient) -> list[tuple[MessageQueue, int, int]]:
        start = await admin.min_offset(mq)
        stop = await admin.max_offset(mq)
        if begin is not None:
            start = max(start, await admin.search_offset(mq, parse_timestamp(begin)))
        if end is not None:
            stop = min(stop, await admin.search_offset(mq, parse_timestamp(end)))
        return [(mq, start, stop)]

    found = _fetch_with_progress(ctx, ctx.run(plan), MAX_READ, tag_filter(sub_expression))
    if print_msg:
        print_messages(ctx, found, charset=charset, print_body=print_body)
    if calculate:
        counts = Counter(m.tags or "" for m in found).most_common()
        if ctx.as_json:
            ctx.json(dict(counts))
        else:
            for tag, count in counts:
                click.echo(f"Tag: {tag:<30} Count: {count}")


COMMANDS = [print_msg_by_queue]
