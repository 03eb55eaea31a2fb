"""Run ``cpp_driver.py`` in a subprocess with a deadline; collect its JSON lines.

The native client never runs in the pytest process. Each run gets its own HOME (the client
writes logs and broadcast offsets under it) and is killed by PID when the deadline passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).with_name("cpp_driver.py")


@dataclass
class DriverRun:
    proc: asyncio.subprocess.Process
    events: list[dict[str, Any]] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None

    def messages(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == "msg"]

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            self.events.append(event)
            if event.get("event") == "started":
                self.started.set()

    async def wait(self, timeout_s: float) -> list[dict[str, Any]]:
        """Wait for the process to exit; kill it by PID at the deadline."""
        try:
            await asyncio.wait_for(self.proc.wait(), timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        if self.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.reader, 5.0)
        return self.events

    async def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()


async def start_driver(home: Path, *args: str) -> DriverRun:
    home.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 -- one mkdir before the driver starts
    env = dict(os.environ, HOME=str(home), PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(DRIVER),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    run = DriverRun(proc)
    run.reader = asyncio.get_running_loop().create_task(run._read())
    return run


async def run_driver(home: Path, timeout_s: float, *args: str) -> list[dict[str, Any]]:
    run = await start_driver(home, *args)
    try:
        return await run.wait(timeout_s)
    finally:
        await run.kill()
