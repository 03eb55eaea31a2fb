"""Entry point of the `rocketq` command.

Sub-commands live one noun per module and are imported only when used, so that
`rocketq --help` stays fast and a command's heavy imports stay with it.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

# command name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "store": "rocketq.cli.store:store",
    "namesrv": "rocketq.cli.namesrv:namesrv",
    "broker": "rocketq.cli.broker:broker",
    "controller": "rocketq.cli.controller:controller",
    "server": "rocketq.cli.server:server",
    "proxy": "rocketq.cli.proxy:proxy",
    "acl": "rocketq.cli.acl:acl",
    "admin": "rocketq.cli.admin:admin",
    "dashboard": "rocketq.cli.dashboard:dashboard",
    "spark": "rocketq.cli.spark:spark",
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._available()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self._available():
            return found
        module_name, attr = COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    @staticmethod
    def _available() -> list[str]:
        names = []
        for name, target in COMMANDS.items():
            if importlib.util.find_spec(target.split(":")[0]) is not None:
                names.append(name)
        return names


@click.group(cls=LazyGroup)
@click.version_option(package_name="rocketq")
def cli() -> None:
    """rocketq: a RocketMQ-compatible message queue in Python.

    \b
    Example:
      rocketq server --store ~/store --dashboard-port 8080
    """
