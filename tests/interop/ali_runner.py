"""Run ``js/ali_driver.js`` (ali-ons 3.12.0 under node) with a deadline; collect its JSON lines.

``make test`` installs ali-ons into ``tests/interop/js/node_modules`` (npm, pinned in
``js/package.json``). Each run gets its own HOME and is killed by PID at its deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.interop.cpp_runner import DriverRun

JS_DIR = Path(__file__).with_name("js")
DRIVER = JS_DIR / "ali_driver.js"
ALI_ONS_VERSION = "3.12.0"


def ali_ons_missing() -> str | None:
    """Why the ali-ons tests cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (make test installs it)"
    package = JS_DIR / "node_modules" / "ali-ons" / "package.json"
    if not package.exists():
        return "ali-ons is not installed (make test runs npm install in tests/interop/js)"
    version = json.loads(package.read_text())["version"]
    if version != ALI_ONS_VERSION:
        return f"ali-ons {version} is installed, the tests need {ALI_ONS_VERSION}"
    return None


async def start_ali(home: Path, *args: str) -> DriverRun:
    home.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 -- one mkdir before the driver starts
    node = shutil.which("node")
    assert node is not None
    proc = await asyncio.create_subprocess_exec(
        node,
        str(DRIVER),
        *args,
        cwd=str(JS_DIR),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=dict(os.environ, HOME=str(home)),
    )
    run = DriverRun(proc)
    run.reader = asyncio.get_running_loop().create_task(run._read())
    return run


async def run_ali(home: Path, timeout_s: float, *args: str) -> list[dict[str, Any]]:
    run = await start_ali(home, *args)
    try:
        return await run.wait(timeout_s)
    finally:
        await run.kill()
