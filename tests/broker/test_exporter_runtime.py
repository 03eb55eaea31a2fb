"""GET_BROKER_RUNTIME_INFO as rocketmq-exporter reads it: the broker answers every key the
exporter's BrokerRuntimeStats parses, in a form it parses, and ``rocketmq_brokeruntime_*``
reads each key the way BrokerRuntimeStats does (golden strings in RocketMQ's formats)."""

from __future__ import annotations

from pathlib import Path

from rocketq.admin import AsyncAdminClient
from rocketq.broker.exporter_runtime import RUNTIME_LABELS, runtime_families
from rocketq.namesrv.server import start_namesrv
from rocketq.testing.broker import run_broker

# BrokerRuntimeStats(KVTable): Long.parseLong / Double.parseDouble of each of these
LONG_KEYS = (
    "msgPutTotalTodayNow",
    "msgGetTotalTodayNow",
    "msgPutTotalTodayMorning",
    "msgGetTotalTodayMorning",
    "msgPutTotalYesterdayMorning",
    "msgGetTotalYesterdayMorning",
    "sendThreadPoolQueueHeadWaitTimeMills",
    "queryThreadPoolQueueHeadWaitTimeMills",
    "pullThreadPoolQueueHeadWaitTimeMills",
    "queryThreadPoolQueueSize",
    "pullThreadPoolQueueSize",
    "sendThreadPoolQueueSize",
    "sendThreadPoolQueueCapacity",
    "pullThreadPoolQueueCapacity",
    "queryThreadPoolQueueCapacity",
    "bootTimestamp",
    "commitLogMinOffset",
    "commitLogMaxOffset",
    "dispatchMaxBuffer",
    "brokerVersion",
    "pageCacheLockTimeMills",
    "getMessageEntireTimeMax",
    "putMessageTimesTotal",
    "startAcceptSendRequestTimeStamp",
    "putMessageEntireTimeMax",
    "earliestMessageTimeStamp",
    "remainTransientStoreBufferNumbs",
    "dispatchBehindBytes",
    "putMessageSizeTotal",
)
DOUBLE_KEYS = ("consumeQueueDiskRatio", "commitLogDiskRatio", "putMessageAverageSize")
TPS_KEYS = ("putTps", "getMissTps", "getTransferedTps", "getTotalTps", "getFoundTps")


async def test_runtime_info_has_every_key_rocketmq_exporter_parses(tmp_path: Path) -> None:
    namesrv = await start_namesrv()
    try:
        async with (
            run_broker(tmp_path / "store", namesrv_addr=namesrv.addr) as broker,
            AsyncAdminClient(namesrv.addr) as admin,
        ):
            table = await admin.fetch_broker_runtime_stats(broker.broker_addr)
    finally:
        await namesrv.shutdown()
    for key in LONG_KEYS:
        int(table[key])  # Long.parseLong
    for key in DOUBLE_KEYS:
        float(table[key])
    for key in TPS_KEYS:
        assert len([float(rate) for rate in table[key].split()]) == 3
    float(table["remainHowManyDataToFlush"].split(" ")[0])
    words = table["commitLogDirCapacity"].split(" ")  # loadCommitLogDirCapacity's indexes
    assert (words[0], words[4]) == ("Total", "Free"), words
    assert float(words[2]) >= float(words[6]) >= 0
    assert table["putMessageDistributeTime"].startswith("[<=0ms]:0 [0~10ms]:0")
    assert (table["brokerVersionDesc"], table["brokerVersion"]) == ("V4_9_8", "409")
    assert table["runtime"].startswith("[ 0 days")


def _values(table: dict[str, str]) -> dict[str, tuple[dict[str, str], float]]:
    out = {}
    for family in runtime_families(table, "DefaultCluster", "10.0.0.1:10911"):
        [sample] = family.samples
        out[family.name] = (sample.labels, sample.value)
    return out


def test_brokeruntime_families_parse_the_keys_as_broker_runtime_stats_does() -> None:
    table = {
        "brokerVersionDesc": "V4_9_8",
        "brokerVersion": "409",
        "bootTimestamp": "1700000000000",
        "putTps": "12.50 3.00 0.40",
        "getTransferredTps": "7.00 1.00 0.10",  # 5.x's spelling, read as the exporter does
        "commitLogDirCapacity": "Total : 39.2 GiB, Free : 10.5 GiB.",
        "putMessageDistributeTime": "[<=0ms]:3 [0~10ms]:7 [10~50ms]:1 [10s~]:2",
        "remainHowManyDataToFlush": "1.5 KiB",
        "msgPutTotalTodayNow": "42",
        "commitLogDiskRatio": "0.25",
    }
    got = _values(table)
    labels, value = got["rocketmq_brokeruntime_put_tps10"]
    assert value == 12.5
    assert tuple(labels) == RUNTIME_LABELS
    assert (labels["brokerIP"], labels["broker_version"]) == ("10.0.0.1:10911", "409")
    assert (labels["des"], labels["boottime"]) == ("V4_9_8", "1700000000000")
    assert got["rocketmq_brokeruntime_put_tps600"][1] == 0.4
    assert got["rocketmq_brokeruntime_gettransfered_tps60"][1] == 1.0
    assert got["rocketmq_brokeruntime_commitlogdir_capacity_total"][1] == 39.2 * 1024**3
    assert got["rocketmq_brokeruntime_commitlogdir_capacity_free"][1] == 10.5 * 1024**3
    assert got["rocketmq_brokeruntime_pmdt_0ms"][1] == 3
    assert got["rocketmq_brokeruntime_pmdt_0to10ms"][1] == 7
    assert got["rocketmq_brokeruntime_pmdt_10stomore"][1] == 2
    assert got["rocketmq_brokeruntime_pmdt_1to2s"][1] == 0
    assert got["rocketmq_brokeruntime_remain_howmanydata_toflush"][1] == 1.5
    assert got["rocketmq_brokeruntime_msg_put_total_today_now"][1] == 42
    assert got["rocketmq_brokeruntime_commitlog_disk_ratio"][1] == 0.25
    assert got["rocketmq_brokeruntime_put_latency_99"][1] == -1  # absent: the exporter's -1
    assert len(got) == 63
