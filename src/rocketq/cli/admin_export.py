"""``rocketq admin`` export commands: exportMetadata and exportConfigs write JSON files as
mqadmin's ExportMetadataCommand and ExportConfigsCommand do (``topic.json``,
``subscriptionGroup.json`` or ``metadata.json``; ``configs.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.clock import now_ms
from rocketq.common.topic import is_system_topic

DEFAULT_FILE_PATH = "/tmp/rocketmq/export"
#: the broker settings ExportConfigsCommand keeps (its needBrokerProprties)
EXPORTED_BROKER_KEYS = (
    "brokerClusterName",
    "brokerId",
    "brokerName",
    "brokerRole",
    "fileReservedTime",
    "filterServerNums",
    "flushDiskType",
    "maxMessageSize",
    "messageDelayLevel",
    "msgTraceTopicName",
    "slaveReadEnable",
    "traceOn",
    "traceTopicEnable",
    "useTLS",
    "autoCreateTopicEnable",
    "autoCreateSubscriptionGroup",
)


def _write(ctx: AdminContext, path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True))
    ctx.done(f"export {path} success", {"path": str(path)})


@click.command("exportMetadata")
@click.option("-c", "--clusterName", "cluster", default=None, help="Every master of it.")
@click.option("-b", "--brokerAddr", "broker", default=None, help="One broker.")
@click.option("-f", "--filePath", "file_path", default=DEFAULT_FILE_PATH, show_default=True)
@click.option("-t", "--topic", "topics_only", is_flag=True, help="Topics only (topic.json).")
@click.option("-g", "--subscriptionGroup", "groups_only", is_flag=True, help="Groups only.")
@click.option("-s", "--specialTopic", "special", is_flag=True, help="Include system topics.")
@admin_command
def export_metadata(
    ctx: AdminContext,
    cluster: str | None,
    broker: str | None,
    file_path: str,
    topics_only: bool,
    groups_only: bool,
    special: bool,
) -> None:
    """Write the topics and subscription groups of a broker or cluster to a JSON file.

    \b
    Example:
      rocketq admin exportMetadata -n 127.0.0.1:9876 -c DefaultCluster -f /tmp/export
    """
    if (cluster is None) == (broker is None):
        raise click.UsageError("give exactly one of -c/--clusterName or -b/--brokerAddr")

    async def call(admin: AsyncAdminClient) -> dict[str, dict[str, Any]]:
        addrs = (
            [broker]
            if broker
            else list((await admin.master_addrs_of_cluster(cluster or "")).values())
        )
        topics: dict[str, Any] = {}
        groups: dict[str, Any] = {}
        for addr in addrs:
            meta = await admin.export_metadata(addr)
            for name, config in meta["topicConfigTable"].items():
                if special or not is_system_topic(name):
                    _sum_into(topics, name, config, ("readQueueNums", "writeQueueNums"))
            for name, config in meta["subscriptionGroupTable"].items():
                _sum_into(groups, name, config, ("retryQueueNums",))
        return {"topicConfigTable": topics, "subscriptionGroupTable": groups}

    meta = ctx.run(call)
    result: dict[str, Any] = {}
    if topics_only:
        name, result["topicConfigTable"] = "topic.json", meta["topicConfigTable"]
    elif groups_only:
        name = "subscriptionGroup.json"
        result["subscriptionGroupTable"] = meta["subscriptionGroupTable"]
    else:
        name = "metadata.json"
        result.update(meta)
    result["exportTime"] = now_ms()
    _write(ctx, Path(file_path) / name, result)


def _sum_into(table: dict[str, Any], name: str, config: Any, counts: tuple[str, ...]) -> None:
    """As ExportMetadataCommand: a config on several brokers adds up their queue counts."""
    config = dict(config)
    if name in table:
        for key in counts:
            config[key] = config.get(key, 0) + table[name].get(key, 0)
    table[name] = config


@click.command("exportConfigs")
@click.option("-c", "--clusterName", "cluster", required=True)
@click.option("-f", "--filePath", "file_path", default=DEFAULT_FILE_PATH, show_default=True)
@admin_command
def export_configs(ctx: AdminContext, cluster: str, file_path: str) -> None:
    """Write the cluster's scale and its masters' main settings to configs.json.

    \b
    Example:
      rocketq admin exportConfigs -n 127.0.0.1:9876 -c DefaultCluster -f /tmp/export
    """

    async def call(admin: AsyncAdminClient) -> dict[str, Any]:
        info = await admin.examine_broker_cluster_info()
        names = sorted(info.cluster_addr_table.get(cluster) or ())
        if not names:
            raise click.ClickException(f"no cluster named {cluster}")
        configs: dict[str, dict[str, str]] = {}
        masters = slaves = 0
        for name in names:
            addrs = (
                info.broker_addr_table[name].broker_addrs if name in info.broker_addr_table else {}
            )
            slaves += sum(1 for broker_id in addrs if broker_id != 0)
            if 0 in addrs:
                masters += 1
                props = await admin.get_broker_config(addrs[0])
                configs[name] = {k: props[k] for k in EXPORTED_BROKER_KEYS if k in props}
        scale = {
            "namesrvSize": len(admin.remoting.get_namesrv_addr_list()),
            "masterBrokerSize": masters,
            "slaveBrokerSize": slaves,
        }
        return {"brokerConfigs": configs, "clusterScale": scale}

    _write(ctx, Path(file_path) / "configs.json", ctx.run(call))


COMMANDS = [export_metadata, export_configs]
