"""rocketmq-exporter's ``rocketmq_brokeruntime_*`` families, from this broker's
GET_BROKER_RUNTIME_INFO table read at scrape time.

rocketmq-exporter (RMQMetricsCollector.collectBrokerRuntimeStats) fetches that table from every
master and parses it with BrokerRuntimeStats; each family here is the same key parsed the same
way, with its labels ``cluster, brokerIP, brokerHost, des, boottime, broker_version`` (brokerIP
is the master's address, brokerHost is empty as the exporter leaves it). The TPS keys hold
"10s 60s 600s" rates; ``putMessageDistributeTime`` holds ``[<=0ms]:n [0~10ms]:n ...``;
``commitLogDirCapacity`` is "Total : 1.2 GiB, Free : 0.3 GiB." and is read back to bytes as
the exporter does (Utils.machineReadableByteCount); ``remainHowManyDataToFlush`` keeps only the
number of its human-readable size, as the exporter does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

RUNTIME_LABELS = ("cluster", "brokerIP", "brokerHost", "des", "boottime", "broker_version")

Reader = Callable[[Mapping[str, str]], float]


def _number(key: str, default: str = "0") -> Reader:
    return lambda table: float(table.get(key) or default)


def _tps(key: str, window: int) -> Reader:
    def read(table: Mapping[str, str]) -> float:
        text = table.get(key) or table.get(key.replace("Transfered", "Transferred")) or ""
        rates = text.split()
        return float(rates[window]) if len(rates) > window else 0.0

    return read


def _distribution(bucket: str) -> Reader:
    def read(table: Mapping[str, str]) -> float:
        for part in (table.get("putMessageDistributeTime") or "").split():
            label, _, count = part.partition(":")
            if label.strip("[]") == bucket:
                return float(count)
        return 0.0

    return read


def _capacity(which: str) -> Reader:
    """ "Total : 1.2 GiB, Free : 0.3 GiB." -> bytes of ``which`` (Total or Free)."""

    def read(table: Mapping[str, str]) -> float:
        words = (table.get("commitLogDirCapacity") or "").replace(",", "").rstrip(".").split()
        if which not in words or len(words) < words.index(which) + 4:
            return 0.0
        at = words.index(which)
        value, unit = float(words[at + 2]), words[at + 3]
        return value if unit == "B" else value * 1024.0 ** ("KMGTPE".index(unit[0]) + 1)

    return read


def _first_word(key: str) -> Reader:
    return lambda table: float((table.get(key) or "0").split()[0])


_TPS = {
    "getfound": "getFoundTps",
    "gettotal": "getTotalTps",
    "gettransfered": "getTransferedTps",
    "getmiss": "getMissTps",
    "put": "putTps",
}
_PMDT = {
    "0ms": "<=0ms",
    "0to10ms": "0~10ms",
    "10to50ms": "10~50ms",
    "50to100ms": "50~100ms",
    "100to200ms": "100~200ms",
    "200to500ms": "200~500ms",
    "500to1s": "500ms~1s",
    "1to2s": "1~2s",
    "2to3s": "2~3s",
    "3to4s": "3~4s",
    "4to5s": "4~5s",
    "5to10s": "5~10s",
    "10stomore": "10s~",
}
# family suffix -> the key it reads (RMQMetricsCollector's names, BrokerRuntimeStats' keys)
_PLAIN = {
    "msg_put_total_today_now": "msgPutTotalTodayNow",
    "msg_gettotal_today_now": "msgGetTotalTodayNow",
    "msg_puttotal_todaymorning": "msgPutTotalTodayMorning",
    "msg_gettotal_todaymorning": "msgGetTotalTodayMorning",
    "msg_puttotal_yesterdaymorning": "msgPutTotalYesterdayMorning",
    "msg_gettotal_yesterdaymorning": "msgGetTotalYesterdayMorning",
    "dispatch_behind_bytes": "dispatchBehindBytes",
    "put_message_size_total": "putMessageSizeTotal",
    "put_message_average_size": "putMessageAverageSize",
    "remain_transientstore_buffer_numbs": "remainTransientStoreBufferNumbs",
    "earliest_message_timestamp": "earliestMessageTimeStamp",
    "putmessage_entire_time_max": "putMessageEntireTimeMax",
    "start_accept_sendrequest_time": "startAcceptSendRequestTimeStamp",
    "putmessage_times_total": "putMessageTimesTotal",
    "getmessage_entire_time_max": "getMessageEntireTimeMax",
    "pagecache_lock_time_mills": "pageCacheLockTimeMills",
    "commitlog_disk_ratio": "commitLogDiskRatio",
    "consumequeue_disk_ratio": "consumeQueueDiskRatio",
    "dispatch_maxbuffer": "dispatchMaxBuffer",
    "commitlog_maxoffset": "commitLogMaxOffset",
    "commitlog_minoffset": "commitLogMinOffset",
    "send_threadpool_queue_size": "sendThreadPoolQueueSize",
    "query_threadpool_queue_capacity": "queryThreadPoolQueueCapacity",
    "pull_threadpoolqueue_capacity": "pullThreadPoolQueueCapacity",
    "send_threadpoolqueue_capacity": "sendThreadPoolQueueCapacity",
    "pull_threadpoolqueue_size": "pullThreadPoolQueueSize",
    "query_threadpoolqueue_size": "queryThreadPoolQueueSize",
    "pull_threadpoolqueue_headwait_timemills": "pullThreadPoolQueueHeadWaitTimeMills",
    "query_threadpoolqueue_headwait_timemills": "queryThreadPoolQueueHeadWaitTimeMills",
    "send_threadpoolqueue_headwait_timemills": "sendThreadPoolQueueHeadWaitTimeMills",
}


def _readers() -> dict[str, Reader]:
    readers: dict[str, Reader] = {name: _number(key) for name, key in _PLAIN.items()}
    for name, key in _TPS.items():
        for index, window in enumerate((10, 60, 600)):
            readers[f"{name}_tps{window}"] = _tps(key, index)
    for name, bucket in _PMDT.items():
        readers[f"pmdt_{name}"] = _distribution(bucket)
    readers["commitlogdir_capacity_free"] = _capacity("Free")
    readers["commitlogdir_capacity_total"] = _capacity("Total")
    readers["remain_howmanydata_toflush"] = _first_word("remainHowManyDataToFlush")
    readers["put_latency_99"] = _number("putLatency99", "-1")
    readers["put_latency_999"] = _number("putLatency999", "-1")
    return readers


READERS = _readers()


def runtime_families(table: Mapping[str, str], cluster: str, broker_addr: str) -> Iterator[Metric]:
    """One gauge per ``rocketmq_brokeruntime_*`` name, one sample: this broker."""
    labels = [
        cluster,
        broker_addr,
        "",
        table.get("brokerVersionDesc", ""),
        table.get("bootTimestamp", "0"),
        table.get("brokerVersion", "0"),
    ]
    for name, read in READERS.items():
        family = GaugeMetricFamily(
            f"rocketmq_brokeruntime_{name}",
            f"GET_BROKER_RUNTIME_INFO, as rocketmq-exporter reads it ({name})",
            labels=RUNTIME_LABELS,
        )
        family.add_metric(labels, read(table))
        yield family
