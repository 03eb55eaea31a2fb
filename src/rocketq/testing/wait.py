"""Waiting in tests without sleeping as synchronisation: poll a condition with a deadline.

``until`` / ``until_sync`` poll a predicate; ``collect`` / ``collect_sync`` call a pull
consumer's ``poll`` (which itself waits for messages) until enough items arrived.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


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
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


async def collect(
    poll: Callable[[], Awaitable[Sequence[T]]], count: int, timeout_s: float
) -> list[T]:
    """Call ``poll`` until ``count`` items came back or ``timeout_s`` passed; all it returned."""
    got: list[T] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        got.extend(await poll())
    return got


def collect_sync(poll: Callable[[], Sequence[T]], count: int, timeout_s: float) -> list[T]:
    """:func:`collect` for threads and synchronous tests."""
    got: list[T] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        got.extend(poll())
    return got
