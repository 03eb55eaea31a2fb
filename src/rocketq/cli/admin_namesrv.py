"""``rocketq admin`` name server commands: wipeWritePerm, addWritePerm, updateKvConfig,
deleteKvConfig (mqadmin's names and short options)."""

from __future__ import annotations

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command


def _perm_command(name: str, wipe: bool) -> click.Command:
    verb = "Remove" if wipe else "Give back"

    @click.command(name)
    @click.option("-b", "--brokerName", "broker_name", required=True)
    @admin_command
    def command(ctx: AdminContext, broker_name: str) -> None:
        async def call(admin: AsyncAdminClient) -> list[tuple[str, int]]:
            out = []
            for ns in admin.remoting.get_namesrv_addr_list():
                if wipe:
                    count = await admin.wipe_write_perm_of_broker(ns, broker_name)
                else:
                    count = await admin.add_write_perm_of_broker(ns, broker_name)
                out.append((ns, count))
            return out

        what = "wipe" if wipe else "add"
        for ns, count in ctx.run(call):
            ctx.done(
                f"{what} write perm of broker[{broker_name}] in name server[{ns}] OK, {count}",
                {"namesrv": ns, "topicCount": count},
            )

    command.help = (
        f"{verb} a broker's write permission in every name server's routes.\n\n"
        f"\b\nExample:\n  rocketq admin {name} -n 127.0.0.1:9876 -b broker-a"
    )
    return command


wipe_write_perm = _perm_command("wipeWritePerm", wipe=True)
add_write_perm = _perm_command("addWritePerm", wipe=False)


@click.command("updateKvConfig")
@click.option("-s", "--namespace", required=True)
@click.option("-k", "--key", required=True)
@click.option("-v", "--value", required=True)
@admin_command
def update_kv_config(ctx: AdminContext, namespace: str, key: str, value: str) -> None:
    """Set a KV config item on every name server.

    \b
    Example:
      rocketq admin updateKvConfig -n 127.0.0.1:9876 -s ORDER_TOPIC_CONFIG -k TopicA -v broker-a:4
    """
    ctx.run(lambda admin: admin.put_kv_config(namespace, key, value))
    ctx.done("update kv config in namespace success.")


@click.command("deleteKvConfig")
@click.option("-s", "--namespace", required=True)
@click.option("-k", "--key", required=True)
@admin_command
def delete_kv_config(ctx: AdminContext, namespace: str, key: str) -> None:
    """Delete a KV config item from every name server.

    \b
    Example:
      rocketq admin deleteKvConfig -n 127.0.0.1:9876 -s ORDER_TOPIC_CONFIG -k TopicA
    """
    ctx.run(lambda admin: admin.delete_kv_config(namespace, key))
    ctx.done("delete kv config from namespace success.")


COMMANDS = [wipe_write_perm, add_write_perm, update_kv_config, delete_kv_config]
