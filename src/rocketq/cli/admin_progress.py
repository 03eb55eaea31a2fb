"""``rocketq admin consumerProgress``: a group's lag per queue (or every group's totals), as
mqadmin prints it."""

from __future__ import annotations

from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, format_ms
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX, is_retry_topic
from rocketq.errors import ClientError, ConsumerNotOnlineError, RocketQError
from rocketq.remoting.protocol.admin_bodies import ConsumeStats


def enum_name(value: object) -> str | None:
    return None if value is None else str(getattr(value, "name", value))


def _progress_rows(
    stats: ConsumeStats, owners: dict[tuple[str, str, int], str]
) -> list[tuple[Any, ...]]:
    rows = []
    for mq, w in sorted(
        stats.offset_table.items(), key=lambda kv: (kv[0].topic, kv[0].broker_name, kv[0].queue_id)
    ):
        rows.append(
            (
                mq.topic,
                mq.broker_name,
                mq.queue_id,
                w.broker_offset,
                w.consumer_offset,
                owners.get((mq.topic, mq.broker_name, mq.queue_id)),
                w.broker_offset - w.consumer_offset,
                format_ms(w.last_timestamp),
            )
        )
    return rows


async def _cluster_brokers(admin: AsyncAdminClient, cluster: str) -> set[str]:
    info = await admin.examine_broker_cluster_info()
    if cluster not in info.cluster_addr_table:
        raise click.ClickException(f"no cluster named {cluster}")
    return set(info.cluster_addr_table[cluster])


async def _queue_owners(admin: AsyncAdminClient, group: str) -> dict[tuple[str, str, int], str]:
    """Which client address holds each queue (from the consumers' running info), as
    mqadmin's #Client IP column; empty when no consumer of the group is online."""
    owners: dict[tuple[str, str, int], str] = {}
    try:
        conn = await admin.examine_consumer_connection_info(group)
    except ConsumerNotOnlineError:
        return owners
    for c in conn.connection_set:
        try:
            info = await admin.get_consumer_running_info(group, c.client_id)
        except RocketQError:
            continue
        for mq in info.mq_table:
            owners[(mq.topic, mq.broker_name, mq.queue_id)] = c.client_addr
    return owners


@click.command("consumerProgress")
@click.option("-g", "--groupName", "group", default=None, help="Without it: every group.")
@click.option("-t", "--topicName", "topic", default=None)
@click.option(
    "-s", "--showClientIP", "show_ip", type=bool, default=False, help="true: a #Client IP column."
)
@click.option("-c", "--cluster", default=None, help="Only queues on this cluster's brokers.")
@admin_command
def consumer_progress(
    ctx: AdminContext, group: str | None, topic: str | None, show_ip: bool, cluster: str | None
) -> None:
    """A group's offsets against each queue's max: the lag (#Diff) per queue.

    \b
    Example:
      rocketq admin consumerProgress -n 127.0.0.1:9876 -g GroupA -s true
    """
    if group is not None:

        async def one_group(
            admin: AsyncAdminClient,
        ) -> tuple[ConsumeStats, dict[tuple[str, str, int], str]]:
            assert group is not None
            stats = await admin.examine_consume_stats(group, topic)
            if cluster is not None:
                names = await _cluster_brokers(admin, cluster)
                stats.offset_table = {
                    mq: w for mq, w in stats.offset_table.items() if mq.broker_name in names
                }
            return stats, (await _queue_owners(admin, group) if show_ip else {})

        stats, owners = ctx.run(one_group)
        headers = [
            "#Topic",
            "#Broker Name",
            "#QID",
            "#Broker Offset",
            "#Consumer Offset",
            "#Client IP",
            "#Diff",
            "#LastTime",
        ]
        rows = _progress_rows(stats, owners)
        if not show_ip:
            headers.remove("#Client IP")
            rows = [r[:5] + r[6:] for r in rows]
        if ctx.as_json:
            ctx.json(
                {
                    "consumeTps": stats.consume_tps,
                    "diffTotal": stats.compute_total_diff(),
                    "queues": [
                        dict(zip([h.lstrip("#") for h in headers], r, strict=True)) for r in rows
                    ],
                }
            )
            return
        ctx.table(headers, rows)
        click.echo("")
        click.echo(f"Consume TPS: {stats.consume_tps:.2f}")
        click.echo(f"Diff Total: {stats.compute_total_diff()}")
        return

    async def every_group(admin: AsyncAdminClient) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for name in sorted(await admin.fetch_all_topic_list()):
            if not is_retry_topic(name):
                continue
            g = name[len(RETRY_GROUP_TOPIC_PREFIX) :]
            try:
                stats = await admin.examine_consume_stats(g)
            except ClientError:
                continue
            if cluster is not None:
                names = await _cluster_brokers(admin, cluster)
                if not any(mq.broker_name in names for mq in stats.offset_table):
                    continue
            try:
                conn = await admin.examine_consumer_connection_info(g)
                count, model = len(conn.connection_set), conn.message_model
                kind = conn.consume_type
                version = max((c.version for c in conn.connection_set), default=None)
            except ConsumerNotOnlineError:
                count, model, kind, version = 0, None, None, None
            rows.append(
                (
                    g,
                    count,
                    version,
                    enum_name(kind),
                    enum_name(model),
                    stats.consume_tps,
                    stats.compute_total_diff(),
                )
            )
        return rows

    ctx.table(
        ["#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total"],
        ctx.run(every_group),
    )


COMMANDS = [consumer_progress]
