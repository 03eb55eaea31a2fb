"""The overview (the landing page) and the producers page in Debian's headless Chromium, on
one cluster: brokers with role and disk, the cluster's TPS history, the busiest topic and the
group with the largest lag, a producer group's connections; the history is the server's (kept
without a viewer, shared, and read back after the dashboard restarts)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.dashboard import run_dashboard
from rocketq.testing.wait import until
from tests.dashboard.chromium import playwright_api, shot

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TOPIC, GROUP, PRODUCER_GROUP = "OvTopic", "OvGroup", "OvProducer"
BUSY_TOPIC = "OvBusyTopic"  # sent to all along: the busiest topic


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


async def get_json(url: str) -> Any:
    """GET ``url`` off the event loop (the dashboard serves from this loop)."""
    return await asyncio.to_thread(_get_json, url)


async def wait_for_points(url: str, count: int, timeout_s: float) -> list[int]:
    async with asyncio.timeout(timeout_s):
        while len(times := (await get_json(url))["times"]) < count:  # noqa: ASYNC110 -- HTTP
            await asyncio.sleep(0.2)
    return list(times)


async def _lagging_group(cluster: Cluster, producer: Producer) -> None:
    """OvGroup consumes 5 messages, stops, and 7 more arrive: a lag of 7."""
    consumer = PushConsumer(
        GROUP,
        namesrv_addr=cluster.addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer.subscribe(TOPIC, "*")
    consumer.register_message_listener(listener)
    for i in range(5):
        await producer.send(Message(TOPIC, f"early-{i}".encode()))
    await consumer.start()
    try:
        assert await until(lambda: cluster.committed(GROUP, TOPIC) == {0: 5}, 30)
    finally:
        await consumer.shutdown()
    for i in range(7):
        await producer.send(Message(TOPIC, f"late-{i}".encode()))


async def test_overview_producers_and_history_that_survives_a_restart(
    cluster: Cluster, page: Any, tmp_path: Path
) -> None:
    p = page
    await cluster.create_topic(TOPIC, 1)
    await cluster.create_topic(BUSY_TOPIC, 2)
    data_path = tmp_path / "dashboard-data"
    async with Producer(PRODUCER_GROUP, namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await _lagging_group(cluster, producer)
        async with run_dashboard(cluster.addr, data_path=data_path) as base:
            stop = asyncio.Event()

            async def keep_sending() -> None:  # a steady put TPS while the sampler runs
                while not stop.is_set():
                    await producer.send(Message(BUSY_TOPIC, b"steady"))
                    await asyncio.sleep(0.05)

            sending = asyncio.create_task(keep_sending())
            try:
                url = f"{base}/api/history/topic?name={BUSY_TOPIC}"
                # sampled with nobody watching: points before any page is open
                await wait_for_points(url, 3, 30)
                await p.goto(base)
                await p.wait_for_url(re.compile(r".*/overview$"))
                brokers = p.locator("#brokers tr").nth(1)
                await playwright_api.expect(brokers).to_contain_text("broker-a")
                await playwright_api.expect(brokers.locator("td.role")).to_contain_text("MASTER")
                await playwright_api.expect(brokers.locator("td.disk")).to_have_text(
                    re.compile(r"^\d+\.\d %$")
                )
                chart = p.locator("canvas#cluster-tps")
                await playwright_api.expect(chart).to_have_attribute(
                    "data-points", re.compile(r"^([2-9]|\d\d+)$")
                )
                await p.reload()  # the top tables are rendered from the latest sample
                top = p.locator("#top-topics tr").nth(1)
                await playwright_api.expect(top).to_contain_text(BUSY_TOPIC)
                assert float(await top.locator("td").nth(1).inner_text()) > 0
                lag = p.locator("#top-lag tr").nth(1)
                await playwright_api.expect(lag).to_have_text(re.compile(rf"{GROUP}\s*7$"))
                await p.click(".ranges button[data-range='5m']")  # the fine tier here
                await playwright_api.expect(chart).to_have_attribute(
                    "data-chart", re.compile(r"range=5m")
                )
                await playwright_api.expect(chart).to_have_attribute(
                    "data-points", re.compile(r"^([5-9]|\d\d+)$")
                )
                await shot(p, "overview")
                cluster_tps = await get_json(f"{base}/api/history/cluster?range=5m")
                assert max(v or 0 for v in cluster_tps["series"]["put TPS"]) > 0

                await p.click("nav >> text=Producers")
                every = p.locator("#every-producer tr", has_text=PRODUCER_GROUP)
                await playwright_api.expect(every).to_have_count(1)  # GET_ALL_PRODUCER_INFO
                await playwright_api.expect(every.locator("td").nth(4)).to_have_text("PYTHON")
                await p.fill("#find-producers input[name=topic]", TOPIC)
                await p.fill("#find-producers input[name=group]", PRODUCER_GROUP)
                await p.click("#find-producers button")
                rows = p.locator("#connections tr")
                await playwright_api.expect(rows).to_have_count(2)  # header + our producer
                cells = rows.nth(1).locator("td")
                await playwright_api.expect(cells.nth(0)).to_have_text(re.compile(r"\S+@\S+"))
                await playwright_api.expect(cells.nth(1)).to_contain_text("127.0.0.1:")
                await playwright_api.expect(cells.nth(2)).to_have_text("PYTHON")
                await playwright_api.expect(cells.nth(3)).to_have_text("V4_9_8")
                await shot(p, "producers")
                await p.fill("#find-producers input[name=group]", "NoSuchProducer")
                await p.click("#find-producers button")
                await playwright_api.expect(p.locator("#connections")).to_contain_text(
                    "No producer of group NoSuchProducer"
                )
                await p.goto(f"{base}/topics")  # the all-topics chart reads the history too
                all_topics = p.locator("canvas#tps-all")
                await playwright_api.expect(all_topics).to_have_attribute(
                    "data-points", re.compile(r"^([2-9]|\d\d+)$")
                )
                assert await all_topics.get_attribute("data-error") is None
                busy = await get_json(f"{base}/api/history/topic?name={BUSY_TOPIC}&name={TOPIC}")
                assert set(busy["series"]) == {BUSY_TOPIC, TOPIC}
            finally:
                stop.set()
                await sending
            before = (await get_json(url))["times"]
        restarted_at_ms = time.time() * 1000
        assert (data_path / "history" / "fine.bin").exists()
        async with run_dashboard(cluster.addr, data_path=data_path) as base:
            after = await get_json(f"{base}/api/history/topic?name={BUSY_TOPIC}")
            kept = [t for t in after["times"] if t < restarted_at_ms]
            assert set(before) <= set(kept)  # every point from before the restart
            assert len(kept) >= 3
