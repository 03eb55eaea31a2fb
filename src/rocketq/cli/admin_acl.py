"""``rocketq admin`` ACL commands under mqadmin's names (updateAclConfig, deleteAclConfig,
updateGlobalWhiteAddr, clusterAclConfigVersion, getAccessConfigSubCommand), on the library calls
of ``rocketq.admin.acl``; requests are signed with ``--ak``/``--sk`` (or ROCKETQ_ACCESS_KEY and
ROCKETQ_SECRET_KEY) and go to one broker (-b) or every master of a cluster (-c)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import click

from rocketq.admin import AsyncAdminClient
from rocketq.admin import acl as acl_admin
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.remoting.acl import AclClientRPCHook
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.acl_bodies import PlainAccessConfig

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def acl_options(func: F) -> F:
    for option in (
        click.option("-b", "--brokerAddr", "broker", default=None, help="One broker."),
        click.option("-c", "--clusterName", "cluster", default=None, help="Every master of it."),
        click.option("--ak", envvar="ROCKETQ_ACCESS_KEY", default="", help="Admin accessKey."),
        click.option("--sk", envvar="ROCKETQ_SECRET_KEY", default="", help="Admin secretKey."),
    ):
        func = option(func)
    return func


def _on_brokers(
    ctx: AdminContext,
    opts: dict[str, Any],
    call: Callable[[RemotingClient, str], Awaitable[T]],
) -> list[tuple[str, T]]:
    broker, cluster = opts.pop("broker"), opts.pop("cluster")
    ak, sk = opts.pop("ak"), opts.pop("sk")
    if (broker is None) == (cluster is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")

    async def run(admin: AsyncAdminClient) -> list[tuple[str, T]]:
        addrs = (
            [broker] if broker else list((await admin.master_addrs_of_cluster(cluster)).values())
        )
        hook = AclClientRPCHook(ak, sk) if ak else None
        async with RemotingClient(rpc_hook=hook) as client:
            return [(addr, await call(client, addr)) for addr in addrs]

    return ctx.run(run)


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


@click.command("updateAclConfig")
@acl_options
@click.option("-a", "--accessKey", "access_key", required=True)
@click.option("-s", "--secretKey", "secret_key", required=True)
@click.option("-w", "--whiteRemoteAddress", "white", default=None)
@click.option("-m", "--admin", "is_admin", type=bool, default=False)
@click.option(
    "-i", "--defaultTopicPerm", "topic_perm", default=None, help="DENY, PUB, SUB, PUB|SUB"
)
@click.option(
    "-u", "--defaultGroupPerm", "group_perm", default=None, help="DENY, PUB, SUB, PUB|SUB"
)
@click.option("-t", "--topicPerms", "topic_perms", default=None, help="topicA=PUB,topicB=SUB")
@click.option("-g", "--groupPerms", "group_perms", default=None, help="groupA=SUB")
@admin_command
def update_acl_config(ctx: AdminContext, **opts: Any) -> None:
    """Create or change an ACL account on brokers.

    \b
    Example:
      rocketq admin updateAclConfig -b 127.0.0.1:10911 --ak admin --sk 12345678 \\
          -a app1 -s app1secret -t TopicTest=PUB
    """
    config = PlainAccessConfig(
        access_key=opts.pop("access_key"),
        secret_key=opts.pop("secret_key"),
        white_remote_address=opts.pop("white"),
        admin=opts.pop("is_admin"),
        default_topic_perm=opts.pop("topic_perm"),
        default_group_perm=opts.pop("group_perm"),
        topic_perms=_split(opts.pop("topic_perms")),
        group_perms=_split(opts.pop("group_perms")),
    )
    done = _on_brokers(
        ctx, opts, lambda c, addr: acl_admin.create_or_update_access_config(c, addr, config)
    )
    for addr, _ in done:
        ctx.done(f"create or update plain access config to {addr} success.", {"broker": addr})


@click.command("deleteAclConfig")
@acl_options
@click.option("-a", "--accessKey", "access_key", required=True)
@admin_command
def delete_acl_config(ctx: AdminContext, access_key: str, **opts: Any) -> None:
    """Delete an ACL account from brokers.

    \b
    Example:
      rocketq admin deleteAclConfig -b 127.0.0.1:10911 --ak admin --sk 12345678 -a app1
    """
    done = _on_brokers(
        ctx, opts, lambda c, addr: acl_admin.delete_access_config(c, addr, access_key)
    )
    for addr, _ in done:
        ctx.done(f"delete plain access config from {addr} success.", {"broker": addr})


@click.command("updateGlobalWhiteAddr")
@acl_options
@click.option("-g", "--globalWhiteRemoteAddresses", "addrs", required=True)
@admin_command
def update_global_white_addr(ctx: AdminContext, addrs: str, **opts: Any) -> None:
    """Replace the brokers' globalWhiteRemoteAddresses.

    \b
    Example:
      rocketq admin updateGlobalWhiteAddr -b 127.0.0.1:10911 --ak admin --sk 12345678 -g 10.0.0.*
    """
    white = _split(addrs)
    done = _on_brokers(
        ctx, opts, lambda c, addr: acl_admin.update_global_white_addrs(c, addr, white)
    )
    for addr, _ in done:
        ctx.done(f"update global white remote addresses to {addr} success.", {"broker": addr})


@click.command("clusterAclConfigVersion")
@acl_options
@admin_command
def cluster_acl_config_version(ctx: AdminContext, **opts: Any) -> None:
    """Each broker's ACL file version.

    \b
    Example:
      rocketq admin clusterAclConfigVersion -c DefaultCluster --ak admin --sk 12345678
    """
    done = _on_brokers(ctx, opts, acl_admin.get_broker_cluster_acl_info)
    rows: Sequence[Sequence[Any]] = [
        (h.cluster_name, h.broker_name, addr, v.get("counter"), v.get("timestamp"))
        for addr, (h, v) in done
    ]
    ctx.table(
        [
            "#Cluster Name",
            "#Broker Name",
            "#Broker Addr",
            "#AclConfigVersion",
            "#AclLastUpdateTime",
        ],
        rows,
    )


@click.command("getAccessConfigSubCommand")
@acl_options
@admin_command
def get_access_config(ctx: AdminContext, **opts: Any) -> None:
    """The brokers' ACL accounts (without secrets) and white list, as JSON.

    \b
    Example:
      rocketq admin getAccessConfigSubCommand -b 127.0.0.1:10911 --ak admin --sk 12345678
    """
    done = _on_brokers(ctx, opts, acl_admin.get_broker_cluster_acl_config)
    ctx.json({addr: body.to_json() for addr, body in done})


COMMANDS = [
    update_acl_config,
    delete_acl_config,
    update_global_white_addr,
    cluster_acl_config_version,
    get_access_config,
]
