"""The dashboard's topic page shows each broker's ``message.type`` of the topic."""

from __future__ import annotations

import asyncio
import re
import urllib.request

from rocketq.admin import AsyncAdminClient
from rocketq.common.attribute import parse_to_map
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.cluster import Cluster
from rocketq.testing.dashboard import run_dashboard


def page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


async def test_the_topic_page_shows_the_message_type(cluster: Cluster) -> None:
    typed = TopicConfig(topic_name="Orders", attributes=parse_to_map("+message.type=FIFO"))
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.create_and_update_topic_config(cluster.broker_addr, typed)
    async with run_dashboard(cluster.addr) as base:
        html = await asyncio.to_thread(page, f"{base}/topic?name=Orders")
    assert re.search(r'<td>broker-a</td>.*<td class="type">FIFO</td>', html, re.S), html
