"""The dashboard refuses cross-site requests: a state-changing request needs the session's
token (a SameSite=Strict cookie echoed in the form) and, when the browser says where it
comes from (Origin, Sec-Fetch-Site), the dashboard's own origin. Plain HTTP, then a real
headless Chromium submitting a form from another site."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rocketq.testing.cluster import Cluster
from rocketq.testing.dashboard import run_dashboard
from tests.dashboard.chromium import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]


def post(url: str, form: dict[str, str], headers: dict[str, str]) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode()
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def get(url: str) -> tuple[str, str]:
    """The page and the session cookie it set (``name=value``)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        cookie = response.headers.get("set-cookie", "").split(";")[0]
        return response.read().decode(), cookie


async def test_a_cross_site_post_is_refused_and_creates_nothing(cluster: Cluster) -> None:
    async with run_dashboard(cluster.addr) as base:
        evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        form = {"topic": "EvilTopic", "queues": "1"}
        status, text = await asyncio.to_thread(post, f"{base}/topics", form, evil)
        assert status == 403, text
        assert "cross-site" in text
        status, _ = await asyncio.to_thread(post, f"{base}/topics", form, {})  # no token
        assert status == 403
        await asyncio.to_thread(get, f"{base}/topics?topic=EvilTopic&queues=1")  # GET: no change
        with pytest.raises(urllib.error.HTTPError, match="405"):
            await asyncio.to_thread(get, f"{base}/topic/send?topic=EvilTopic&body=x")
        page, cookie = await asyncio.to_thread(get, f"{base}/topics")
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        assert cookie.startswith("rocketq_csrf=")
        stolen = {**form, "csrf_token": token.group(1)}  # a token without its cookie
        status, _ = await asyncio.to_thread(post, f"{base}/topics", stolen, evil)
        assert status == 403
        assert cluster.broker.topic_config_manager.select_topic_config("EvilTopic") is None
        own = {"Cookie": cookie, "Origin": base, "Sec-Fetch-Site": "same-origin"}
        status, _ = await asyncio.to_thread(post, f"{base}/topics", stolen, own)
        assert status == 303
        assert cluster.broker.topic_config_manager.select_topic_config("EvilTopic") is not None


async def test_a_form_on_another_site_cannot_create_a_topic_in_the_browser(
    cluster: Cluster, tmp_path: Path
) -> None:
    playwright_api = pytest.importorskip("playwright.async_api")
    if not Path(CHROMIUM).exists():  # noqa: ASYNC240 -- one stat before the test
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    async with (
        run_dashboard(cluster.addr) as base,
        playwright_api.async_playwright() as pw,
    ):
        browser = await pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True
        )
        try:
            page = browser.pages[0] if browser.pages else await browser.new_page()
            await page.goto(f"{base}/topics")  # the operator has the dashboard open
            evil_page = (
                f'<form id="f" method="post" action="{base}/topics">'
                '<input name="topic" value="EvilTopic"><input name="queues" value="1">'
                "</form><script>document.getElementById('f').submit()</script>"
            )

            async def serve_evil(route: Any) -> None:
                await route.fulfill(status=200, content_type="text/html", body=evil_page)

            await page.route("http://evil.example/**", serve_evil)
            async with page.expect_response(f"{base}/topics") as answer:
                await page.goto("http://evil.example/")
            assert (await answer.value).status == 403
            await playwright_api.expect(page.locator("body")).to_contain_text("cross-site")
        finally:
            await browser.close()
    assert cluster.broker.topic_config_manager.select_topic_config("EvilTopic") is None
