"""``rocketq server`` as a real process: boots, serves, and shuts down cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.cli_process import CLI_PROGRAM, read_until
from rocketq.testing.grpc_endpoint import grpc_route_code
from rocketq.testing.wire import request, send_request

pytestmark = pytest.mark.e2e


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
        "--grpc-port",
        "0",
    ]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI_PROGRAM,
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
        grpc_line = r"gRPC endpoint .* listening on 127\.0\.0\.1:(\d+)"
        grpc_port = int((await read_until(proc.stdout, grpc_line, 30)).group(1))
        assert await grpc_route_code(grpc_port, "NoSuchCliTopic") == "TOPIC_NOT_FOUND"
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


async def test_server_runs_two_masters_and_two_slaves_replicating_synchronously(
    tmp_path: Path,
) -> None:
    from rocketq.client import Message
    from rocketq.client.aio import Producer
    from rocketq.client.status import SendStatus

    store = tmp_path / "store"
    args = ["server", "--store", str(store), "--namesrv-port", "0", "--broker-port", "0"]
    args += ["--grpc-port", "0"]
    args += ["--host", "127.0.0.1", "--cluster", "2m-2s-sync"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI_PROGRAM,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        ns_port = int(
            (await read_until(proc.stdout, r"name server listening on .*:(\d+)", 30)).group(1)
        )
        roles = []
        for _ in range(4):
            found = await read_until(proc.stdout, r"broker (broker-\w) \(id (\d), (\w+)\)", 30)
            roles.append(found.groups())
        assert sorted(roles) == [
            ("broker-a", "0", "SYNC_MASTER"),
            ("broker-a", "1", "SLAVE"),
            ("broker-b", "0", "SYNC_MASTER"),
            ("broker-b", "1", "SLAVE"),
        ]
        async with Producer("pg", namesrv_addr=f"127.0.0.1:{ns_port}") as producer:
            brokers: set[str] = set()
            for i in range(60):  # a master answers SLAVE_NOT_AVAILABLE until its slave links
                result = await producer.send(Message("ClusterTopic", b"%d" % i))
                if result.status is SendStatus.SEND_OK:
                    brokers.add(result.message_queue.broker_name)
                if brokers == {"broker-a", "broker-b"}:
                    break
                await asyncio.sleep(0.1)
            assert brokers == {"broker-a", "broker-b"}
        async with RemotingClient() as client:
            info = await client.invoke(
                f"127.0.0.1:{ns_port}", request(RequestCode.GET_BROKER_CLUSTER_INFO), 10
            )
            text = (info.body or b"").decode()
            assert "broker-a" in text
            assert "broker-b" in text
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    for name in ("broker-a", "broker-a-s", "broker-b", "broker-b-s"):
        assert (store / name / "commitlog").is_dir(), name


def test_the_2m_2s_layout_matches_the_readme_table() -> None:
    from rocketq.broker.config import BrokerConfig
    from rocketq.cli.server_layout import broker_configs

    configs = broker_configs("2m-2s-sync", BrokerConfig(listen_port=10911), "/s")
    rows = [
        (c.broker_name, c.broker_id, c.broker_role.name, c.listen_port, c.store_path_root_dir)
        for c in configs
    ]
    assert rows == [  # README "Replication": HA port = listen port + 1 for each
        ("broker-a", 0, "SYNC_MASTER", 10911, os.path.join("/s", "broker-a")),
        ("broker-b", 0, "SYNC_MASTER", 11111, os.path.join("/s", "broker-b")),
        ("broker-a", 1, "SLAVE", 11011, os.path.join("/s", "broker-a-s")),
        ("broker-b", 1, "SLAVE", 11211, os.path.join("/s", "broker-b-s")),
    ]
    assert all(c.slave_read_enable for c in configs if c.broker_id == 1)
    asynchronous = broker_configs("2m-2s-async", BrokerConfig(listen_port=10911), "/s")
    assert [c.broker_role.name for c in asynchronous][:2] == ["ASYNC_MASTER", "ASYNC_MASTER"]


def test_server_listens_on_loopback_by_default_while_namesrv_and_broker_take_every_interface() -> (
    None
):
    import click

    from rocketq.cli.broker import broker, load_broker_config
    from rocketq.cli.namesrv import load_namesrv_config, namesrv
    from rocketq.cli.server import _configs, server

    def default(command: click.Command, name: str) -> object:
        return next(p.default for p in command.params if p.name == name)

    assert default(server, "host") == "127.0.0.1"
    ns_config, config = _configs("/s", 9876, 10911, "127.0.0.1", "127.0.0.1", 5557)
    assert (ns_config.listen_host, config.listen_host) == ("127.0.0.1", "127.0.0.1")
    assert ns_config.metrics_prom_exporter_host == "127.0.0.1"
    assert config.metrics_prom_exporter_host == "127.0.0.1"
    assert default(namesrv, "host") is None
    assert load_namesrv_config(None)[0].listen_host == "0.0.0.0"  # RocketMQ's NamesrvStartup
    assert default(broker, "host") is None
    assert load_broker_config(None, None, None, None).listen_host == "0.0.0.0"
