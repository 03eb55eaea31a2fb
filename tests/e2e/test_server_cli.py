"""``rocketq server`` as a real process: boots, serves, and shuts down cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import pytest

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codes import RequestCode, ResponseCode
from tests.e2e.wire import request, send_request

pytestmark = pytest.mark.e2e
SERVER = "import sys; from rocketq.cli.main import cli; sys.exit(cli())"


async def read_until(stream: asyncio.StreamReader, pattern: str, timeout_s: float) -> re.Match[str]:
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError(f"process ended before printing {pattern!r}")
            found = re.search(pattern, line)
            if found is not None:
                return found


async def test_server_boots_serves_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    store = tmp_path / "store"
    args = [
        "server",
        "--store",
        str(store),
        "--namesrv-port",
        "0",
        "--broker-port",
        "0",
        "--host",
        "127.0.0.1",
    ]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVER,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        ns_port = int(
            (await read_until(proc.stdout, r"name server listening on .*:(\d+)", 30)).group(1)
        )
        broker_addr = (await read_until(proc.stdout, r"listening on (127\.0\.0\.1:\d+)", 30)).group(
            1
        )
        async with RemotingClient() as client:
            sent = await client.invoke(broker_addr, send_request("CliTopic", b"hi"), 10)
            assert sent.code == ResponseCode.SUCCESS
            route = request(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="TBW102")
            assert (
                await client.invoke(f"127.0.0.1:{ns_port}", route, 10)
            ).code == ResponseCode.SUCCESS
        assert (store / "abort").exists()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert not (store / "abort").exists()
    assert (store / "config" / "topics.json").exists()
    assert (store / "config" / "consumerOffset.json").exists()
    assert "CliTopic" in (store / "config" / "topics.json").read_text()
