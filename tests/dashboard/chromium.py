"""Debian's headless Chromium as the dashboard's browser tests launch it (Playwright): the
launch arguments, the Playwright API (the tests skip where it is missing) and screenshots under
artifacts/dashboard/. The ``page`` fixture is in this folder's conftest."""

from __future__ import annotations

import contextlib
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

playwright_api = pytest.importorskip("playwright.async_api")
# generous: a shared 2-core machine under load; charts poll every 2 s
playwright_api.expect.set_options(timeout=30_000)

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"


async def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@contextlib.asynccontextmanager
async def browser_page(profile: Path) -> AsyncIterator[Any]:
    """One headless Chromium tab with an empty profile (for a module's shared browser; the
    ``page`` fixture opens one per test)."""
    if not Path(CHROMIUM).exists():  # noqa: ASYNC240 -- one stat before the test
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=LAUNCH_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            tab = browser.pages[0] if browser.pages else await browser.new_page()
            tab.set_default_timeout(20_000)
            yield tab
        finally:
            await browser.close()


def post_form(url: str, form: dict[str, str], headers: dict[str, str] | None = None) -> int:
    """POST ``form``; the final status code (a redirect is followed): for the guard tests."""
    data = urllib.parse.urlencode(form).encode()
    req = urllib.request.Request(url, data=data, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
