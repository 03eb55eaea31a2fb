"""The dashboard's consumer group pages in headless Chromium, one cluster and one browser for
the module: create, edit and delete a subscription group (read back with rocketq.admin), the
connections with version and subscription, the per-queue table, skip accumulated messages;
every state-changing form behind the session token, GETs changing nothing."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.testing.cluster import FAST_CLIENT, Cluster, collecting_consumer, run_cluster
from rocketq.testing.dashboard import run_dashboard
from rocketq.testing.wait import until
from tests.dashboard.chromium import browser_page, playwright_api, post_form, shot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(120),
    pytest.mark.asyncio(loop_scope="module"),
]
expect = playwright_api.expect


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, str, Any]]:
    tmp = tmp_path_factory.mktemp("groups")
    async with (
        run_cluster(tmp) as cluster,
        run_dashboard(cluster.addr) as base,
        browser_page(tmp / "profile") as page,
    ):
        yield cluster, base, page


async def _group(cluster: Cluster, name: str) -> SubscriptionGroupConfig | None:
    async with AsyncAdminClient(cluster.addr) as admin:
        wrapper = await admin.get_all_subscription_group(cluster.broker_addr)
    return wrapper.subscription_group_table.get(name)


async def test_create_edit_and_delete_a_subscription_group(site: tuple[Cluster, str, Any]) -> None:
    cluster, base, p = site
    await p.goto(f"{base}/groups")
    await expect(p.locator("#groups")).not_to_contain_text("TOOLS_CONSUMER")  # system: apart
    await p.click("#system-groups summary")
    await expect(p.locator("#system-groups")).to_contain_text("TOOLS_CONSUMER")
    await p.fill("#create-group input[name=group]", "UiSubGroup")
    await p.check("#create-group input[name=consume_message_orderly]")
    await p.fill("#create-group input[name=retry_max_times]", "5")
    await p.click("#create-group button")
    await p.wait_for_url(re.compile(r".*/group\?name=UiSubGroup"))
    config = await _group(cluster, "UiSubGroup")
    assert config is not None
    assert (config.consume_enable, config.orderly, config.retry_max_times) == (True, True, 5)

    await expect(p.locator("#edit input[name=retry_max_times]")).to_have_value("5")
    await p.uncheck("#edit input[name=consume_enable]")
    await p.fill("#edit input[name=retry_max_times]", "3")
    await p.fill("#edit input[name=retry_queue_nums]", "2")
    await p.click("#edit button")
    await expect(p.locator("#updated")).to_contain_text("saved on")
    config = await _group(cluster, "UiSubGroup")
    assert config is not None
    assert (config.consume_enable, config.orderly) == (False, True)
    assert (config.retry_max_times, config.retry_queue_nums) == (3, 2)

    await p.click("#delete")
    await expect(p.locator("#what")).to_contain_text("UiSubGroup is removed")
    assert await _group(cluster, "UiSubGroup") is not None  # the confirm page is a GET
    await p.click("#confirm button")
    await p.wait_for_url(re.compile(r".*/groups\?deleted=UiSubGroup"))
    await expect(p.locator("#groups")).not_to_contain_text("UiSubGroup")
    assert await _group(cluster, "UiSubGroup") is None


async def test_connections_progress_and_skip_accumulated(site: tuple[Cluster, str, Any]) -> None:
    cluster, base, p = site
    await cluster.create_topic("SkipTopic", 1)
    consumer, got = collecting_consumer("SkipGroup", cluster.addr, "SkipTopic")
    async with Producer("SkipProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(6):
            await producer.send(Message("SkipTopic", f"m{i}".encode()))
        await consumer.start()
        try:
            assert await until(lambda: cluster.committed("SkipGroup", "SkipTopic") == {0: 6}, 30)
            await p.goto(f"{base}/groups")
            await expect(p.locator("#groups")).to_contain_text(
                re.compile(r"SkipGroup\s*1\s*PUSH CLUSTERING")
            )
            await shot(p, "groups")
            await p.goto(f"{base}/group?name=SkipGroup")
            client = p.locator("#clients tr").nth(1).locator("td")
            await expect(client).to_have_text(
                [
                    re.compile("@"),
                    re.compile(r"127\.0\.0\.1:\d+"),
                    re.compile("[A-Z]+"),
                    re.compile(r"^V\d+_\d+_\d+$"),
                    "SkipTopic: TAG *",
                ]
            )
            await expect(p.locator("#progress tr").nth(1)).to_have_text(
                re.compile(r"SkipTopic\s*broker-a\s*0\s*6\s*6\s*0")
            )
            await shot(p, "group")
        finally:
            await consumer.shutdown()
        for i in range(5):  # piles up while nobody consumes
            await producer.send(Message("SkipTopic", f"late{i}".encode()))
    await cluster.dispatched()  # the lag is read from the consume queue once, at the page load
    await p.goto(f"{base}/group?name=SkipGroup")
    await expect(p.locator("#total-lag")).to_have_text("5")
    await p.click("#skip button")
    await expect(p.locator("#reset-result")).to_contain_text(
        re.compile(r"SkipTopic:broker-a:0\s*11")
    )
    await expect(p.locator("#total-lag")).to_have_text("0")
    assert cluster.committed("SkipGroup", "SkipTopic") == {0: 11}
    assert not any(m.body.startswith(b"late") for m in got)


async def test_group_changes_need_the_session_token_and_gets_change_nothing(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, _ = site
    async with AsyncAdminClient(cluster.addr) as admin:
        kept = SubscriptionGroupConfig(group_name="GuardedGroup", retry_max_times=7)
        await admin.create_and_update_subscription_group_config(cluster.broker_addr, kept)
    forms = {
        "/groups": {"group": "SneakyGroup", "cluster": "DefaultCluster"},
        "/group/update": {"group": "GuardedGroup", "retry_max_times": "1"},
        "/group/delete": {"group": "GuardedGroup"},
        "/group/reset": {"group": "GuardedGroup", "skip": "on"},
        "/group/resend": {"group": "GuardedGroup", "offset_id": "0" * 32},
    }
    for path, form in forms.items():
        assert await asyncio.to_thread(post_form, base + path, form) == 403, path
    for path in ("/group/delete", "/groups", "/group"):
        url = f"{base}{path}?group=GuardedGroup&name=GuardedGroup&retry_max_times=1"
        await asyncio.to_thread(urllib.request.urlopen, url, None, 10)
    config = await _group(cluster, "GuardedGroup")
    assert config is not None
    assert config.retry_max_times == 7
    assert await _group(cluster, "SneakyGroup") is None
