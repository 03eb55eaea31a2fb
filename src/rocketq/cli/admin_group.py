"""``rocketq admin`` consumer-group commands: consumerConnection, producerConnection,
producer, consumerStatus, resetOffsetByTime (updateSubGroup and deleteSubGroup are in
``admin_subscription_group``, consumerProgress in ``admin_progress``)."""

from __future__ import annotations

from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, parse_timestamp
from rocketq.cli.admin_progress import enum_name
from rocketq.common.message import MessageQueue
from rocketq.errors import SystemError_, describe
from rocketq.remoting.protocol.admin_bodies import ConsumerConnection


@click.command("consumerConnection")
@click.option("-g", "--consumerGroup", "group", required=True)
@click.option("-b", "--brokerAddr", "broker", default=None, help="Ask this broker.")
@admin_command
def consumer_connection(ctx: AdminContext, group: str, broker: str | None) -> None:
    """The group's live consumers and what they subscribe to.

    \b
    Example:
      rocketq admin consumerConnection -n 127.0.0.1:9876 -g GroupA
    """
    conn: ConsumerConnection = ctx.run(
        lambda admin: admin.examine_consumer_connection_info(group, broker)
    )
    if ctx.as_json:
        ctx.json(conn.to_json())
        return
    ctx.table(
        ["#ClientId", "#ClientAddr", "#Language", "#Version"],
        [(c.client_id, c.client_addr, c.language, c.version) for c in conn.connection_set],
    )
    click.echo("\nBelow is subscription:")
    ctx.table(
        ["#Topic", "#SubExpression"],
        [(t, s.sub_string) for t, s in sorted(conn.subscription_table.items())],
    )
    click.echo("")
    click.echo(f"ConsumeType: {enum_name(conn.consume_type)}")
    click.echo(f"MessageModel: {enum_name(conn.message_model)}")
    click.echo(f"ConsumeFromWhere: {enum_name(conn.consume_from_where)}")


@click.command("producerConnection")
@click.option("-g", "--producerGroup", "group", required=True)
@click.option("-t", "--topic", required=True)
@admin_command
def producer_connection(ctx: AdminContext, group: str, topic: str) -> None:
    """The producers of a group connected to a topic's brokers.

    \b
    Example:
      rocketq admin producerConnection -n 127.0.0.1:9876 -g ProducerGroupA -t TopicTest
    """
    conn = ctx.run(lambda admin: admin.examine_producer_connection_info(group, topic))
    ctx.table(
        ["#ClientId", "#ClientAddr", "#Language", "#Version"],
        [(c.client_id, c.client_addr, c.language, c.version) for c in conn.connection_set],
    )


@click.command("producer")
@click.option("-b", "--broker", "broker", required=True, help="Broker address.")
@admin_command
def producer(ctx: AdminContext, broker: str) -> None:
    """Every producer group on a broker with its producers (GET_ALL_PRODUCER_INFO).

    \b
    Example:
      rocketq admin producer -n 127.0.0.1:9876 -b 127.0.0.1:10911
    """
    table = ctx.run(lambda admin: admin.get_all_producer_info(broker.strip()))
    for group, producers in table.data.items():
        if not producers:
            click.echo(f"producer group ({group}) instances are empty")
        for p in producers:  # ProducerSubCommand's lines, ProducerInfo#toString
            click.echo(
                f"producer group ({group}) instance : clientId={p.client_id},"
                f"remoteIP={p.remote_ip}, language={p.language}, version={p.version}, "
                f"lastUpdateTimestamp={p.last_update_timestamp}"
            )


@click.command("consumerStatus")
@click.option("-g", "--consumerGroup", "group", required=True)
@click.option("-i", "--clientId", "client_id", default=None, help="One client (default: all).")
@click.option("-b", "--brokerAddr", "broker", default=None, help="Ask through this broker.")
@click.option("-s", "--jstack", is_flag=True, help="Also print each client's thread stacks.")
@admin_command
def consumer_status(
    ctx: AdminContext, group: str, client_id: str | None, broker: str | None, jstack: bool
) -> None:
    """Each consumer's running info: settings, queues it holds, consume rates.

    \b
    Example:
      rocketq admin consumerStatus -n 127.0.0.1:9876 -g GroupA
    """

    async def call(admin: AsyncAdminClient) -> dict[str, Any]:
        ids = (
            [client_id]
            if client_id
            else [
                c.client_id
                for c in (
                    await admin.examine_consumer_connection_info(group, broker)
                ).connection_set
            ]
        )
        return {
            cid: await admin.get_consumer_running_info(
                group, cid, jstack=jstack, broker_addr=broker
            )
            for cid in ids
        }

    infos = ctx.run(call)
    if ctx.as_json:
        ctx.json({cid: info.to_json() for cid, info in infos.items()})
        return
    for cid, info in infos.items():
        click.echo(f"#Consumer: {cid}")
        ctx.pairs(sorted(info.properties.items()))
        rows = [
            (mq.topic, mq.broker_name, mq.queue_id, pq.commit_offset, pq.cached_msg_count)
            for mq, pq in sorted(
                info.mq_table.items(),
                key=lambda kv: (kv[0].topic, kv[0].broker_name, kv[0].queue_id),
            )
        ]
        click.echo("")
        ctx.table(["#Topic", "#Broker Name", "#QID", "#Commit Offset", "#Cached Msgs"], rows)
        click.echo("")
        if jstack and info.jstack:
            click.echo(info.jstack)


@click.command("resetOffsetByTime")
@click.option("-g", "--group", required=True)
@click.option("-t", "--topic", required=True)
@click.option(
    "-s", "--timestamp", required=True, help="Epoch ms, 'now', or yyyy-MM-dd#HH:mm:ss:SSS."
)
@click.option(
    "-f",
    "--force",
    type=bool,
    default=True,
    show_default=True,
    help="Also move offsets forward past unconsumed messages.",
)
@click.option(
    "--cplus",
    is_flag=True,
    help="Reset C++ consumers: they get their body form in any case (by their language).",
)
@click.option(
    "-c", "--cluster", default=None, help="Accepted as mqadmin 5.3; the topic's route decides."
)
@click.option("-b", "--broker", default=None, help="With -q: one queue of this broker (address).")
@click.option("-q", "--queue", "queue_id", type=int, default=None, help="With -b: this queue.")
@click.option("-o", "--offset", type=int, default=None, help="With -b -q: this offset, not -s.")
@admin_command
def reset_offset_by_time(
    ctx: AdminContext,
    group: str,
    topic: str,
    timestamp: str,
    force: bool,
    cplus: bool,
    cluster: str | None,
    broker: str | None,
    queue_id: int | None,
    offset: int | None,
) -> None:
    """Move a group's offsets on a topic to the first message stored at or after a time.

    \b
    Example:
      rocketq admin resetOffsetByTime -n 127.0.0.1:9876 -g GroupA -t TopicTest -s now
    """
    del cplus, cluster  # the broker answers each client in its language's form (broker2client)
    when = -1 if timestamp == "-1" else parse_timestamp(timestamp)
    if broker is not None and queue_id is not None and queue_id >= 0:
        _reset_one_queue(ctx, group, topic, (broker, queue_id), offset, when)
        return

    async def call(admin: AsyncAdminClient) -> dict[MessageQueue, int]:
        try:
            return await admin.reset_offset_by_timestamp(topic, group, when, is_force=force)
        except SystemError_ as exc:
            if "not exist" not in exc.remark:
                raise
            raise click.ClickException(await _uncommitted(admin, topic, group, exc)) from None

    offsets = ctx.run(call)
    ctx.table(
        ["#brokerName", "#queueId", "#offset"],
        [(mq.broker_name, mq.queue_id, off) for mq, off in offsets.items()],
    )


def _reset_one_queue(
    ctx: AdminContext,
    group: str,
    topic: str,
    queue: tuple[str, int],
    offset: int | None,
    when: int,
) -> None:
    """ResetOffsetByTimeCommand with -b and -q: one queue to -o, or to the offset of -s."""

    addr, queue_id = queue

    async def call(admin: AsyncAdminClient) -> tuple[MessageQueue, int]:
        route = await admin.examine_topic_route_info(topic)
        names = [b.broker_name for b in route.broker_datas if addr in b.broker_addrs.values()]
        if not names:
            raise click.ClickException(f"the broker {addr} is not in the route of {topic}")
        mq = MessageQueue(topic, names[0], queue_id)
        target = offset if offset is not None else await admin.search_offset(mq, when)
        await admin.update_consume_offset(addr, group, mq, target)
        return mq, target

    mq, target = ctx.run(call)
    ctx.table(["#brokerName", "#queueId", "#offset"], [(mq.broker_name, mq.queue_id, target)])


async def _uncommitted(
    admin: AsyncAdminClient, topic: str, group: str, refused: SystemError_
) -> str:
    """Why the broker refused: RocketMQ's Broker2Client#resetOffset answers "THe consumer
    group <g> not exist" when any queue of the topic has no committed offset of the group."""
    route = await admin.examine_topic_route_info(topic)
    masters = {b.broker_name: b.select_broker_addr() for b in route.broker_datas}
    missing: list[str] = []
    for queue in sorted(route.queue_datas, key=lambda q: q.broker_name):
        addr = masters.get(queue.broker_name)
        if addr is None:
            continue
        table = (await admin.get_all_consumer_offset(addr)).offset_table
        committed = table.get(f"{topic}@{group}", {})
        missing += [
            f"{queue.broker_name}:{qid}"
            for qid in range(queue.write_queue_nums)
            if committed.get(qid, -1) < 0
        ]
    if not missing:
        return describe(refused)
    return (
        f"SYSTEM_ERROR: no offset was reset: group {group} has no committed offset on "
        f"{topic} queue(s) {', '.join(missing)}, and the broker resets only when every queue "
        f"has one (it answered {refused.remark!r}); run a consumer of {group} until it "
        "commits on every queue, then reset again"
    )


COMMANDS = [
    consumer_connection,
    producer_connection,
    producer,
    consumer_status,
    reset_offset_by_time,
]
