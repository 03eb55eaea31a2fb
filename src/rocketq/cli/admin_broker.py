"""``rocketq admin`` cluster and broker commands: clusterList, brokerStatus, getBrokerConfig,
updateBrokerConfig, wipeWritePerm, addWritePerm, updateKvConfig, deleteKvConfig, statsAll."""

from __future__ import annotations

from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.clock import now_ms
from rocketq.common.topic import is_dlq_topic, is_retry_topic
from rocketq.errors import RocketQError


async def _broker_addrs(
    admin: AsyncAdminClient, cluster: str | None, broker: str | None
) -> list[str]:
    if (cluster is None) == (broker is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")
    if broker is not None:
        return [broker]
    assert cluster is not None
    return list((await admin.master_addrs_of_cluster(cluster)).values())


def _first(text: str | None) -> float | None:
    try:
        return float((text or "").split()[0])
    except (IndexError, ValueError):
        return None


@click.command("clusterList")
@admin_command
def cluster_list(ctx: AdminContext) -> None:
    """Every cluster's brokers with their version, TPS in and out and disk use.

    \b
    Example:
      rocketq admin clusterList -n 127.0.0.1:9876
    """

    async def call(admin: AsyncAdminClient) -> list[tuple[Any, ...]]:
        info = await admin.examine_broker_cluster_info()
        rows: list[tuple[Any, ...]] = []
        for cluster in sorted(info.cluster_addr_table):
            for name in sorted(info.cluster_addr_table[cluster]):
                data = info.broker_addr_table.get(name)
                for bid, addr in sorted((data.broker_addrs if data else {}).items()):
                    try:
                        kv = await admin.fetch_broker_runtime_stats(addr)
                    except RocketQError:
                        kv = {}
                    ratio = kv.get("commitLogDiskRatio")
                    space = f"{float(ratio):.4f}" if ratio else None
                    earliest = int(kv.get("earliestMessageTimeStamp") or 0)
                    hours = (now_ms() - earliest) / 3_600_000 if earliest else None
                    rows.append(
                        (
                            cluster,
                            name,
                            bid,
                            addr,
                            kv.get("brokerVersionDesc"),
                            _first(kv.get("putTps")),
                            _first(kv.get("getTransferedTps")),
                            kv.get("pageCacheLockTimeMills"),
                            hours,
                            space,
                        )
                    )
        return rows

    ctx.table(
        [
            "#Cluster Name",
            "#Broker Name",
            "#BID",
            "#Addr",
            "#Version",
            "#InTPS",
            "#OutTPS",
            "#PCWait(ms)",
            "#Hour",
            "#SPACE",
        ],
        ctx.run(call),
    )


@click.command("brokerStatus")
@click.option("-b", "--brokerAddr", "broker", default=None)
@click.option("-c", "--clusterName", "cluster", default=None)
@admin_command
def broker_status(ctx: AdminContext, broker: str | None, cluster: str | None) -> None:
    """A broker's runtime figures (GET_BROKER_RUNTIME_INFO), one key a line.

    \b
    Example:
      rocketq admin brokerStatus -n 127.0.0.1:9876 -b 127.0.0.1:10911
    """

    async def call(admin: AsyncAdminClient) -> dict[str, dict[str, str]]:
        addrs = await _broker_addrs(admin, cluster, broker)
        return {addr: await admin.fetch_broker_runtime_stats(addr) for addr in addrs}

    tables = ctx.run(call)
    if ctx.as_json:
        ctx.json(tables)
        return
    for addr, kv in tables.items():
        if len(tables) > 1:
            click.echo(f"============{addr}============")
        ctx.pairs(sorted(kv.items()))


@click.command("getBrokerConfig")
@click.option("-b", "--brokerAddr", "broker", default=None)
@click.option("-c", "--clusterName", "cluster", default=None)
@admin_command
def get_broker_config(ctx: AdminContext, broker: str | None, cluster: str | None) -> None:
    """A broker's settings as broker.conf keys.

    \b
    Example:
      rocketq admin getBrokerConfig -n 127.0.0.1:9876 -b 127.0.0.1:10911
    """

    async def call(admin: AsyncAdminClient) -> dict[str, dict[str, str]]:
        addrs = await _broker_addrs(admin, cluster, broker)
        return {addr: await admin.get_broker_config(addr) for addr in addrs}

    tables = ctx.run(call)
    if ctx.as_json:
        ctx.json(tables)
        return
    for addr, kv in tables.items():
        click.echo(f"============{addr}============")
        ctx.pairs(sorted(kv.items()), separator=" =  ")


@click.command("updateBrokerConfig")
@click.option("-b", "--brokerAddr", "broker", default=None)
@click.option("-c", "--clusterName", "cluster", default=None)
@click.option("-k", "--key", required=True)
@click.option("-v", "--value", required=True)
@admin_command
def update_broker_config(
    ctx: AdminContext, broker: str | None, cluster: str | None, key: str, value: str
) -> None:
    """Change one broker setting at run time (refused, with the reason, if it cannot).

    \b
    Example:
      rocketq admin updateBrokerConfig -n 127.0.0.1:9876 -b 127.0.0.1:10911 -k brokerPermission -v 4
    """

    async def call(admin: AsyncAdminClient) -> list[str]:
        addrs = await _broker_addrs(admin, cluster, broker)
        for addr in addrs:
            await admin.update_broker_config(addr, {key: value})
        return addrs

    for addr in ctx.run(call):
        ctx.done(f"update broker config success, {addr}", {"broker": addr})


def _perm_command(name: str, wipe: bool) -> click.Command:
    verb = "Remove" if wipe else "Give back"

    @click.command(name)
    @click.option("-b", "--brokerName", "broker_name", required=True)
    @admin_command
    def command(ctx: AdminContext, broker_name: str) -> None:
        async def call(admin: AsyncAdminClient) -> list[tuple[str, int]]:
            out = []
            for ns in admin.remoting.get_namesrv_addr_list():
                if wipe:
                    count = await admin.wipe_write_perm_of_broker(ns, broker_name)
                else:
                    count = await admin.add_write_perm_of_broker(ns, broker_name)
                out.append((ns, count))
            return out

        what = "wipe" if wipe else "add"
        for ns, count in ctx.run(call):
            ctx.done(
                f"{what} write perm of broker[{broker_name}] in name server[{ns}] OK, {count}",
                {"namesrv": ns, "topicCount": count},
            )

    command.help = (
        f"{verb} a broker's write permission in every name server's routes.\n\n"
        f"\b\nExample:\n  rocketq admin {name} -n 127.0.0.1:9876 -b broker-a"
    )
    return command


wipe_write_perm = _perm_command("wipeWritePerm", wipe=True)
add_write_perm = _perm_command("addWritePerm", wipe=False)


@click.command("updateKvConfig")
@click.option("-s", "--namespace", required=True)
@click.option("-k", "--key", required=True)
@click.option("-v", "--value", required=True)
@admin_command
def update_kv_config(ctx: AdminContext, namespace: str, key: str, value: str) -> None:
    """Set a KV config item on every name server.

    \b
    Example:
      rocketq admin updateKvConfig -n 127.0.0.1:9876 -s ORDER_TOPIC_CONFIG -k TopicA -v broker-a:4
    """
    ctx.run(lambda admin: admin.put_kv_config(namespace, key, value))
    ctx.done("update kv config in namespace success.")


@click.command("deleteKvConfig")
@click.option("-s", "--namespace", required=True)
@click.option("-k", "--key", required=True)
@admin_command
def delete_kv_config(ctx: AdminContext, namespace: str, key: str) -> None:
    """Delete a KV config item from every name server.

    \b
    Example:
      rocketq admin deleteKvConfig -n 127.0.0.1:9876 -s ORDER_TOPIC_CONFIG -k TopicA
    """
    ctx.run(lambda admin: admin.delete_kv_config(namespace, key))
    ctx.done("delete kv config from namespace success.")


async def _stats_sum(
    admin: AsyncAdminClient, masters: list[str], name: str, key: str
) -> tuple[float, int]:
    tps, day = 0.0, 0
    for addr in masters:
        try:
            data = await admin.view_broker_stats_data(addr, name, key)
        except RocketQError:  # never counted on that broker
            continue
        tps += data.stats_minute.tps
        day += data.stats_day.sum
    return tps, day


@click.command("statsAll")
@click.option("-t", "--topic", default=None, help="Only this topic.")
@click.option("-a", "--activeTopic", "active", is_flag=True, help="Only topics with traffic.")
@admin_command
def stats_all(ctx: AdminContext, topic: str | None, active: bool) -> None:
    """Each topic's and group's TPS in and out, 24-hour totals and accumulation.

    \b
    Example:
      rocketq admin statsAll -n 127.0.0.1:9876 -a
    """

    async def call(admin: AsyncAdminClient) -> list[tuple[Any, ...]]:
        topics = [topic] if topic else sorted(await admin.fetch_all_topic_list())
        rows: list[tuple[Any, ...]] = []
        for t in topics:
            if is_retry_topic(t) or is_dlq_topic(t):
                continue
            try:
                masters = list((await admin.master_addrs_of_topic(t)).values())
            except RocketQError:
                continue
            in_tps, in_day = await _stats_sum(admin, masters, "TOPIC_PUT_NUMS", t)
            groups = (await admin.query_topic_consume_by_who(t)).group_list
            if active and in_day == 0 and not groups:
                continue
            if not groups:
                rows.append((t, "", 0, in_tps, 0.0, in_day, 0))
            for g in groups:
                out_tps, out_day = await _stats_sum(admin, masters, "GROUP_GET_NUMS", f"{t}@{g}")
                try:
                    accumulation = (await admin.examine_consume_stats(g, t)).compute_total_diff()
                except RocketQError:
                    accumulation = 0
                rows.append((t, g, accumulation, in_tps, out_tps, in_day, out_day))
        return rows

    ctx.table(
        [
            "#Topic",
            "#Consumer Group",
            "#Accumulation",
            "#InTPS",
            "#OutTPS",
            "#InMsg24Hour",
            "#OutMsg24Hour",
        ],
        ctx.run(call),
    )


COMMANDS = [
    cluster_list,
    broker_status,
    get_broker_config,
    update_broker_config,
    wipe_write_perm,
    add_write_perm,
    update_kv_config,
    delete_kv_config,
    stats_all,
]
