"""ACL commands, one set under two names: mqadmin's (``rocketq admin updateAclConfig``,
``deleteAclConfig``, ``updateGlobalWhiteAddr``, ``clusterAclConfigVersion``,
``getAccessConfigSubCommand``) and the short ``rocketq acl`` group (``update``, ``delete``,
``white``, ``version``, ``list``), which runs the same commands with its ``-b``/``--ak``/``--sk``
passed on. Each takes a long option in mqadmin's camelCase or in kebab-case.

The calls are ``AsyncAdminClient``'s (``rocketq.admin.acl.AclAdmin``), signed with ``--ak`` and
``--sk`` (or ROCKETQ_ACCESS_KEY and ROCKETQ_SECRET_KEY), to one broker (``-b``) or to every
master of a cluster (``-c``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.remoting.protocol.acl_bodies import PlainAccessConfig

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def acl_options(func: F) -> F:
    for option in (
        click.option("-b", "--brokerAddr", "broker", default=None, help="One broker."),
        click.option("-c", "--clusterName", "cluster", default=None, help="Every master of it."),
    ):
        func = option(func)
    return func


def _on_brokers(
    ctx: AdminContext,
    opts: dict[str, Any],
    call: Callable[[AsyncAdminClient, str], Awaitable[T]],
) -> list[tuple[str, T]]:
    broker, cluster = opts.pop("broker"), opts.pop("cluster")
    if (broker is None) == (cluster is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")

    async def run(admin: AsyncAdminClient) -> list[tuple[str, T]]:
        addrs = (
            [broker] if broker else list((await admin.master_addrs_of_cluster(cluster)).values())
        )
        return [(addr, await call(admin, addr)) for addr in addrs]

    return ctx.run(run)  # signed with the command's --ak/--sk (admin_command)


def _change_on_brokers(
    ctx: AdminContext,
    opts: dict[str, Any],
    call: Callable[[AsyncAdminClient, str], Awaitable[None]],
    done: str,
) -> None:
    """Run ``call`` on each broker and say ``done`` (its ``{addr}`` filled in) for each."""
    for addr, _ in _on_brokers(ctx, opts, call):
        ctx.done(done.format(addr=addr), {"broker": addr})


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


@click.command("updateAclConfig")
@acl_options
@click.option("-a", "--accessKey", "--access-key", "access_key", required=True)
@click.option("-s", "--secretKey", "--secret-key", "secret_key", required=True)
@click.option("-w", "--whiteRemoteAddress", "--white-remote-address", "white", default=None)
@click.option(
    "-m",
    "--admin",
    "is_admin",
    type=bool,
    is_flag=False,
    flag_value=True,
    default=False,
    help="true or false; --admin alone is true.",
)
@click.option("--no-admin", "no_admin", is_flag=True, hidden=True)
@click.option(
    "-i",
    "--defaultTopicPerm",
    "--default-topic-perm",
    "topic_perm",
    default=None,
    help="DENY, PUB, SUB, PUB|SUB",
)
@click.option(
    "-u",
    "--defaultGroupPerm",
    "--default-group-perm",
    "group_perm",
    default=None,
    help="DENY, PUB, SUB, PUB|SUB",
)
@click.option("-t", "--topicPerms", "--topic-perms", "topic_perms", help="topicA=PUB,topicB=SUB")
@click.option("-g", "--groupPerms", "--group-perms", "group_perms", help="groupA=SUB")
@admin_command
def update_acl_config(ctx: AdminContext, **opts: Any) -> None:
    """Create or change an ACL account on brokers.

    \b
    Example:
      rocketq admin updateAclConfig -b 127.0.0.1:10911 --ak admin --sk 12345678 \\
          -a app1 -s app1secret -t TopicTest=PUB
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 update -a app1 -s app1secret
    """
    config = PlainAccessConfig(
        access_key=opts.pop("access_key"),
        secret_key=opts.pop("secret_key"),
        white_remote_address=opts.pop("white"),
        admin=opts.pop("is_admin") and not opts.pop("no_admin"),
        default_topic_perm=opts.pop("topic_perm"),
        default_group_perm=opts.pop("group_perm"),
        topic_perms=_split(opts.pop("topic_perms")),
        group_perms=_split(opts.pop("group_perms")),
    )
    _change_on_brokers(
        ctx,
        opts,
        lambda admin, addr: admin.create_and_update_plain_access_config(addr, config),
        "create or update plain access config to {addr} success.",
    )


@click.command("deleteAclConfig")
@acl_options
@click.option("-a", "--accessKey", "--access-key", "access_key", required=True)
@admin_command
def delete_acl_config(ctx: AdminContext, access_key: str, **opts: Any) -> None:
    """Delete an ACL account from brokers.

    \b
    Example:
      rocketq admin deleteAclConfig -b 127.0.0.1:10911 --ak admin --sk 12345678 -a app1
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 delete -a app1
    """
    _change_on_brokers(
        ctx,
        opts,
        lambda admin, addr: admin.delete_plain_access_config(addr, access_key),
        "delete plain access config from {addr} success.",
    )


@click.command("updateGlobalWhiteAddr")
@acl_options
@click.option("-g", "--globalWhiteRemoteAddresses", "--global-white-addrs", "addrs", required=True)
@admin_command
def update_global_white_addr(ctx: AdminContext, addrs: str, **opts: Any) -> None:
    """Replace the brokers' globalWhiteRemoteAddresses.

    \b
    Example:
      rocketq admin updateGlobalWhiteAddr -b 127.0.0.1:10911 --ak admin --sk 12345678 -g 10.0.0.*
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 white -g 10.0.0.*
    """
    white = _split(addrs)
    _change_on_brokers(
        ctx,
        opts,
        lambda admin, addr: admin.update_global_white_addr_config(addr, white),
        "update global white remote addresses to {addr} success.",
    )


@click.command("clusterAclConfigVersion")
@acl_options
@admin_command
def cluster_acl_config_version(ctx: AdminContext, **opts: Any) -> None:
    """Each broker's ACL file version.

    \b
    Example:
      rocketq admin clusterAclConfigVersion -c DefaultCluster --ak admin --sk 12345678
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 version
    """
    done = _on_brokers(
        ctx, opts, lambda admin, addr: admin.examine_broker_cluster_acl_version_info(addr)
    )
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
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 list
    """
    done = _on_brokers(ctx, opts, lambda admin, addr: admin.get_broker_cluster_acl_config(addr))
    ctx.json({addr: body.to_json() for addr, body in done})


COMMANDS = [
    update_acl_config,
    delete_acl_config,
    update_global_white_addr,
    cluster_acl_config_version,
    get_access_config,
]

# ``rocketq acl <alias>`` -> the mqadmin command it runs
ALIASES = {
    "update": update_acl_config,
    "delete": delete_acl_config,
    "white": update_global_white_addr,
    "list": get_access_config,
    "version": cluster_acl_config_version,
}


class AclGroup(click.Group):
    """Runs a command with the group's ``-b``, ``--ak`` and ``--sk`` put before its own."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        given = [
            arg
            for flag, key in (("-b", "broker_addr"), ("--ak", "ak"), ("--sk", "sk"))
            if ctx.params.get(key)
            for arg in (flag, ctx.params[key])
        ]
        return name, command, [*given, *rest]


@click.group(cls=AclGroup)
@click.option("-b", "--broker-addr", default=None, help="broker host:port")
@click.option("--ak", envvar="ROCKETQ_ACCESS_KEY", default="", help="admin accessKey")
@click.option("--sk", envvar="ROCKETQ_SECRET_KEY", default="", help="admin secretKey")
def acl(broker_addr: str | None, ak: str, sk: str) -> None:
    """A broker's plain ACL (plain_acl.yml): mqadmin's ACL commands under short names.

    \b
    update  = updateAclConfig        delete  = deleteAclConfig
    white   = updateGlobalWhiteAddr  version = clusterAclConfigVersion
    list    = getAccessConfigSubCommand

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 update -a app1 -s s3cret -t T=PUB
    """


for _name, _command in ALIASES.items():
    acl.add_command(_command, _name)
