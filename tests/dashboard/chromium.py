"""Debian's headless Chromium as the dashboard's browser tests launch it (Playwright): the
launch arguments, the Playwright API (the tests skip where it is missing) and screenshots under
artifacts/dashboard/. The ``page`` fixture is in this folder's conftest."""

from __future__ import annotations

import shutil
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
