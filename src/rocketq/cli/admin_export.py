"""``rocketq admin`` export commands: exportMetadata, exportConfigs and exportMetrics write
JSON files as mqadmin's ExportMetadataCommand, ExportConfigsCommand and ExportMetricsCommand do
(``topic.json``, ``subscriptionGroup.json`` or ``metadata.json``; ``configs.json``;
``metrics.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.common.clock import now_ms
from rocketq.common.topic import SCHEDULE_TOPIC, TRANS_HALF_TOPIC, is_system_topic
from rocketq.errors import RocketQError

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


@click.command("exportMetrics")
@click.option("-c", "--clusterName", "cluster", required=True)
@click.option("-f", "--filePath", "file_path", default=DEFAULT_FILE_PATH, show_default=True)
@admin_command
def export_metrics(ctx: AdminContext, cluster: str, file_path: str) -> None:
    """Write each master's TPS, 24-hour counts, disk ratios and sizes to metrics.json.

    \b
    Example:
      rocketq admin exportMetrics -n 127.0.0.1:9876 -c DefaultCluster -f /tmp/export
    """

    async def call(admin: AsyncAdminClient) -> dict[str, Any]:
        report = {}
        for name, addr in (await admin.master_addrs_of_cluster(cluster)).items():
            report[name] = await _broker_metrics(admin, addr)
        return {"evaluateReport": report, "totalData": _totals(report)}

    _write(ctx, Path(file_path) / "metrics.json", ctx.run(call))


async def _put_stats(admin: AsyncAdminClient, addr: str, topic: str) -> tuple[float, int]:
    """TOPIC_PUT_NUMS of ``topic``: the last minute's TPS and the day's sum (0 if never put)."""
    try:
        data = await admin.view_broker_stats_data(addr, "TOPIC_PUT_NUMS", topic)
    except RocketQError:
        return 0.0, 0
    return data.stats_minute.tps, data.stats_day.sum


async def _broker_metrics(admin: AsyncAdminClient, addr: str) -> dict[str, Any]:
    """ExportMetricsCommand's runtimeEnv, runtimeQuota and runtimeVersion of one broker."""
    kv = await admin.fetch_broker_runtime_stats(addr)
    props = await admin.get_broker_config(addr)
    topics = (await admin.get_all_topic_config(addr)).topic_config_table
    groups = (await admin.get_all_subscription_group(addr)).subscription_group_table
    trans_tps, trans_day = await _put_stats(admin, addr, TRANS_HALF_TOPIC)
    schedule_tps, schedule_day = await _put_stats(admin, addr, SCHEDULE_TOPIC)

    def first(key: str) -> float:
        return float((kv.get(key) or "0").split()[0])

    def diff(today: str, yesterday: str) -> int:
        return int(kv.get(today) or 0) - int(kv.get(yesterday) or 0)

    return {
        "runtimeEnv": {
            "cpuNum": props.get("clientCallbackExecutorThreads"),
            "totalMemKBytes": kv.get("totalMemKBytes"),
        },
        "runtimeQuota": {
            "diskRatio": {
                "commitLogDiskRatio": kv.get("commitLogDiskRatio"),
                "consumeQueueDiskRatio": kv.get("consumeQueueDiskRatio"),
            },
            "tps": {
                "normalInTps": first("putTps"),
                "normalOutTps": first("getTransferredTps"),
                "transInTps": trans_tps,
                "scheduleInTps": schedule_tps,
            },
            "oneDayNum": {
                "normalOneDayInNum": diff("msgPutTotalTodayMorning", "msgPutTotalYesterdayMorning"),
                "normalOneDayOutNum": diff(
                    "msgGetTotalTodayMorning", "msgGetTotalYesterdayMorning"
                ),
                "transOneDayInNum": trans_day,
                "scheduleOneDayInNum": schedule_day,
            },
            "messageAverageSize": kv.get("putMessageAverageSize"),
            "topicSize": sum(1 for t in topics if not is_system_topic(t)),
            "groupSize": len(groups),
        },
        "runtimeVersion": {"rocketmqVersion": kv.get("brokerVersionDesc")},
    }


def _totals(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The cluster's sums, under ExportMetricsCommand's names."""
    tps = {"totalNormalInTps": 0.0, "totalNormalOutTps": 0.0}
    tps |= {"totalTransInTps": 0.0, "totalScheduleInTps": 0.0}
    day = dict.fromkeys(
        ("normalOneDayInNum", "normalOneDayOutNum", "transOneDayInNum", "scheduleOneDayInNum"), 0
    )
    for broker in report.values():
        quota = broker["runtimeQuota"]
        for key in ("normalInTps", "normalOutTps", "transInTps", "scheduleInTps"):
            tps["total" + key[0].upper() + key[1:]] += quota["tps"][key]
        for key in day:
            day[key] += quota["oneDayNum"][key]
    return {"totalTps": tps, "totalOneDayNum": day}


COMMANDS = [export_metadata, export_configs, export_metrics]
