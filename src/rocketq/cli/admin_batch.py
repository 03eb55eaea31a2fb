"""``rocketq admin`` batch commands: updateTopicList and updateSubGroupList create or change
every topic or subscription group of a JSON file (a list of RocketMQ's TopicConfig or
SubscriptionGroupConfig objects, as mqadmin's UpdateTopicListSubCommand and
UpdateSubGroupListSubCommand read) on one broker or every master of a cluster."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rocketq.admin import AsyncAdminClient, SubscriptionGroupConfig, TopicConfig
from rocketq.cli.admin_broker import _broker_addrs
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.remoting.protocol.json_body import from_json

T = TypeVar("T")


def _read_list(path: str, cls: type[T]) -> list[T]:
    """The file's JSON array as ``cls`` objects; a clear error for a file that is not one."""
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="-f") from exc
    if not isinstance(items, list):
        raise click.BadParameter(f"{path} is no JSON array of configs", param_hint="-f")
    try:
        return [from_json(cls, item) for item in items]
    except (KeyError, TypeError, ValueError) as exc:
        raise click.BadParameter(f"{path}: not a {cls.__name__} list ({exc})") from exc


def _submit(
    ctx: AdminContext,
    cluster: str | None,
    broker: str | None,
    submit: Callable[[AsyncAdminClient, str], Awaitable[None]],
    what: str,
) -> None:
    async def call(admin: AsyncAdminClient) -> list[str]:
        addrs = await _broker_addrs(admin, cluster, broker)
        for addr in addrs:
            await submit(admin, addr)
        return addrs

    for addr in ctx.run(call):
        ctx.done(f"submit batch of {what} config to {addr} success.", {"broker": addr})


def _batch_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in (
        click.option("-f", "--filename", "file_name", required=True, help="A JSON array."),
        click.option("-c", "--clusterName", "cluster", default=None, help="Every master of it."),
        click.option("-b", "--brokerAddr", "broker", default=None, help="One broker."),
    ):
        func = option(func)
    return func


@click.command("updateTopicList")
@_batch_options
@admin_command
def update_topic_list(
    ctx: AdminContext, file_name: str, cluster: str | None, broker: str | None
) -> None:
    """Create or change every topic of a JSON file of topic configs.

    \b
    Example:
      rocketq admin updateTopicList -n 127.0.0.1:9876 -c DefaultCluster -f topics.json
    """
    configs = _read_list(file_name, TopicConfig)
    _submit(
        ctx,
        cluster,
        broker,
        lambda admin, addr: admin.create_and_update_topic_config_list(addr, configs),
        "topic",
    )


@click.command("updateSubGroupList")
@_batch_options
@admin_command
def update_sub_group_list(
    ctx: AdminContext, file_name: str, cluster: str | None, broker: str | None
) -> None:
    """Create or change every subscription group of a JSON file of group configs.

    \b
    Example:
      rocketq admin updateSubGroupList -n 127.0.0.1:9876 -b 127.0.0.1:10911 -f groups.json
    """
    configs = _read_list(file_name, SubscriptionGroupConfig)
    _submit(
        ctx,
        cluster,
        broker,
        lambda admin, addr: admin.create_and_update_subscription_group_config_list(addr, configs),
        "subscription group",
    )


COMMANDS = [update_topic_list, update_sub_group_list]
