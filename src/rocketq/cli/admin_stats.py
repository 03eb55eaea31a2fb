"""``rocketq admin statsAll``: each topic's and group's TPS and 24-hour totals from the brokers'
BrokerStatsManager (VIEW_BROKER_STATS_DATA), as mqadmin prints them."""

from __future__ import annotations

from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.topic import is_dlq_topic, is_retry_topic
from rocketq.errors import RocketQError


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


COMMANDS = [stats_all]
