"""Cluster mode under a fault: rocketq's gRPC endpoint over a name server (as ``rocketq proxy
-n`` builds it) in front of two brokers in their own processes; the official Python 5.x
client sends while broker-a is SIGKILLed and restarted on its store, and a SimpleConsumer then
receives every message whose send was acknowledged (the ledger of SEND_OK ids)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.common.topic_config import TopicConfig
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.server import GrpcServer
from rocketq.testing.broker import SMALL_INDEX, run_namesrv
from rocketq.testing.broker_process import BrokerProcess, free_port
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from tests.interop.rmq5_runner import json_lines, needs_rmq5, run_rmq5

pytestmark = [pytest.mark.e2e, needs_rmq5]
TOPIC = "GrpcKill"
SENDS = 500


async def start_broker(work_dir: Path, name: str, namesrv: str) -> BrokerProcess:
    conf = {
        "brokerName": name,
        "brokerIP1": "127.0.0.1",
        "listenPort": str(free_port()),
        "haListenPort": str(free_port()),
        "namesrvAddr": namesrv,
        "storePathRootDir": str(work_dir / "store"),
        **small_store_properties(),
        **SMALL_INDEX,
    }
    broker = BrokerProcess(work_dir, conf)
    await asyncio.to_thread(broker.start, 60.0)  # the name server runs on this loop
    return broker


def sends_ok(server: GrpcServer) -> int:
    histogram = server.service.stats.snapshot().get(("SendMessage", "OK", False))
    return 0 if histogram is None else sum(histogram.counts)


async def test_a_broker_killed_mid_run_loses_no_acknowledged_message(tmp_path: Path) -> None:
    async with run_namesrv() as ns:
        a = await start_broker(tmp_path / "a", "broker-a", ns.addr)
        b = await start_broker(tmp_path / "b", "broker-b", ns.addr)
        server = GrpcServer.over_namesrv(ProxyConfig(grpc_server_port=0), ns.addr)
        try:
            async with AsyncAdminClient(ns.addr) as admin:
                for broker in (a, b):
                    await admin.create_and_update_topic_config(
                        broker.addr,
                        TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2),
                    )
            await server.start("127.0.0.1")
            endpoint = f"127.0.0.1:{server.port}"
            sender = asyncio.get_running_loop().create_task(
                run_rmq5(
                    "rmq5_driver.py", "send_only", "--endpoint", endpoint, "--topic", TOPIC,
                    "--count", str(SENDS), home=tmp_path / "send", timeout_s=150,
                )
            )  # fmt: skip
            assert await until(lambda: sends_ok(server) >= 60, 60)
            killed_ms = int(time.time() * 1000)
            assert await asyncio.to_thread(a.kill) == -signal.SIGKILL
            assert await until(lambda: sends_ok(server) >= 150, 60)  # broker-b alone
            a = await start_broker(tmp_path / "a", "broker-a", ns.addr)
            restarted_ms = int(time.time() * 1000)
            events = json_lines(await sender)
            sent = {e["body"]: e["message_id"] for e in events if e["event"] == "sent"}
            assert events[-1]["event"] == "end"
            assert any(e["t_ms"] < killed_ms for e in events if e["event"] == "sent")
            assert any(e["t_ms"] > restarted_ms for e in events if e["event"] == "sent")
            refused = [e for e in events if e["event"] == "refused"]
            assert len(sent) + len(refused) == SENDS
            assert len(refused) < SENDS // 10, refused[:3]
            got = json_lines(
                await run_rmq5(
                    "rmq5_driver.py", "receive_only", "--endpoint", endpoint, "--topic", TOPIC,
                    "--group", "GrpcKillG", "--count", str(len(sent)), "--deadline", "60",
                    home=tmp_path / "receive", timeout_s=90,
                )
            )  # fmt: skip
            received = {e["body"]: e["message_id"] for e in got if e["event"] == "received"}
            lost = {body for body in sent if received.get(body) != sent[body]}
            assert not lost, sorted(lost)[:10]
        finally:
            await server.stop()
            for broker in (a, b):
                await asyncio.to_thread(broker.stop)
