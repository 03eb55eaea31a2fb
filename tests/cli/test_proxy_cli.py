"""``rocketq proxy`` (cluster mode) and ``rocketq broker --enable-proxy`` (local mode) as real
processes: each serves gRPC over the name server's brokers and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from rocketq.testing.cli_process import CLI_PROGRAM, read_until
from rocketq.testing.cluster import run_cluster
from rocketq.testing.grpc_endpoint import grpc_route_code

pytestmark = pytest.mark.e2e
GRPC_LINE = r"gRPC endpoint .* listening on 127\.0\.0\.1:(\d+)"


async def run_command(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLI_PROGRAM, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def serves_then_stops(proc: asyncio.subprocess.Process, topic: str) -> None:
    try:
        assert proc.stdout is not None
        port = int((await read_until(proc.stdout, GRPC_LINE, 30)).group(1))
        assert await grpc_route_code(port, "NoSuchProxyT") == "TOPIC_NOT_FOUND"
        assert await grpc_route_code(port, topic) == "OK"
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_proxy_serves_grpc_over_the_name_servers_brokers(tmp_path: Path) -> None:
    config = tmp_path / "rmq-proxy.json"
    config.write_text(json.dumps({"grpcServerPort": 0, "someFutureKey": 1}))
    async with run_cluster(tmp_path) as cluster:
        await cluster.create_topic("ProxyT")
        proc = await run_command(
            "proxy", "-n", cluster.addr, "-pc", str(config), "--host", "127.0.0.1"
        )
        await serves_then_stops(proc, "ProxyT")


async def test_broker_enable_proxy_serves_grpc_in_its_process(tmp_path: Path) -> None:
    config = tmp_path / "rmq-proxy.json"
    config.write_text(json.dumps({"grpcServerPort": 0}))
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=broker-local\nhaListenPort=0\n")
    async with run_cluster(tmp_path / "c") as cluster:
        await cluster.create_topic("LocalT")
        proc = await run_command(
            "broker", "-n", cluster.addr, "-p", "0", "--host", "127.0.0.1", "-c", str(conf),
            "--store", str(tmp_path / "store2"), "--enable-proxy", "-pc", str(config),
        )  # fmt: skip
        await serves_then_stops(proc, "LocalT")


async def test_proxy_refuses_tls_test_mode_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "rmq-proxy.json"
    config.write_text(json.dumps({"tlsTestModeEnable": True}))
    proc = await run_command("proxy", "-n", "127.0.0.1:9", "-pc", str(config))
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert b"tlsTestModeEnable=true is not supported" in out
