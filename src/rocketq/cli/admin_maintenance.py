"""``rocketq admin`` maintenance commands: getNamesrvConfig, updateNamesrvConfig,
updateTopicPerm, updateOrderConf, skipAccumulatedMessage, cloneGroupOffset, getConsumerConfig,
queryCq, allocateMQ (mqadmin 5.3's names and options)."""

from __future__ import annotations

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_broker import _broker_addrs
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.message import MessageQueue
from rocketq.remoting.protocol.group_bodies import QueryConsumeQueueResponseBody
from rocketq.remoting.protocol.json_body import to_json


@click.command("getNamesrvConfig")
@admin_command
def get_namesrv_config(ctx: AdminContext) -> None:
    """Every name server's configuration.

    \b
    Example:
      rocketq admin getNamesrvConfig -n 127.0.0.1:9876
    """
    configs = ctx.run(lambda admin: admin.get_namesrv_config())
    if ctx.as_json:
        ctx.json(configs)
        return
    for addr, config in configs.items():
        click.echo(f"============{addr}============")
        ctx.pairs(sorted(config.items()), separator=" = ")


@click.command("updateNamesrvConfig")
@click.option("-k", "--key", required=True, help="The config key, e.g. orderMessageEnable.")
@click.option("-v", "--value", required=True)
@admin_command
def update_namesrv_config(ctx: AdminContext, key: str, value: str) -> None:
    """Change a config item of every name server (orderMessageEnable at run time).

    \b
    Example:
      rocketq admin updateNamesrvConfig -n 127.0.0.1:9876 -k orderMessageEnable -v true
    """
    addrs = ctx.run(lambda admin: admin.update_namesrv_config({key: value}))
    ctx.done(f"update name server config success!{addrs}\n{key} : {value}", {"namesrv": addrs})


@click.command("updateTopicPerm")
@click.option("-t", "--topic", required=True)
@click.option(
    "-p", "--perm", type=click.Choice(["2", "4", "6"]), required=True, help="2 R, 4 W, 6 RW."
)
@click.option("-b", "--brokerAddr", "broker", default=None, help="On this broker.")
@click.option("-c", "--clusterName", "cluster", default=None, help="On every master of it.")
@admin_command
def update_topic_perm(
    ctx: AdminContext, topic: str, perm: str, broker: str | None, cluster: str | None
) -> None:
    """Change a topic's read/write permission on the brokers that have it.

    \b
    Example:
      rocketq admin updateTopicPerm -n 127.0.0.1:9876 -c DefaultCluster -t TopicA -p 4
    """

    async def call(admin: AsyncAdminClient) -> list[str]:
        addrs = await _broker_addrs(admin, cluster, broker)
        return await admin.update_topic_perm(addrs, topic, int(perm))

    for addr in ctx.run(call):
        ctx.done(f"update topic perm to {perm} in {addr} success.", {"broker": addr})


@click.command("updateOrderConf")
@click.option("-t", "--topic", required=True)
@click.option("-v", "--orderConf", "order_conf", default=None, help="brokerName:queueNum;...")
@click.option("-m", "--method", type=click.Choice(["get", "put", "delete"]), default="get")
@admin_command
def update_order_conf(ctx: AdminContext, topic: str, order_conf: str | None, method: str) -> None:
    """Get, put or delete an ordered topic's conf in the name servers' KV config.

    \b
    Example:
      rocketq admin updateOrderConf -n 127.0.0.1:9876 -t TopicA -m put -v broker-a:4
    """
    held = ctx.run(lambda admin: admin.update_order_conf(topic, order_conf, method))
    ctx.done(f"{method} orderConf success. topic={topic}, orderConf={held}", {"orderConf": held})


@click.command("skipAccumulatedMessage")
@click.option("-g", "--group", required=True)
@click.option("-t", "--topic", required=True)
@click.option("-f", "--force", type=bool, default=True, show_default=True)
@click.option("-c", "--cluster", default=None, help="Accepted as mqadmin; the route decides.")
@admin_command
def skip_accumulated_message(
    ctx: AdminContext, group: str, topic: str, force: bool, cluster: str | None
) -> None:
    """Move a group's offsets on a topic to the end, skipping what has piled up.

    \b
    Example:
      rocketq admin skipAccumulatedMessage -n 127.0.0.1:9876 -g GroupA -t TopicA
    """
    del cluster
    offsets = ctx.run(
        lambda admin: admin.reset_offset_by_timestamp(topic, group, -1, is_force=force)
    )
    _offset_table(ctx, offsets)


@click.command("cloneGroupOffset")
@click.option("-s", "--srcGroup", "src_group", required=True)
@click.option("-d", "--destGroup", "dest_group", required=True)
@click.option("-t", "--topic", required=True)
@click.option("-o", "--offline", default=None, help="Accepted as mqadmin; offsets are written.")
@admin_command
def clone_group_offset(
    ctx: AdminContext, src_group: str, dest_group: str, topic: str, offline: str | None
) -> None:
    """Give a group the committed offsets another group has on a topic.

    \b
    Example:
      rocketq admin cloneGroupOffset -n 127.0.0.1:9876 -s GroupA -d GroupB -t TopicA
    """
    del offline
    offsets = ctx.run(lambda admin: admin.clone_group_offset(src_group, dest_group, topic))
    _offset_table(ctx, offsets)
    if not ctx.as_json:
        click.echo(f"clone group offset success. srcGroup[{src_group}], destGroup[{dest_group}]")


def _offset_table(ctx: AdminContext, offsets: dict[MessageQueue, int]) -> None:
    ctx.table(
        ["#brokerName", "#queueId", "#offset"],
        [(mq.broker_name, mq.queue_id, off) for mq, off in offsets.items()],
    )


@click.command("getConsumerConfig")
@click.option("-g", "--groupName", "group", required=True)
@admin_command
def get_consumer_config(ctx: AdminContext, group: str) -> None:
    """A group's subscription group config on every master broker that has it.

    \b
    Example:
      rocketq admin getConsumerConfig -n 127.0.0.1:9876 -g GroupA
    """

    async def call(admin: AsyncAdminClient) -> dict[str, dict[str, object]]:
        info = await admin.examine_broker_cluster_info()
        masters = {}
        for cluster in sorted(info.cluster_addr_table):
            masters.update(await admin.master_addrs_of_cluster(cluster))
        return {n: to_json(c) for n, c in (await admin.get_consumer_config(group, masters)).items()}

    found = ctx.run(call)
    if ctx.as_json:
        ctx.json(found)
        return
    if not found:
        raise click.ClickException(f"no broker has a subscription group named {group}")
    for name, config in found.items():
        click.echo(f"============{name}============")
        ctx.pairs([(k, str(v)) for k, v in sorted(config.items())])


@click.command("queryCq")
@click.option("-t", "--topic", required=True)
@click.option("-q", "--queue", "queue_id", type=int, required=True)
@click.option("-i", "--index", type=int, required=True, help="The first queue offset.")
@click.option("-c", "--count", type=int, default=10, show_default=True)
@click.option("-b", "--broker", default=None, help="Broker name (default: the first of the route).")
@click.option("-g", "--consumer", default=None, help="Consumer group, to show its filter.")
@admin_command
def query_cq(
    ctx: AdminContext,
    topic: str,
    queue_id: int,
    index: int,
    count: int,
    broker: str | None,
    consumer: str | None,
) -> None:
    """Units of a consume queue: commitlog offset, size and tag hash of each.

    \b
    Example:
      rocketq admin queryCq -n 127.0.0.1:9876 -t TopicA -q 0 -i 0 -c 10
    """

    async def call(admin: AsyncAdminClient) -> QueryConsumeQueueResponseBody:
        masters = await admin.master_addrs_of_topic(topic)
        addr = masters[broker] if broker in masters else next(iter(masters.values()))
        return await admin.query_consume_queue(addr, topic, queue_id, index, count, consumer)

    body = ctx.run(call)
    if ctx.as_json:
        ctx.json(to_json(body))
        return
    for unit in body.queue_data:
        click.echo(
            f"phyOffset={unit.physic_offset} phySize={unit.physic_size} "
            f"tagsCode={unit.tags_code} extendData={unit.extend_data_json} "
            f"bitMap={unit.bit_map}, eval={unit.eval}, msg={unit.msg}"
        )


@click.command("allocateMQ")
@click.option("-t", "--topic", required=True)
@click.option("-i", "--ipList", "ip_list", required=True, help="Client IPs, ipA,ipB,...")
@admin_command
def allocate_mq(ctx: AdminContext, topic: str, ip_list: str) -> None:
    """Which queues of a topic each client would take (AllocateMessageQueueAveragely).

    \b
    Example:
      rocketq admin allocateMQ -n 127.0.0.1:9876 -t TopicA -i 10.0.0.1,10.0.0.2
    """
    ips = [ip.strip() for ip in ip_list.split(",") if ip.strip()]
    plan = ctx.run(lambda admin: admin.allocate_mq(topic, ips))
    if ctx.as_json:
        ctx.json({ip: [_mq_json(mq) for mq in queues] for ip, queues in plan.items()})
        return
    for ip, queues in plan.items():
        click.echo(f"{ip}: {', '.join(str(mq) for mq in queues) or '(none)'}")


def _mq_json(mq: MessageQueue) -> dict[str, object]:
    return {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}


COMMANDS = [
    get_namesrv_config,
    update_namesrv_config,
    update_topic_perm,
    update_order_conf,
    skip_accumulated_message,
    clone_group_offset,
    get_consumer_config,
    query_cq,
    allocate_mq,
]
