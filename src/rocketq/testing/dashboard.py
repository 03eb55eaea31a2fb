"""Serve the dashboard in-process on 127.0.0.1, port 0, for tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

from rocketq.dashboard import create_app


@contextlib.asynccontextmanager
async def run_dashboard(
    namesrv_addr: str, *, start_timeout_s: float = 30.0, **options: Any
) -> AsyncIterator[str]:
    """The dashboard on uvicorn in this loop; yields its base URL (``http://127.0.0.1:<port>``).
    ``options`` go to ``create_app``; the history is sampled every second unless
    ``history_step_s`` says otherwise (10 s in production)."""
    options.setdefault("history_step_s", 1.0)
    config = uvicorn.Config(
        create_app(namesrv_addr, **options),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    serving = asyncio.get_running_loop().create_task(server.serve())
    try:
        async with asyncio.timeout(start_timeout_s):
            while not server.started:
                if serving.done():
                    serving.result()  # raises why it stopped
                    raise RuntimeError("the dashboard stopped before it started")
                await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
