"""The overview of a broker group in controller mode (a controller, a master and a slave): each
broker's epoch (its GET_BROKER_EPOCH_CACHE) and whether the controller holds it in the
SyncStateSet, in Debian's headless Chromium."""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Any

import pytest

from rocketq.testing.broker import run_namesrv
from rocketq.testing.controller_mode import manager, run_controller_mode_broker
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.dashboard import run_dashboard
from rocketq.testing.wait import until
from tests.dashboard.chromium import playwright_api, shot

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


async def test_the_overview_shows_each_brokers_epoch_and_in_sync_state(
    tmp_path: Path, page: Any
) -> None:
    p = page
    controllers = ControllerGroup(tmp_path / "controller", size=1)
    await controllers.start_all()
    try:
        leader = await controllers.leader()
        async with run_namesrv() as ns, contextlib.AsyncExitStack() as stack:
            brokers = [
                await stack.enter_async_context(
                    run_controller_mode_broker(tmp_path / f"b{i}", ns.addr, [leader.addr])
                )
                for i in range(2)
            ]
            assert await until(lambda: sum(manager(b).is_master for b in brokers) == 1, 20)
            master = next(b for b in brokers if manager(b).is_master)
            assert await until(lambda: len(manager(master).sync_state_set) == 2, 20)
            slave = next(b for b in brokers if b is not master)
            async with run_dashboard(ns.addr) as base:
                table = p.locator("#brokers")
                async with asyncio.timeout(30):  # until both have registered their new roles
                    # and the slave has its epoch (it learns the list in the HA handshake,
                    # a moment after the controller counts it in sync)
                    while (
                        await table.locator("td.insync", has_text="yes").count() != 2
                        or await table.locator("td.epoch", has_text=re.compile(r"^0$")).count()
                    ):
                        await p.goto(f"{base}/overview")
                await playwright_api.expect(table.locator("th")).to_contain_text(
                    ["Epoch", "In sync"]
                )
                rows = table.locator("tr")
                await playwright_api.expect(rows).to_have_count(3)  # header, master, slave
                master_row = table.locator("tr", has_text=master.broker_addr)
                slave_row = table.locator("tr", has_text=slave.broker_addr)
                await playwright_api.expect(master_row.locator("td.role")).to_contain_text("MASTER")
                await playwright_api.expect(slave_row.locator("td.role")).to_contain_text("SLAVE")
                for row in (master_row, slave_row):
                    await playwright_api.expect(row.locator("td.epoch")).to_have_text(
                        re.compile(r"^[1-9]\d*$")
                    )
                    await playwright_api.expect(row.locator("td.insync")).to_have_text("yes")
                await shot(p, "overview-controller")
    finally:
        await controllers.stop_all()
