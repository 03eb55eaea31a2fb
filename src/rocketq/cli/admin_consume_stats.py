"""``rocketq admin brokerConsumeStats``: the lag of every group on one broker, queue by queue,
as mqadmin's BrokerConsumeStatsSubCommad prints it (queues never consumed are left out)."""

from __future__ import annotations

from typing import Any

import click

from rocketq.cli.admin_context import AdminContext, admin_command, format_ms


@click.command("brokerConsumeStats")
@click.option("-b", "--brokerAddr", "broker", required=True)
@click.option(
    "-t", "--timeoutMillis", "timeout_ms", type=int, default=None, help="Overrides --timeout."
)
@click.option("-l", "--level", type=int, default=0, show_default=True, help="Only diff >= this.")
@click.option("-o", "--order", type=bool, default=False, help="true: orderly groups only.")
@admin_command
def broker_consume_stats(
    ctx: AdminContext, broker: str, timeout_ms: int | None, level: int, order: bool
) -> None:
    """Every group's offsets and lag on one broker, queue by queue.

    \b
    Example:
      rocketq admin brokerConsumeStats -n 127.0.0.1:9876 -b 127.0.0.1:10911 -l 100
    """
    if timeout_ms is not None:
        ctx.timeout_s = timeout_ms / 1000
    stats = ctx.run(lambda admin: admin.fetch_consume_stats_in_broker(broker, is_order=order))
    rows: list[tuple[Any, ...]] = []
    for group, group_stats in stats.items():
        for mq, w in sorted(
            group_stats.offset_table.items(),
            key=lambda kv: (kv[0].topic, kv[0].broker_name, kv[0].queue_id),
        ):
            diff = w.broker_offset - w.consumer_offset
            if diff < level or w.last_timestamp <= 0:
                continue
            rows.append(
                (
                    mq.topic,
                    group,
                    mq.broker_name,
                    mq.queue_id,
                    w.broker_offset,
                    w.consumer_offset,
                    diff,
                    format_ms(w.last_timestamp),
                )
            )
    ctx.table(
        [
            "#Topic",
            "#Group",
            "#Broker Name",
            "#QID",
            "#Broker Offset",
            "#Consumer Offset",
            "#Diff",
            "#LastTime",
        ],
        rows,
    )


COMMANDS = [broker_consume_stats]
