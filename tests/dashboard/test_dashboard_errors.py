"""The dashboard's error page names RocketMQ's response code or the refused address in words,
never a Python class."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request

import pytest

from rocketq.testing.cluster import Cluster
from rocketq.testing.dashboard import run_dashboard

PYTHON_CLASS = re.compile(r"\b[A-Z][A-Za-z]*(Error_?|Exception)\b")


def error_text(url: str) -> str:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=10).close()
    assert refused.value.code == 502
    page = refused.value.read().decode()
    found = re.search(r'<p class="error" id="error">([^<]*)</p>', page)
    assert found is not None, page
    assert not PYTHON_CLASS.search(found.group(1)), found.group(1)
    return found.group(1)


async def test_an_unknown_topic_shows_its_response_code(cluster: Cluster) -> None:
    async with run_dashboard(cluster.addr) as base:
        text = await asyncio.to_thread(error_text, f"{base}/topic?name=NoSuchTopic")
    assert text.startswith("TOPIC_NOT_EXIST: ")


async def test_an_unreachable_name_server_is_said_in_words() -> None:
    async with run_dashboard("127.0.0.1:1") as base:
        text = await asyncio.to_thread(error_text, f"{base}/cluster")
    assert text == "connect to 127.0.0.1:1 failed: connection refused"
