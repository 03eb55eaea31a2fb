"""``rocketq admin`` subscription-group commands: updateSubGroup and deleteSubGroup (mqadmin
5.x's names and short options).

updateSubGroup sets RocketMQ 5's group fields only when their option is given, so a group made
without them keeps RocketMQ 4's shape: ``-o`` consumeMessageOrderly (FIFO consumption), ``-p``
groupRetryPolicy as JSON (``{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}``
or ``{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,
"multiplier":2}}``) and ``--attributes`` (``+key=value,-key``; RocketMQ 5 knows no group
attribute, so the broker refuses every key). ``-a`` stays notifyConsumerIdsChanged.
"""

from __future__ import annotations

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.attribute import AttributeRefusedError, parse_to_map
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.retry_policy import GroupRetryPolicy

RETRY_POLICY_EXAMPLE = '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}'


async def _targets(admin: AsyncAdminClient, cluster: str | None, broker: str | None) -> list[str]:
    if (cluster is None) == (broker is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")
    if broker is not None:
        return [broker]
    assert cluster is not None
    return list((await admin.master_addrs_of_cluster(cluster)).values())


@click.command("updateSubGroup")
@click.option("-g", "--groupName", "group", required=True)
@click.option("-c", "--clusterName", "cluster", default=None)
@click.option("-b", "--brokerAddr", "broker", default=None)
@click.option("-s", "--consumeEnable", "consume_enable", type=bool, default=True)
@click.option("-m", "--consumeFromMinEnable", "from_min", type=bool, default=True)
@click.option("-d", "--consumeBroadcastEnable", "broadcast", type=bool, default=True)
@click.option(
    "-o", "--consumeMessageOrderly", "orderly", type=bool, default=None, help="FIFO consumption."
)
@click.option("-q", "--retryQueueNums", "retry_queues", type=int, default=1, show_default=True)
@click.option("-r", "--retryMaxTimes", "retry_max", type=int, default=16, show_default=True)
@click.option(
    "-p",
    "--groupRetryPolicy",
    "retry_policy",
    default=None,
    help=f"The retry policy as JSON, e.g. {RETRY_POLICY_EXAMPLE}",
)
@click.option("-i", "--brokerId", "broker_id", type=int, default=0, show_default=True)
@click.option(
    "-w", "--whichBrokerWhenConsumeSlowly", "slow_broker", type=int, default=1, show_default=True
)
@click.option("-a", "--notifyConsumerIdsChanged", "notify", type=bool, default=True)
@click.option("--attributes", default=None, help="Attribute changes: +key=value,-key.")
@admin_command
def update_sub_group(
    ctx: AdminContext,
    group: str,
    cluster: str | None,
    broker: str | None,
    consume_enable: bool,
    from_min: bool,
    broadcast: bool,
    orderly: bool | None,
    retry_queues: int,
    retry_max: int,
    retry_policy: str | None,
    broker_id: int,
    slow_broker: int,
    notify: bool,
    attributes: str | None,
) -> None:
    """Create a subscription group or change its settings.

    \b
    Example:
      rocketq admin updateSubGroup -n 127.0.0.1:9876 -c DefaultCluster -g GroupA -r 3
      rocketq admin updateSubGroup -n 127.0.0.1:9876 -c DefaultCluster -g Fifo -o true
    """
    config = SubscriptionGroupConfig(
        group_name=group,
        consume_enable=consume_enable,
        consume_from_min_enable=from_min,
        consume_broadcast_enable=broadcast,
        retry_queue_nums=retry_queues,
        retry_max_times=retry_max,
        broker_id=broker_id,
        which_broker_when_consume_slowly=slow_broker,
        notify_consumer_ids_changed_enable=notify,
        consume_message_orderly=orderly,
        group_retry_policy=_retry_policy(retry_policy),
        attributes=_attributes(attributes),
    )

    async def call(admin: AsyncAdminClient) -> list[str]:
        addrs = await _targets(admin, cluster, broker)
        for addr in addrs:
            await admin.create_and_update_subscription_group_config(addr, config)
        return addrs

    for addr in ctx.run(call):
        ctx.done(f"create subscription group to {addr} success.", {"broker": addr})


@click.command("deleteSubGroup")
@click.option("-g", "--groupName", "group", required=True)
@click.option("-c", "--clusterName", "cluster", default=None)
@click.option("-b", "--brokerAddr", "broker", default=None)
@click.option("-r", "--removeOffset", "remove_offset", type=bool, default=False)
@admin_command
def delete_sub_group(
    ctx: AdminContext, group: str, cluster: str | None, broker: str | None, remove_offset: bool
) -> None:
    """Delete a subscription group (and, with -r true, its offsets).

    \b
    Example:
      rocketq admin deleteSubGroup -n 127.0.0.1:9876 -c DefaultCluster -g GroupA
    """

    async def call(admin: AsyncAdminClient) -> list[str]:
        addrs = await _targets(admin, cluster, broker)
        for addr in addrs:
            await admin.delete_subscription_group(addr, group, remove_offset=remove_offset)
        return addrs

    for addr in ctx.run(call):
        ctx.done(f"delete subscription group [{group}] from broker [{addr}] success.")


def _retry_policy(text: str | None) -> GroupRetryPolicy | None:
    if text is None:
        return None
    try:
        return GroupRetryPolicy.decode(text.strip().encode())
    except (RemotingCommandError, ValueError) as exc:
        raise click.BadParameter(
            f"not a retry policy ({exc}); e.g. {RETRY_POLICY_EXAMPLE}",
            param_hint="-p/--groupRetryPolicy",
        ) from None


def _attributes(text: str | None) -> dict[str, str] | None:
    if text is None:
        return None
    try:
        return parse_to_map(text.strip())
    except AttributeRefusedError as exc:
        raise click.BadParameter(str(exc), param_hint="--attributes") from None


COMMANDS = [update_sub_group, delete_sub_group]
