"""A controller's shutdown ends its tasks even when one swallowed a cancel: Python 3.11's
``asyncio.wait_for`` can return the inner result to a task cancelled at the same moment, and an
election then went on through its retries (a test's teardown waited 25-90 s)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.testing.controller_wire import ControllerGroup

pytestmark = pytest.mark.timeout(60)


async def test_shutdown_cancels_a_task_that_swallowed_its_first_cancel(tmp_path: Path) -> None:
    group = ControllerGroup(tmp_path, size=1)
    await group.start_all()
    leader = await group.leader()
    manager = group.managers[leader.self_id]
    swallowed = asyncio.Event()

    async def retrying() -> None:  # a cancel lost once, as wait_for's race loses it
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if swallowed.is_set():
                    raise
                swallowed.set()

    task = manager._spawn(retrying())
    await asyncio.sleep(0)  # the task runs to its first await
    try:
        # a shutdown that let the task live on would wait for its hour: the wait_for fails
        await asyncio.wait_for(manager.shutdown(), 10)
    finally:
        await group.stop_all()
    assert swallowed.is_set()
    assert task.cancelled()
