"""The browser page the dashboard's browser tests drive: Debian's headless Chromium with an
empty profile, closed after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard.chromium import CHROMIUM, LAUNCH_ARGS, playwright_api


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[Any]:
    if not Path(CHROMIUM).exists():  # noqa: ASYNC240 -- one stat before the test
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # an empty --user-data-dir
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
