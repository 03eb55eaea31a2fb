"""The dashboard in Debian's headless Chromium driven by Playwright: the daily flows of
rocketmq-dashboard users (cluster, create a topic, send a test message, a group's lag and
connections, reset by time, resend a DLQ message, find messages by topic, key and id), each
main page kept as a screenshot under artifacts/dashboard/."""

from __future__ import annotations

import re
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


async def test_topic_flow_create_send_watch_tps_and_find_the_message(
    cluster: Cluster, page: Any
) -> None:
    p = page
    async with run_dashboard(cluster.addr) as base:
        await p.goto(f"{base}/cluster")
        brokers = p.locator("#brokers")
        await playwright_api.expect(brokers).to_contain_text("broker-a")
        await playwright_api.expect(brokers).to_contain_text(cluster.broker.broker_addr)
        disk = brokers.locator("tr").nth(1).locator("td").nth(9)  # "Disk used"
        await playwright_api.expect(disk).to_have_text(re.compile(r"^\d+\.\d %$"))
        await shot(p, "cluster")
        await p.click(f"text={cluster.broker.broker_addr}")
        runtime = p.locator("#runtime")
        await playwright_api.expect(runtime).to_contain_text("msgPutTotalTodayNow")
        await playwright_api.expect(runtime).to_contain_text("commitLogDiskRatio")
        await playwright_api.expect(runtime).to_contain_text("commitLogDirCapacity")
        await shot(p, "broker")

        await p.goto(f"{base}/topics")
        await p.fill("#create-topic input[name=topic]", "UiTopic")
        await p.fill("#create-topic input[name=queues]", "2")
        await p.click("#create-topic button")
        await p.wait_for_url(re.compile(r".*/topic\?name=UiTopic"))
        status = p.locator("#status tr")
        await playwright_api.expect(status).to_have_count(3)  # header + 2 queues
        route = p.locator("#route tr").nth(1)
        await playwright_api.expect(route).to_contain_text("broker-a")
        await playwright_api.expect(route).to_contain_text(f"0={cluster.broker.broker_addr}")

        await p.fill("#send input[name=keys]", "ui-key")
        await p.fill("#send textarea[name=body]", "hello from the browser")
        await p.click("#send button")
        sent = p.locator("#sent")
        await playwright_api.expect(sent).to_contain_text("SEND_OK")
        msg_id = (await sent.inner_text()).split()[1]  # "SEND_OK: <msgId> on ..."
        async with Producer("UiProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            for i in range(20):
                await producer.send(Message("UiTopic", f"load-{i}".encode()))
        chart = p.locator("canvas#tps")
        await playwright_api.expect(chart).to_have_attribute(
            "data-points", re.compile(r"[2-9]|\d\d")
        )

        await p.goto(f"{base}/topics")
        await playwright_api.expect(p.locator("#topics")).to_contain_text("UiTopic")

        await p.goto(f"{base}/messages")
        await p.fill("#by-key input[name=topic]", "UiTopic")
        await p.fill("#by-key input[name=key]", "ui-key")
        await p.click("#by-key button")
        found = p.locator("#found tr")
        await playwright_api.expect(found).to_have_count(2)
        await playwright_api.expect(p.locator("#found")).to_contain_text("hello from the browser")
        await p.click("#found a")
        await playwright_api.expect(p.locator("#body")).to_have_text("hello from the browser")
        await playwright_api.expect(p.locator("#properties")).to_contain_text("UNIQ_KEY")

        await p.goto(f"{base}/messages")
        await p.fill("#by-topic input[name=topic]", "UiTopic")
        await p.fill("#by-topic input[name=begin]", "2000-01-01T00:00:00")
        await p.fill("#by-topic input[name=end]", "2100-01-01T00:00:00")
        await p.click("#by-topic button")
        await playwright_api.expect(p.locator("#found tr")).to_have_count(21)  # header + a page
        await playwright_api.expect(p.locator("#summary")).to_contain_text("21 found")
        await p.fill("#by-topic input[name=topic]", "UiTopic")
        await p.fill("#by-topic input[name=begin]", "2099-01-01T00:00:00")
        await p.click("#by-topic button")
        await playwright_api.expect(p.locator("#found")).to_contain_text("No message found.")

        await p.fill("#by-id input[name=topic]", "UiTopic")
        await p.fill("#by-id input[name=id]", msg_id)
        await p.click("#by-id button")
        await playwright_api.expect(p.locator("#found tr")).to_have_count(2)
        await playwright_api.expect(p.locator("#found")).to_contain_text("hello from the browser")

        await p.goto(f"{base}/topic?name=NoSuchTopic")
        await playwright_api.expect(p.locator("#error")).to_contain_text("NoSuchTopic")


async def test_group_flow_lag_connections_reset_and_dlq_resend(cluster: Cluster, page: Any) -> None:
    p = page
    await cluster.create_topic("UiGroupTopic", 1)
    async with Producer("UiProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(6):
            await producer.send(Message("UiGroupTopic", f"m{i}".encode(), keys=f"k{i}"))
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        if any(m.body == b"m5" for m in msgs):
            return ConsumeStatus.RECONSUME_LATER  # straight to the DLQ (max reconsume 0)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        "UiGroup",
        namesrv_addr=cluster.addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        max_reconsume_times=0,
        consume_message_batch_max_size=1,
        **FAST_CONSUMER,
    )
    consumer.subscribe("UiGroupTopic", "*")
    consumer.register_message_listener(listener)
    await consumer.start()
    try:
        assert await until(lambda: cluster.committed("UiGroup", "UiGroupTopic") == {0: 6}, 30)
        async with run_dashboard(cluster.addr) as base:
            await p.goto(f"{base}/groups")
            await playwright_api.expect(p.locator("#groups")).to_contain_text("UiGroup")
            await p.click("text=UiGroup")
            await playwright_api.expect(p.locator("#clients tr")).to_have_count(2)
            await playwright_api.expect(p.locator("#total-lag")).to_have_text("0")
            progress = p.locator("#progress tr").nth(1)  # lag per queue
            await playwright_api.expect(progress).to_have_text(
                re.compile(r"UiGroupTopic\s*broker-a\s*0\s*6\s*6\s*0")
            )
            dlq = p.locator("#dlq")
            await playwright_api.expect(dlq).to_contain_text("m5")
            await playwright_api.expect(dlq.locator("td").nth(2)).to_have_text("k5")
            chart = p.locator("canvas#lag")  # the server's samples: consume TPS and lag
            await playwright_api.expect(chart).to_have_attribute(
                "data-points", re.compile(r"^([2-9]|\d\d+)$")
            )
            url = "/api/history/group?name=UiGroup"
            lag = await p.evaluate(f"fetch('{url}').then((r) => r.json())")
            assert lag["series"]["lag (messages)"][-1] == 0

            await p.click("#dlq button")
            await playwright_api.expect(p.locator("#resent")).to_contain_text(
                "Resent to UiGroupTopic: SEND_OK"
            )
            await p.select_option("#reset select[name=topic]", "UiGroupTopic")
            await p.fill("#reset input[name=time]", "2000-01-01T00:00:00")
            await p.click("#reset button")
            reset = p.locator("#reset-result")
            await playwright_api.expect(reset).to_contain_text("broker-a:0")
            await shot(p, "group-reset")
        # consumed again from the start after the reset
        assert await until(lambda: sum(m.body == b"m0" for m in got) >= 2, 30)
    finally:
        await consumer.shutdown()
