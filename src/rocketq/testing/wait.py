"""Waiting in tests without sleeping as synchronisation: poll a condition with a deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds or ``timeout_s`` passes; returns the last answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(step_s)
    return predicate()


def until_sync(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.01) -> bool:
    """:func:`until` for threads and synchronous tests."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()
