"""The dashboard's messages pages in headless Chromium, one cluster and one browser for the
module: search by topic over every queue, newest first, paged, with the count found (the
issue: the first 64 rows of the first queues); by time range; a message's consume status per
group (messageTrackDetail) and consuming it again on a chosen client (CONSUME_MESSAGE_DIRECTLY)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.testing.cluster import FAST_CLIENT, Cluster, collecting_consumer, run_cluster
from rocketq.testing.dashboard import run_dashboard
from rocketq.testing.wait import until
from tests.dashboard.chromium import browser_page, playwright_api, post_form, shot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(150),
    pytest.mark.asyncio(loop_scope="module"),
]
expect = playwright_api.expect


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, str, Any]]:
    tmp = tmp_path_factory.mktemp("messages")
    async with (
        run_cluster(tmp) as cluster,
        run_dashboard(cluster.addr) as base,
        browser_page(tmp / "profile") as page,
    ):
        yield cluster, base, page


async def _ids_on_page(page: Any) -> list[str]:
    links = page.locator("#found tr td:first-child a")
    return [
        str(href).split("=", 1)[1]
        for href in await links.evaluate_all("(els) => els.map((a) => a.getAttribute('href'))")
    ]


async def test_search_by_topic_pages_every_queue_newest_first_with_the_count(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, p = site
    await cluster.create_topic("PagedTopic", 4)
    async with Producer("PagedProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(30):
            await producer.send(Message("PagedTopic", f"early-{i}".encode()))
        split_ms = int(time.time() * 1000) + 1
        assert await until(lambda: time.time() * 1000 > split_ms, 5, step_s=0.002)
        for i in range(20):
            await producer.send(Message("PagedTopic", f"late-{i}".encode()))
    await cluster.dispatched()

    await p.goto(f"{base}/messages")
    await p.fill("#by-topic input[name=topic]", "PagedTopic")
    await p.click("#by-topic button")
    await expect(p.locator("#summary")).to_have_text("50 found; showing 1-20, newest first")
    await expect(p.locator("#found tr")).to_have_count(21)
    await expect(p.locator("#previous")).to_have_count(0)
    await shot(p, "messages")
    pages = [await _ids_on_page(p)]
    await p.click("#next")
    await expect(p.locator("#summary")).to_have_text("50 found; showing 21-40, newest first")
    pages.append(await _ids_on_page(p))
    await p.click("#next")
    await expect(p.locator("#summary")).to_have_text("50 found; showing 41-50, newest first")
    pages.append(await _ids_on_page(p))
    await expect(p.locator("#next")).to_have_count(0)
    await p.click("#previous")
    await expect(p.locator("#summary")).to_have_text("50 found; showing 21-40, newest first")
    assert await _ids_on_page(p) == pages[1]

    shown = [i for ids in pages for i in ids]
    assert [len(ids) for ids in pages] == [20, 20, 10]
    async with AsyncAdminClient(cluster.addr) as admin:
        msgs = [await admin.view_message(i) for i in shown]
    assert len({m.offset_msg_id for m in msgs}) == 50  # every message once
    assert {m.queue_id for m in msgs[:20]} == {0, 1, 2, 3}  # across every queue
    times = [m.store_timestamp for m in msgs]
    assert times == sorted(times, reverse=True)  # newest first across queues
    sent_order = [f"early-{i}" for i in range(30)] + [f"late-{i}" for i in range(20)]
    assert [m.body.decode() for m in msgs] == sent_order[::-1]  # one broker: commit log order

    await p.goto(f"{base}/messages?mode=topic&topic=PagedTopic&begin={split_ms}")
    await expect(p.locator("#summary")).to_have_text("20 found; showing 1-20, newest first")
    await expect(p.locator("#found")).not_to_contain_text("early-")
    await p.goto(f"{base}/messages?mode=topic&topic=PagedTopic&end={split_ms}")
    await expect(p.locator("#summary")).to_have_text("30 found; showing 1-20, newest first")
    await expect(p.locator("#found")).not_to_contain_text("late-")


async def test_a_message_shows_each_groups_consume_status_and_is_consumed_again(
    site: tuple[Cluster, str, Any],
) -> None:
    cluster, base, p = site
    await cluster.create_topic("TrackTopic", 1)
    async with Producer("TrackProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        sent = await producer.send(Message("TrackTopic", b"track me", tags="TagA"))
    done, done_got = collecting_consumer("TrackDone", cluster.addr, "TrackTopic")
    gone, _ = collecting_consumer("TrackGone", cluster.addr, "TrackTopic")
    filtered, _ = collecting_consumer("TrackFiltered", cluster.addr, "TrackTopic")
    filtered.subscribe("TrackTopic", "TagB")
    for consumer in (done, gone, filtered):
        await consumer.start()
    try:
        for group in ("TrackDone", "TrackGone", "TrackFiltered"):
            assert await until(lambda g=group: cluster.committed(g, "TrackTopic") == {0: 1}, 30)
        await gone.shutdown()

        await p.goto(f"{base}/messages?mode=id&topic=TrackTopic&id={sent.msg_id}")
        await p.click("#found a")
        await expect(p.locator("#body")).to_have_text("track me")
        tracks = p.locator("#tracks")
        await expect(tracks).to_contain_text(re.compile(r"TrackDone\s*CONSUMED\b"))
        await expect(tracks).to_contain_text(re.compile(r"TrackFiltered\s*CONSUMED_BUT_FILTERED"))
        await expect(tracks).to_contain_text(re.compile(r"TrackGone\s*NOT_ONLINE"))
        await shot(p, "message")

        before = sum(m.body == b"track me" for m in done_got)
        row = tracks.locator("tr", has_text="TrackDone")
        await row.locator("button").click()
        await expect(p.locator("#resent")).to_contain_text(
            re.compile(r"Consumed again by .+ of TrackDone: CR_SUCCESS")
        )
        assert sum(m.body == b"track me" for m in done_got) == before + 1
    finally:
        await done.shutdown()
        await filtered.shutdown()


async def test_consume_again_needs_the_session_token(site: tuple[Cluster, str, Any]) -> None:
    _, base, _ = site
    form = {"group": "TrackDone", "id": "0" * 32}
    assert await asyncio.to_thread(post_form, f"{base}/message/resend", form) == 403
