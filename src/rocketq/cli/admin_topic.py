"""``rocketq admin`` topic commands: updateTopic, deleteTopic, topicList, topicRoute, topicStatus,
topicClusterList (mqadmin's names and short options).

updateTopic's ``-a`` is mqadmin 5.x's attribute change (``+message.type=FIFO,-reserve.time``);
topicStatus and ``topicList -c`` show each broker's ``message.type`` of the topic (RocketMQ's
tools do not; the gRPC endpoint derives a queue's accepted message types from it)."""

from __future__ import annotations

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, format_ms
from rocketq.cli.table import Cell, format_table
from rocketq.common.attribute import AttributeRefusedError, parse_to_map
from rocketq.common.topic_config import PERM_READ, PERM_WRITE, TopicConfig
from rocketq.remoting.protocol.admin_bodies import TopicStatsTable

PERM_READ_WRITE = PERM_READ | PERM_WRITE
STATUS_HEADERS = [
    "#Broker Name",
    "#QID",
    "#Min Offset",
    "#Max Offset",
    "#Last Updated",
    "#Message Type",
]
# TopicSysFlag's bits, set by updateTopic's -u and -s
FLAG_UNIT = 0x1
FLAG_UNIT_SUB = 0x2


@click.command("updateTopic")
@click.option("-t", "--topic", required=True, help="Topic name.")
@click.option("-c", "--clusterName", "cluster", default=None, help="Create on every master of it.")
@click.option("-b", "--brokerAddr", "broker_addr", default=None, help="Create on this broker.")
@click.option("-r", "--readQueueNums", "read_queues", type=int, default=8, show_default=True)
@click.option("-w", "--writeQueueNums", "write_queues", type=int, default=8, show_default=True)
@click.option(
    "-p",
    "--perm",
    type=int,
    default=PERM_READ_WRITE,
    show_default=True,
    help="2 read, 4 write, 6 both.",
)
@click.option("-o", "--order", type=bool, default=False, show_default=True, help="Ordered topic.")
@click.option(
    "-a",
    "--attributes",
    default=None,
    help="Attribute changes: +message.type=FIFO,+reserve.time=72,-reserve.time.",
)
@click.option("-u", "--unit", type=bool, default=False, help="A unit topic (topicSysFlag).")
@click.option(
    "-s", "--hasUnitSub", "unit_sub", type=bool, default=False, help="Has unit subscriptions."
)
@admin_command
def update_topic(
    ctx: AdminContext,
    topic: str,
    cluster: str | None,
    broker_addr: str | None,
    read_queues: int,
    write_queues: int,
    perm: int,
    order: bool,
    attributes: str | None,
    unit: bool,
    unit_sub: bool,
) -> None:
    """Create a topic or change its queues, permission and attributes (message.type NORMAL,
    FIFO, DELAY, TRANSACTION or MIXED; reserve.time in hours; queue.type SimpleCQ and
    cleanup.policy DELETE, set at creation only).

    \b
    Example:
      rocketq admin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t TopicTest -r 4 -w 4
      rocketq admin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t Orders -a +message.type=FIFO
    """
    if (cluster is None) == (broker_addr is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")
    try:
        modification = parse_to_map(attributes.strip() if attributes else None)
    except AttributeRefusedError as exc:
        raise click.BadParameter(str(exc), param_hint="-a/--attributes") from None
    config = TopicConfig(
        topic_name=topic,
        read_queue_nums=read_queues,
        write_queue_nums=write_queues,
        perm=perm,
        order=order,
        topic_sys_flag=(FLAG_UNIT if unit else 0) | (FLAG_UNIT_SUB if unit_sub else 0),
        attributes=modification or None,
    )

    async def call(admin: AsyncAdminClient) -> list[str]:
        if broker_addr is not None:
            await admin.create_and_update_topic_config(broker_addr, config)
            return [broker_addr]
        assert cluster is not None
        return await admin.create_and_update_topic_config_in_cluster(cluster, config)

    for addr in ctx.run(call):
        ctx.done(f"create topic to {addr} success.", {"broker": addr, "topic": topic})


@click.command("deleteTopic")
@click.option("-t", "--topic", required=True)
@click.option("-c", "--clusterName", "cluster", required=True)
@admin_command
def delete_topic(ctx: AdminContext, topic: str, cluster: str) -> None:
    """Delete a topic from every master of a cluster and from the name servers.

    \b
    Example:
      rocketq admin deleteTopic -n 127.0.0.1:9876 -c DefaultCluster -t TopicTest
    """
    ctx.run(lambda admin: admin.delete_topic(topic, cluster))
    ctx.done(f"delete topic [{topic}] from cluster [{cluster}] success.")


@click.command("topicList")
@click.option(
    "-c",
    "--clusterModel",
    "with_cluster",
    is_flag=True,
    help="Also print each topic's cluster and consumer groups.",
)
@admin_command
def topic_list(ctx: AdminContext, with_cluster: bool) -> None:
    """List the topics the name servers know.

    \b
    Example:
      rocketq admin topicList -n 127.0.0.1:9876
    """
    if not with_cluster:
        topics = sorted(ctx.run(lambda admin: admin.fetch_all_topic_list()))
        if ctx.as_json:
            ctx.json(topics)
        else:
            for name in topics:
                click.echo(name)
        return

    async def call(admin: AsyncAdminClient) -> list[tuple[str, str, str, str]]:
        rows: list[tuple[str, str, str, str]] = []
        info = await admin.examine_broker_cluster_info()
        for cluster in sorted(info.cluster_addr_table):
            types = await _cluster_message_types(admin, cluster)
            for topic in sorted(await admin.fetch_topics_by_cluster(cluster)):
                try:
                    groups = (await admin.query_topic_consume_by_who(topic)).group_list
                except Exception:  # noqa: BLE001 -- a topic without a route answers nothing here
                    groups = []
                kind = types.get(topic, "")
                rows.extend((cluster, topic, group, kind) for group in groups or [""])
        return rows

    headers = ["#Cluster Name", "#Topic", "#Consumer Group", "#Message Type"]
    ctx.table(headers, ctx.run(call))


async def _cluster_message_types(admin: AsyncAdminClient, cluster: str) -> dict[str, str]:
    """Each topic's message.type on the cluster's masters (several types joined by "/")."""
    types: dict[str, set[str]] = {}
    for addr in (await admin.master_addrs_of_cluster(cluster)).values():
        table = (await admin.get_all_topic_config(addr)).topic_config_table
        for name, tc in table.items():
            types.setdefault(name, set()).add(tc.topic_message_type.value)
    return {name: "/".join(sorted(kinds)) for name, kinds in types.items()}


@click.command("topicRoute")
@click.option("-t", "--topic", required=True)
@click.option("-l", "--list", "as_list", is_flag=True, help="A table instead of JSON.")
@admin_command
def topic_route(ctx: AdminContext, topic: str, as_list: bool) -> None:
    """Print a topic's route (its brokers and queues) as JSON, or with -l as a table.

    \b
    Example:
      rocketq admin topicRoute -n 127.0.0.1:9876 -t TopicTest -l
    """
    route = ctx.run(lambda admin: admin.examine_topic_route_info(topic))
    if not as_list or ctx.as_json:
        ctx.json(route.to_json())
        return
    queues = {q.broker_name: q for q in route.queue_datas}
    rows: list[tuple[Cell, ...]] = []
    for broker in sorted(route.broker_datas, key=lambda b: b.broker_name):
        q = queues.get(broker.broker_name)
        if q is None:
            continue
        addrs = "{" + ", ".join(f"{k}={v}" for k, v in sorted(broker.broker_addrs.items())) + "}"
        rows.append(
            (
                broker.cluster,
                broker.broker_name,
                addrs,
                q.read_queue_nums,
                q.write_queue_nums,
                q.perm,
            )
        )
    headers = ["#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm"]
    total = (
        "Total:",
        len(rows),
        "",
        sum(int(r[3] or 0) for r in rows),
        sum(int(r[4] or 0) for r in rows),
        "",
    )
    click.echo(format_table(headers, [*rows, total]))


@click.command("topicStatus")
@click.option("-t", "--topic", required=True)
@click.option("-c", "--cluster", default=None, help="Only the queues on this cluster's brokers.")
@admin_command
def topic_status(ctx: AdminContext, topic: str, cluster: str | None) -> None:
    """Each queue's min and max offset and last update time.

    \b
    Example:
      rocketq admin topicStatus -n 127.0.0.1:9876 -t TopicTest
    """

    async def call(admin: AsyncAdminClient) -> tuple[TopicStatsTable, dict[str, str]]:
        stats = await admin.examine_topic_stats(topic)
        types = {
            name: kind.value if kind is not None else ""
            for name, kind in (await admin.examine_topic_message_types(topic)).items()
        }
        if cluster is not None:
            info = await admin.examine_broker_cluster_info()
            if cluster not in info.cluster_addr_table:
                raise click.ClickException(f"no cluster named {cluster}")
            names = info.cluster_addr_table[cluster]
            stats.offset_table = {
                mq: off for mq, off in stats.offset_table.items() if mq.broker_name in names
            }
        return stats, types

    stats, types = ctx.run(call)
    rows = [
        (
            mq.broker_name,
            mq.queue_id,
            off.min_offset,
            off.max_offset,
            format_ms(off.last_update_timestamp),
            types.get(mq.broker_name, ""),
        )
        for mq, off in sorted(
            stats.offset_table.items(), key=lambda kv: (kv[0].broker_name, kv[0].queue_id)
        )
    ]
    ctx.table(STATUS_HEADERS, rows)


@click.command("topicClusterList")
@click.option("-t", "--topic", required=True)
@admin_command
def topic_cluster_list(ctx: AdminContext, topic: str) -> None:
    """The clusters a topic's brokers belong to.

    \b
    Example:
      rocketq admin topicClusterList -n 127.0.0.1:9876 -t TopicTest
    """

    async def call(admin: AsyncAdminClient) -> list[str]:
        route = await admin.examine_topic_route_info(topic)
        return sorted({b.cluster for b in route.broker_datas})

    clusters = ctx.run(call)
    if ctx.as_json:
        ctx.json(clusters)
    else:
        for name in clusters:
            click.echo(name)


COMMANDS = [update_topic, delete_topic, topic_list, topic_route, topic_status, topic_cluster_list]
