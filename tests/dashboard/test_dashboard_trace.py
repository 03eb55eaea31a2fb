"""The message page's trace panel in the browser: a message a traced producer sent and a
traced push consumer consumed shows its Pub and Sub rows (group, client, status, where it was
stored, retries); a message sent without tracing says how to get one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster, run_cluster
from rocketq.testing.dashboard import run_dashboard
from rocketq.testing.wait import until
from tests.dashboard.chromium import playwright_api, shot

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]


@pytest.fixture
async def trace_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_cluster(tmp_path / "c", trace_topic_enable=True) as running:
        yield running


async def _traced_message(cluster: Cluster) -> str:
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"}
    consumer = PushConsumer(
        "ui-trace-cg", namesrv_addr=cluster.addr, enable_msg_trace=True, **options
    )
    consumer.subscribe("UiTraceT", "*")
    consumer.register_message_listener(listener)
    await consumer.start()
    try:
        async with Producer(
            "ui-trace-pg", namesrv_addr=cluster.addr, enable_msg_trace=True, **FAST_CLIENT
        ) as producer:
            sent = await producer.send(Message("UiTraceT", b"traced in the browser"))
            await until(lambda: len(got) == 1, timeout_s=15)
    finally:
        await consumer.shutdown()  # flushes its trace records
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        while len(await admin.query_msg_trace_by_id(sent.msg_id)) < 3:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # the index is built after the put (reput)
    return sent.msg_id


async def test_message_page_shows_the_trace_of_a_traced_message(
    trace_cluster: Cluster, page: Any
) -> None:
    cluster = trace_cluster
    await cluster.create_topic("UiTraceT", 1)
    msg_id = await _traced_message(cluster)
    async with Producer("ui-plain-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        plain = await producer.send(Message("UiTraceT", b"not traced"))
    async with run_dashboard(cluster.addr) as base:
        await page.goto(f"{base}/message?topic=UiTraceT&id={msg_id}")
        rows = page.locator("#trace tr")
        await playwright_api.expect(rows).to_have_count(3)  # header, Pub, Sub
        pub = rows.nth(1)
        await playwright_api.expect(pub).to_contain_text("ui-trace-pg")
        await playwright_api.expect(pub).to_contain_text(cluster.broker_addr)
        await playwright_api.expect(pub).to_contain_text("success")
        sub = rows.nth(2)
        await playwright_api.expect(sub.locator("td").nth(0)).to_have_text("Sub")
        await playwright_api.expect(sub.locator("td").nth(1)).to_have_text("ui-trace-cg")
        await playwright_api.expect(sub.locator("td").nth(2)).to_have_text("127.0.0.1")
        await playwright_api.expect(sub.locator("td").nth(5)).to_have_text("success")
        await playwright_api.expect(sub.locator("td").nth(7)).to_have_text("0")
        await shot(page, "message-trace")
        await page.goto(f"{base}/message?topic=UiTraceT&id={plain.msg_id}")
        await playwright_api.expect(page.locator("#trace")).to_contain_text("enable_msg_trace")
