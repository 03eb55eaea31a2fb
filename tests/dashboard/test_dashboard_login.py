"""``--login-required`` in Debian's headless Chromium against a broker with ACL on: the users of
users.properties log in, a normal user only reads, an admin changes things, logout ends the
session; the dashboard signs its requests with its own AK/SK (without them the broker refuses
the same change)."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rocketq.testing.acl import ADMIN, AclCluster
from rocketq.testing.dashboard import run_dashboard
from tests.dashboard.chromium import playwright_api, shot

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def log_in(p: Any, user: str, password: str) -> None:
    await p.fill("#login input[name=username]", user)
    await p.fill("#login input[name=password]", password)
    await p.click("#login button")


async def create_topic(p: Any, base: str, name: str) -> None:
    await p.goto(f"{base}/topics")
    await p.fill("#create-topic input[name=topic]", name)
    await p.fill("#create-topic input[name=queues]", "1")
    await p.click("#create-topic button")


async def test_login_roles_logout_and_the_dashboards_own_acl_account(
    acl_cluster: AclCluster, page: Any, tmp_path: Path
) -> None:
    p, broker = page, acl_cluster.broker
    data_path = tmp_path / "dashboard-data"
    data_path.mkdir()
    (data_path / "users.properties").write_text(
        "# user=password,role (1: admin)\nboss=boss-pw,1\nviewer=view-pw\n", encoding="utf-8"
    )
    account = {"access_key": ADMIN[0], "secret_key": ADMIN[1]}
    async with run_dashboard(
        acl_cluster.addr, data_path=data_path, login_required=True, **account
    ) as base:
        await p.goto(f"{base}/topics")
        await p.wait_for_url(re.compile(r".*/login\?next=/topics$"))
        assert await asyncio.to_thread(status_of, f"{base}/api/history/cluster") == 401
        await log_in(p, "viewer", "wrong")
        await playwright_api.expect(p.locator("#login-error")).to_contain_text("wrong")
        await shot(p, "login")

        await log_in(p, "viewer", "view-pw")
        await p.wait_for_url(re.compile(r".*/topics$"))  # back where the user was going
        await playwright_api.expect(p.locator("#logout")).to_contain_text("viewer (normal)")
        await create_topic(p, base, "ViewerTopic")
        await playwright_api.expect(p.locator("#error")).to_contain_text("read-only")
        assert broker.topic_config_manager.select_topic_config("ViewerTopic") is None

        await p.click("#logout button")
        await p.wait_for_url(re.compile(r".*/login$"))
        await p.goto(f"{base}/overview")
        await p.wait_for_url(re.compile(r".*/login\?next=/overview$"))  # the session ended
        await log_in(p, "boss", "boss-pw")
        await p.wait_for_url(re.compile(r".*/overview$"))
        await create_topic(p, base, "BossTopic")  # signed with the dashboard's admin AK/SK
        await p.wait_for_url(re.compile(r".*/topic\?name=BossTopic"))
        assert broker.topic_config_manager.select_topic_config("BossTopic") is not None

    async with run_dashboard(acl_cluster.addr) as base:  # no account: the broker refuses
        await create_topic(p, base, "UnsignedTopic")
        await playwright_api.expect(p.locator("#error")).to_be_visible()
        assert broker.topic_config_manager.select_topic_config("UnsignedTopic") is None
