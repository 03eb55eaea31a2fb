"""``rocketq acl``: a broker's plain ACL accounts and white list (mqadmin's ACL commands).

Requests are signed with an admin account, from ``--ak``/``--sk`` or the environment
(``ROCKETQ_ACCESS_KEY``, ``ROCKETQ_SECRET_KEY``); the library calls are ``rocketq.admin.acl``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from rocketq.admin import acl as acl_admin
from rocketq.errors import RocketQError
from rocketq.remoting.acl import AclClientRPCHook
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.acl_bodies import PlainAccessConfig

T = TypeVar("T")


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _run(ctx: click.Context, call: Callable[[RemotingClient, str], Awaitable[T]]) -> T:
    opts: dict[str, Any] = ctx.obj
    if not opts["broker_addr"]:
        raise click.UsageError("Missing option '-b' / '--broker-addr'.")
    hook = AclClientRPCHook(opts["ak"], opts["sk"]) if opts["ak"] else None

    async def main() -> T:
        async with RemotingClient(rpc_hook=hook) as client:
            return await call(client, opts["broker_addr"])

    try:
        return asyncio.run(main())
    except RocketQError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
@click.option("-b", "--broker-addr", default=None, help="broker host:port (required)")
@click.option("--ak", envvar="ROCKETQ_ACCESS_KEY", default="", help="admin accessKey")
@click.option("--sk", envvar="ROCKETQ_SECRET_KEY", default="", help="admin secretKey")
@click.pass_context
def acl(ctx: click.Context, broker_addr: str | None, ak: str, sk: str) -> None:
    """Manage a broker's plain ACL (plain_acl.yml).

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 list
    """
    ctx.obj = {"broker_addr": broker_addr, "ak": ak, "sk": sk}


@acl.command("update")
@click.option("-a", "--access-key", required=True)
@click.option("-s", "--secret-key", required=True)
@click.option("-w", "--white-remote-address", default=None)
@click.option("--admin/--no-admin", default=False)
@click.option("-i", "--default-topic-perm", default=None, help="DENY, PUB, SUB or PUB|SUB")
@click.option("-u", "--default-group-perm", default=None, help="DENY, PUB, SUB or PUB|SUB")
@click.option("-t", "--topic-perms", default=None, help="topicA=PUB,topicB=SUB")
@click.option("-g", "--group-perms", default=None, help="groupA=SUB")
@click.pass_context
def update(ctx: click.Context, /, **opts: Any) -> None:
    """Create or change an account.

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 update -a app1 -s s3cret -t T=PUB
    """
    config = PlainAccessConfig(
        access_key=opts["access_key"],
        secret_key=opts["secret_key"],
        white_remote_address=opts["white_remote_address"],
        admin=opts["admin"],
        default_topic_perm=opts["default_topic_perm"],
        default_group_perm=opts["default_group_perm"],
        topic_perms=_split(opts["topic_perms"]),
        group_perms=_split(opts["group_perms"]),
    )
    _run(ctx, lambda c, addr: acl_admin.create_or_update_access_config(c, addr, config))
    click.echo(f"account {config.access_key} updated")


@acl.command("delete")
@click.option("-a", "--access-key", required=True)
@click.pass_context
def delete(ctx: click.Context, access_key: str) -> None:
    """Delete an account.

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 delete -a app1
    """
    _run(ctx, lambda c, addr: acl_admin.delete_access_config(c, addr, access_key))
    click.echo(f"account {access_key} deleted")


@acl.command("white")
@click.option("-g", "--global-white-addrs", required=True, help="10.0.0.*,192.168.1.1")
@click.pass_context
def white(ctx: click.Context, global_white_addrs: str) -> None:
    """Replace globalWhiteRemoteAddresses.

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 white -g '10.0.0.*'
    """
    addrs = _split(global_white_addrs)
    _run(ctx, lambda c, addr: acl_admin.update_global_white_addrs(c, addr, addrs))
    click.echo(f"globalWhiteRemoteAddresses: {addrs}")


@acl.command("list")
@click.pass_context
def list_accounts(ctx: click.Context) -> None:
    """Print the accounts (without secrets) and the white list as JSON.

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 list
    """
    body = _run(ctx, acl_admin.get_broker_cluster_acl_config)
    click.echo(json.dumps(body.to_json(), indent=2, sort_keys=True))


@acl.command("version")
@click.pass_context
def version(ctx: click.Context) -> None:
    """Print the ACL file's dataVersion.

    \b
    Example:
      rocketq acl -b 127.0.0.1:10911 --ak admin --sk 12345678 version
    """
    header, data_version = _run(ctx, acl_admin.get_broker_cluster_acl_info)
    click.echo(f"{header.broker_name} {header.broker_addr} {json.dumps(data_version)}")
