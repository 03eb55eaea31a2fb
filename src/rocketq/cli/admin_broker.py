"""``rocketq admin`` cluster and broker commands: clusterList, brokerStatus, getBrokerConfig,
updateBrokerConfig (statsAll is in ``admin_stats``)."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.clock import now_ms
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


async def _every_broker_of(admin: AsyncAdminClient, cluster: str) -> list[str]:
    """Every broker address (masters and slaves) of ``cluster``."""
    info = await admin.examine_broker_cluster_info()
    if cluster not in info.cluster_addr_table:
        raise click.ClickException(f"no cluster named {cluster}")
    addrs: list[str] = []
    for name in sorted(info.cluster_addr_table[cluster]):
        data = info.broker_addr_table.get(name)
        addrs.extend(addr for _, addr in sorted((data.broker_addrs if data else {}).items()))
    return addrs


def _first(text: str | None) -> float | None:
    try:
        return float((text or "").split()[0])
    except (IndexError, ValueError):
        return None


def _day_totals(kv: dict[str, str]) -> tuple[int, int, int, int]:
    """clusterList -m: messages in and out yesterday and today (from the morning snapshots)."""

    def n(key: str) -> int:
        return int(kv.get(key) or 0)

    return (
        n("msgPutTotalTodayMorning") - n("msgPutTotalYesterdayMorning"),
        n("msgGetTotalTodayMorning") - n("msgGetTotalYesterdayMorning"),
        n("msgPutTotalTodayNow") - n("msgPutTotalTodayMorning"),
        n("msgGetTotalTodayNow") - n("msgGetTotalTodayMorning"),
    )


@click.command("clusterList")
@click.option(
    "-m", "--moreStats", "more", is_flag=True, help="Messages in and out, yesterday and today."
)
@click.option("-c", "--clusterName", "only", default=None, help="Only this cluster.")
@click.option(
    "-i", "--interval", type=float, default=None, help="Print again every this many seconds."
)
@admin_command
def cluster_list(ctx: AdminContext, more: bool, only: str | None, interval: float | None) -> None:
    """Every cluster's brokers with their version, TPS in and out and disk use.

    \b
    Example:
      rocketq admin clusterList -n 127.0.0.1:9876 -m
    """

    async def call(admin: AsyncAdminClient) -> list[tuple[Any, ...]]:
        info = await admin.examine_broker_cluster_info()
        if only is not None and only not in info.cluster_addr_table:
            raise click.ClickException(f"no cluster named {only}")
        rows: list[tuple[Any, ...]] = []
        for cluster in sorted(info.cluster_addr_table):
            if only is not None and cluster != only:
                continue
            for name in sorted(info.cluster_addr_table[cluster]):
                data = info.broker_addr_table.get(name)
                for bid, addr in sorted((data.broker_addrs if data else {}).items()):
                    try:
                        kv = await admin.fetch_broker_runtime_stats(addr)
                    except RocketQError:
                        kv = {}
                    if more:
                        rows.append((cluster, name, *_day_totals(kv)))
                        continue
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

    while True:
        if more:
            headers = ["#Cluster Name", "#Broker Name", "#InTotalYest", "#OutTotalYest"]
            ctx.table([*headers, "#InTotalToday", "#OutTotalToday"], ctx.run(call))
        else:
            ctx.table(CLUSTER_HEADERS, ctx.run(call))
        if interval is None:
            return
        sys.stdout.flush()
        time.sleep(interval)  # mqadmin's -i: until interrupted


CLUSTER_HEADERS = [
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
]


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
@click.option(
    "-a",
    "--updateAllBroker",
    "all_brokers",
    type=bool,
    default=False,
    help="true: with -c, slaves too (not only masters).",
)
@admin_command
def update_broker_config(
    ctx: AdminContext,
    broker: str | None,
    cluster: str | None,
    key: str,
    value: str,
    all_brokers: bool,
) -> None:
    """Change one broker setting at run time (refused, with the reason, if it cannot).

    \b
    Example:
      rocketq admin updateBrokerConfig -n 127.0.0.1:9876 -b 127.0.0.1:10911 -k brokerPermission -v 4
    """

    async def call(admin: AsyncAdminClient) -> list[str]:
        if all_brokers and cluster is not None and broker is None:
            addrs = await _every_broker_of(admin, cluster)
        else:
            addrs = await _broker_addrs(admin, cluster, broker)
        for addr in addrs:
            await admin.update_broker_config(addr, {key: value})
        return addrs

    for addr in ctx.run(call):
        ctx.done(f"update broker config success, {addr}", {"broker": addr})


COMMANDS = [
    cluster_list,
    broker_status,
    get_broker_config,
    update_broker_config,
]
