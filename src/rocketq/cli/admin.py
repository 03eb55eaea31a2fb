"""``rocketq admin <command>``: mqadmin's commands, names and short options, on ``rocketq.admin``.

Every command takes ``-n`` (or ``NAMESRV_ADDR``, default 127.0.0.1:9876), prints aligned
tables as mqadmin does or JSON with ``--json``, and exits 1 with one clear line on stderr when
a server is unreachable or refuses (unknown topic, no such group, ...).
"""

from __future__ import annotations

import click

from rocketq.cli import (
    acl,
    admin_broker,
    admin_controller,
    admin_group,
    admin_message,
    admin_message_scan,
    admin_namesrv,
    admin_progress,
    admin_stats,
    admin_subscription_group,
    admin_topic,
)


class AdminGroup(click.Group):
    """Commands listed in mqadmin's order of topics, groups, messages, brokers, ACL."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


@click.group(cls=AdminGroup)
def admin() -> None:
    """mqadmin's commands against a running name server and its brokers.

    \b
    Examples:
      rocketq admin clusterList -n 127.0.0.1:9876
      rocketq admin updateTopic -c DefaultCluster -t TopicTest
      rocketq admin consumerProgress -g GroupA --json
    """


for module in (
    admin_topic,
    admin_subscription_group,
    admin_group,
    admin_progress,
    admin_message,
    admin_message_scan,
    admin_namesrv,
    admin_broker,
    admin_stats,
    admin_controller,
    acl,
):
    for command in module.COMMANDS:
        admin.add_command(command)
