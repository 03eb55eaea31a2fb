"""BrokerStatsManager: windows of a StatsItem, the put latency distribution, the day roll,
and through a real broker: GET_BROKER_RUNTIME_INFO's totals and VIEW_BROKER_STATS_DATA."""

from __future__ import annotations

import datetime
import itertools
import time

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.broker.stats_item import StatsItem
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.errors import BrokerResponseError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.headers import ViewBrokerStatsDataRequestHeader
from rocketq.remoting.protocol.stats_bodies import BrokerStatsData
from rocketq.testing.cluster import FAST_CLIENT, Cluster, collecting_consumer
from rocketq.testing.wait import until


class Clock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


def test_stats_item_minute_window_forgets_what_is_older_than_a_minute() -> None:
    item = StatsItem("TOPIC_PUT_NUMS", "T", now_ms=0)
    item.add(100, 1)
    for second in range(10, 130, 10):
        item.sample(second * 1000)
    item.add(30, 3)
    minute = item.stats_in_minute(130_000)
    day = item.stats_in_day(130_000)
    assert (minute.sum, minute.times) == (30, 3)
    assert minute.avgpt == pytest.approx(10.0)
    assert minute.tps == pytest.approx(30 / 60, rel=0.2)
    assert day.sum == 130


def test_put_latency_lands_in_rocketmqs_buckets_and_keeps_the_maximum() -> None:
    stats = BrokerStatsManager("C", clock_ms=Clock(0))
    for ms in (0, 0.4, 3, 10, 49, 250, 12_000):
        stats.record_put_latency(ms)
    text = stats.runtime_info()["putMessageDistributeTime"]
    assert text.startswith("[<=0ms]:2 [0~10ms]:1 [10~50ms]:2 [50~100ms]:0 ")
    assert "[200~500ms]:1" in text
    assert text.endswith("[10s~]:1")
    assert stats.runtime_info()["putMessageEntireTimeMax"] == "12000"


def test_put_latencies_of_a_burst_are_the_figures_of_one_call_each() -> None:
    one, burst = (
        BrokerStatsManager("C", clock_ms=Clock(0)),
        BrokerStatsManager("C", clock_ms=Clock(0)),
    )
    seconds = [0.0, 0.0004, 0.003, 0.0101, 0.049, 0.25, 12.0, 0.0999]
    for s in seconds:
        one.record_put_latency(s * 1000)
    burst.record_put_latencies(seconds)
    assert burst.put_latency_counts == one.put_latency_counts
    assert burst.put_message_entire_time_max_ms == one.put_message_entire_time_max_ms == 12_000


def test_a_new_day_moves_todays_morning_totals_to_yesterday() -> None:
    start = datetime.datetime(2026, 5, 1, 23, 59, 0)
    clock = Clock(int(start.timestamp() * 1000))
    stats = BrokerStatsManager("C", clock_ms=clock)
    stats.record_put("T", 5, 500)
    stats.record_get("G", "T", 0, 2, 200, 2)
    clock.now_ms += 120_000  # past midnight
    stats.sample()
    stats.record_put("T", 1, 100)
    info = stats.runtime_info()
    assert info["msgPutTotalTodayMorning"] == "5"
    assert info["msgPutTotalYesterdayMorning"] == "0"
    assert info["msgPutTotalTodayNow"] == "6"
    assert info["msgGetTotalTodayMorning"] == "2"
    clock.now_ms += 86_400_000
    stats.sample()
    assert stats.runtime_info()["msgPutTotalYesterdayMorning"] == "5"


async def test_runtime_info_and_stats_data_count_what_producers_sent(cluster: Cluster) -> None:
    await cluster.create_topic("StatsTopic", 2)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(7):
            await producer.send(Message("StatsTopic", b"x" * (100 + i)))
    async with AsyncAdminClient(cluster.addr) as admin:
        info = await admin.fetch_broker_runtime_stats(cluster.broker.broker_addr)
        header = ViewBrokerStatsDataRequestHeader(
            stats_name="TOPIC_PUT_NUMS", stats_key="StatsTopic"
        )
        response = await admin.call(
            cluster.broker.broker_addr, RequestCode.VIEW_BROKER_STATS_DATA, header
        )
        missing = ViewBrokerStatsDataRequestHeader(stats_name="TOPIC_PUT_NUMS", stats_key="Nope")
        with pytest.raises(BrokerResponseError, match="not exist"):
            await admin.call(
                cluster.broker.broker_addr, RequestCode.VIEW_BROKER_STATS_DATA, missing
            )
    assert info["msgPutTotalTodayNow"] == "7"
    assert int(info["putMessageSizeTotal"]) > 7 * 100
    assert sum(int(part.split(":")[1]) for part in info["putMessageDistributeTime"].split()) == 7
    assert float(info["putTps"].split()[0]) > 0
    assert 0.0 < float(info["commitLogDiskRatio"]) < 1.0
    assert info["commitLogDirCapacity"].startswith("Total : ")
    assert 0 < int(info["earliestMessageTimeStamp"]) <= int(time.time() * 1000)
    data = BrokerStatsData.decode(response.body)
    assert (data.stats_minute.sum, data.stats_hour.sum, data.stats_day.sum) == (7, 7, 7)


async def test_group_gets_and_put_sizes_are_counted_per_minute_hour_and_day(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("StatsGet", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for _ in range(5):
            await producer.send(Message("StatsGet", b"y" * 200))
    consumer, got = collecting_consumer("StatsGroup", cluster.addr, "StatsGet")
    await consumer.start()
    try:
        assert await until(lambda: len(got) == 5, 30)
    finally:
        await consumer.shutdown()
    addr = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        put_size = await admin.view_broker_stats_data(addr, "TOPIC_PUT_SIZE", "StatsGet")
        gets = await admin.view_broker_stats_data(addr, "GROUP_GET_NUMS", "StatsGet@StatsGroup")
        get_size = await admin.view_broker_stats_data(addr, "GROUP_GET_SIZE", "StatsGet@StatsGroup")
        info = await admin.fetch_broker_runtime_stats(addr)
    for window in (put_size.stats_minute, put_size.stats_hour, put_size.stats_day):
        assert window.sum > 5 * 200  # the stored records' sizes: bodies plus headers
    assert (gets.stats_minute.sum, gets.stats_hour.sum, gets.stats_day.sum) == (5, 5, 5)
    assert get_size.stats_day.sum >= 5 * 200
    assert info["msgGetTotalTodayNow"] == "5"
    assert info["msgGetTotalTodayMorning"] == "0"
    assert info["msgPutTotalYesterdayMorning"] == "0"


def test_a_sample_visits_a_tenth_of_the_items_and_builds_only_due_snapshots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manager samples every second; 10,000 items each building a snapshot to compare
    took 35 ms of the loop each second, and 19 ms when all came due in one call
    (BENCHMARKS.md, issue 22)."""
    from rocketq.broker import stats_item

    built: list[int] = []
    real = stats_item.CallSnapshot

    def counting(timestamp_ms: int, value: int, times: int) -> stats_item.CallSnapshot:
        built.append(timestamp_ms)
        return real(timestamp_ms, value, times)

    clock = Clock(0)
    items = stats_item.StatsItemSet("TOPIC_PUT_NUMS", clock)
    for i in range(100):
        items.add_value(f"T{i}", 1)
    monkeypatch.setattr(stats_item, "CallSnapshot", counting)
    per_call = []
    for second in range(1, 31):
        clock.now_ms = second * 1000
        before = len(built)
        items.sample(clock.now_ms)
        per_call.append(len(built) - before)
    assert per_call[:9] == [0] * 9  # nothing due in the first 10 s
    assert max(per_call) == 10  # a tenth of the items a call, never all at once
    for i in range(100):
        item = items.get(f"T{i}")
        assert item is not None
        minute = [s.timestamp_ms for s in item._minute]
        assert 10_000 <= minute[1] < 20_000  # the first visit on or after its due time
        assert all(b - a >= 10_000 for a, b in itertools.pairwise(minute))
    items.add_value("T0", 5)
    t0 = items.get("T0")
    assert t0 is not None
    assert t0.stats_in_minute(30_000).sum == 6
