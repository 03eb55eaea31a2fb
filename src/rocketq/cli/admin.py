"""``rocketq admin <command>``: mqadmin's commands, names and short options, on ``rocketq.admin``.

Every command takes ``-n`` (or ``NAMESRV_ADDR``, default 127.0.0.1:9876), prints aligned
tables as mqadmin does or JSON with ``--json``, and exits 1 with one clear line on stderr when
a server is unreachable or refuses (unknown topic, no such group, ...).
"""

from __future__ import annotations

import click

from rocketq.cli import (
    acl,
    admin_batch,
    admin_broker,
    admin_consume_stats,
    admin_controller,
    admin_export,
    admin_group,
    admin_latency,
    admin_maintenance,
    admin_message,
    admin_message_queue,
    admin_message_scan,
    admin_namesrv,
    admin_progress,
    admin_stats,
    admin_subscription_group,
    admin_topic,
    admin_trace,
    admin_unsupported,
)


class AdminGroup(click.Group):
    """Commands listed in mqadmin's order of topics, groups, messages, brokers, ACL; each with
    the whole first line of its help (click would cut it at 45 characters)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (name, command.get_short_help_str(limit=1000))
            for name, command in self.commands.items()
            if not command.hidden
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=AdminGroup, context_settings={"help_option_names": ["-h", "--help"]})
def admin() -> None:
    """mqadmin's commands against a running name server and its brokers.

    Every command mqadmin 5.3 registers is here; the ones rocketq cannot serve answer "not
    supported by rocketq" with the reason. Requests are signed as mqadmin signs them when an
    ACL account is given: --accessKey/--secretKey, ROCKETQ_ACCESS_KEY/ROCKETQ_SECRET_KEY, or
    accessKey/secretKey in $ROCKETMQ_HOME/conf/tools.yml.

    \b
    Examples:
      rocketq admin clusterList -n 127.0.0.1:9876
      rocketq admin updateTopic -c DefaultCluster -t TopicTest
      rocketq admin consumerProgress -g GroupA --json
    """


for module in (
    admin_topic,
    admin_subscription_group,
    admin_batch,
    admin_group,
    admin_progress,
    admin_consume_stats,
    admin_message,
    admin_message_scan,
    admin_message_queue,
    admin_trace,
    admin_latency,
    admin_namesrv,
    admin_maintenance,
    admin_export,
    admin_broker,
    admin_stats,
    admin_controller,
    acl,
):
    for command in module.COMMANDS:
        admin.add_command(command)
for command in admin_unsupported.COMMANDS:
    if command.name not in admin.commands:  # another module may serve it by now
        admin.add_command(command)
