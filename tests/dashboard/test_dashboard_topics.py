"""The dashboard's topic pages in headless Chromium, one cluster and one browser for the
module: system topics apart, create, edit queue counts and perm, delete after a confirm page,
send a test message; every change read back with rocketq.admin, every state-changing form
behind the session token, GETs changing nothing."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from rocketq.admin import AsyncAdminClient
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.dashboard import run_dashboard
from tests.dashboard.chromium import browser_page, playwright_api, post_form, shot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(120),
    pytest.mark.asyncio(loop_scope="module"),
]
expect = playwright_api.expect


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, str, Any]]:
    tmp = tmp_path_factory.mktemp("topics")
    async with (
        run_cluster(tmp) as cluster,
        run_dashboard(cluster.addr) as base,
        browser_page(tmp / "profile") as page,
    ):
        yield cluster, base, page


async def _config(cluster: Cluster, topic: str) -> Any:
    async with AsyncAdminClient(cluster.addr) as admin:
        return await admin.examine_topic_config(cluster.broker_addr, topic)


async def test_create_lists_the_topic_apart_from_system_topics(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, p = site
    await p.goto(f"{base}/topics")
    await p.fill("#create-topic input[name=topic]", "UiTopic")
    await p.fill("#create-topic input[name=queues]", "2")
    await p.select_option("#create-topic select[name=perm]", "6")
    await p.click("#create-topic button")
    await p.wait_for_url(re.compile(r".*/topic\?name=UiTopic"))
    config = await _config(cluster, "UiTopic")
    assert (config.read_queue_nums, config.write_queue_nums, config.perm) == (2, 2, 6)
    await expect(p.locator("#status tr")).to_have_count(3)  # header + 2 queues

    await p.goto(f"{base}/topics")
    normal = p.locator("#topics")
    await expect(normal).to_contain_text("UiTopic")
    system = p.locator("#system-topics")
    await p.click("#system-topics summary")  # the section starts closed
    reserved = ("TBW102", "SCHEDULE_TOPIC_XXXX", "DefaultCluster", "broker-a", "SELF_TEST_TOPIC")
    for name in (*reserved, "DefaultCluster_REPLY_TOPIC"):
        await expect(system.get_by_role("link", name=name, exact=True)).to_have_count(1)
        await expect(normal.get_by_role("link", name=name, exact=True)).to_have_count(0)
    await shot(p, "topics")


async def test_edit_changes_queue_counts_and_perm_on_the_broker(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, p = site
    await cluster.create_topic("EditTopic", 4)
    await p.goto(f"{base}/topic?name=EditTopic")
    await p.fill("#edit input[name=read_queues]", "3")
    await p.fill("#edit input[name=write_queues]", "5")
    await p.select_option("#edit select[name=perm]", "4")
    await p.click("#edit button")
    await expect(p.locator("#updated")).to_contain_text("3 read / 5 write queues, perm 4")
    config = await _config(cluster, "EditTopic")
    assert (config.read_queue_nums, config.write_queue_nums, config.perm) == (3, 5, 4)
    cells = p.locator("#route tr").nth(1).locator("td")
    await expect(cells).to_have_text(["broker-a", re.compile("0="), "3", "5", "4", "NORMAL"])


async def test_send_a_test_message_and_view_it(site: tuple[Cluster, str, Any]) -> None:
    cluster, base, p = site
    await cluster.create_topic("SendTopic", 2)
    await p.goto(f"{base}/topic?name=SendTopic")
    await p.fill("#send input[name=tags]", "TagT")
    await p.fill("#send input[name=keys]", "key-t")
    await p.fill("#send textarea[name=body]", "hello from the topic page")
    await p.click("#send button")
    await expect(p.locator("#sent")).to_contain_text(
        re.compile(r"SEND_OK: [0-9A-F]{32} on broker-a")
    )
    await shot(p, "topic")
    await p.click("#sent a")
    await expect(p.locator("#body")).to_have_text("hello from the topic page")
    await expect(p.locator("#message")).to_contain_text("TagT")
    await expect(p.locator("#message")).to_contain_text("key-t")


async def test_delete_asks_first_and_then_removes_the_topic(site: tuple[Cluster, str, Any]) -> None:
    cluster, base, p = site
    await cluster.create_topic("DoomedTopic", 1)
    await p.goto(f"{base}/topic?name=DoomedTopic")
    await p.click("#delete")
    await expect(p.locator("#what")).to_contain_text("DoomedTopic is removed")
    assert await _config(cluster, "DoomedTopic") is not None  # the confirm page is a GET
    await p.click("#confirm button")
    await p.wait_for_url(re.compile(r".*/topics\?deleted=DoomedTopic"))
    await expect(p.locator("#deleted")).to_contain_text("DoomedTopic")
    await expect(p.locator("#topics")).not_to_contain_text("DoomedTopic")
    assert await _config(cluster, "DoomedTopic") is None
    async with AsyncAdminClient(cluster.addr) as admin:
        assert "DoomedTopic" not in await admin.fetch_all_topic_list()


async def test_topic_changes_need_the_session_token_and_gets_change_nothing(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, _ = site
    await cluster.create_topic("GuardedTopic", 2)
    forms = {
        "/topics": {"topic": "SneakyTopic", "queues": "1"},
        "/topic/update": {"topic": "GuardedTopic", "read_queues": "1", "write_queues": "1"},
        "/topic/delete": {"topic": "GuardedTopic"},
        "/topic/send": {"topic": "GuardedTopic", "body": "x"},
    }
    for path, form in forms.items():
        assert await asyncio.to_thread(post_form, base + path, form) == 403, path
    query = "topic=GuardedTopic&read_queues=1&write_queues=1&name=GuardedTopic"
    for path in ("/topic/delete", "/topics", "/topic"):
        await asyncio.to_thread(urllib.request.urlopen, f"{base}{path}?{query}", None, 10)
    config = await _config(cluster, "GuardedTopic")
    assert (config.read_queue_nums, config.write_queue_nums) == (2, 2)
    assert await _config(cluster, "SneakyTopic") is None
    async with AsyncAdminClient(cluster.addr) as admin:
        stats = await admin.examine_topic_stats("GuardedTopic")
    assert sum(o.max_offset for o in stats.offset_table.values()) == 0
