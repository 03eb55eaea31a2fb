"""Cluster mode under a fault: rocketq's gRPC endpoint over a name server (as ``rocketq proxy
-n`` builds it) in front of two brokers in their own processes; the official Python 5.x
client sends while broker-a is SIGKILLed and restarted on its store (on a new port, which the
route updates carry), and a SimpleConsumer then receives every message whose send was
acknowledged (the ledger of SEND_OK ids). The sender runs until broker-a stores sends again
after its restart (the proxy's route refresh found it), however fast or slow the machine is."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RocketQError
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.server import GrpcServer
from rocketq.testing.broker import SMALL_INDEX, run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from tests.interop.rmq5_runner import json_lines, needs_rmq5, run_rmq5

pytestmark = [pytest.mark.e2e, needs_rmq5]
TOPIC = "GrpcKill"
BEFORE_KILL = 60  # answered sends before broker-a is killed
DOWN_SENDS = 100  # answered sends while it is down
BACK_SENDS = 20  # sends broker-a stores after its restart
INTERVAL_MS = 20  # between sends: a few hundred in all, however long the restart takes
RECEIVERS = 4  # receives at a time: a drained broker holds one for its long polling (5 s)
REFRESH_S = 3  # topicRouteServiceCacheRefreshSeconds (20 by default): the test's pace


async def start_broker(work_dir: Path, name: str, namesrv: str) -> BrokerProcess:
    conf = {
        "brokerName": name,
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv,
        "storePathRootDir": str(work_dir / "store"),
        **small_store_properties(),
        **SMALL_INDEX,
    }
    broker = BrokerProcess(work_dir, conf)
    await asyncio.to_thread(broker.start, 60.0)  # the name server runs on this loop
    return broker


async def stored_on(admin: AsyncAdminClient, broker_name: str) -> int:
    """The messages of TOPIC in ``broker_name``'s queues (its max offsets), 0 while it has no
    route."""
    stats = await admin.examine_topic_stats(TOPIC)
    return sum(
        offset.max_offset
        for mq, offset in stats.offset_table.items()
        if mq.broker_name == broker_name
    )


async def until_stored(
    admin: AsyncAdminClient, broker_name: str, count: int, timeout_s: float
) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(RocketQError, OSError):
            if await stored_on(admin, broker_name) >= count:
                return True
        await asyncio.sleep(0.2)
    return False


def sends_ok(server: GrpcServer) -> int:
    histogram = server.service.stats.snapshot().get(("SendMessage", "OK", False))
    return 0 if histogram is None else sum(histogram.counts)


async def test_a_broker_killed_mid_run_loses_no_acknowledged_message(tmp_path: Path) -> None:
    async with run_namesrv() as ns:
        a = await start_broker(tmp_path / "a", "broker-a", ns.addr)
        b = await start_broker(tmp_path / "b", "broker-b", ns.addr)
        config = ProxyConfig(grpc_server_port=0, topic_route_service_cache_refresh_s=REFRESH_S)
        server = GrpcServer.over_namesrv(config, ns.addr)
        try:
            async with AsyncAdminClient(ns.addr) as admin:
                for broker in (a, b):
                    await admin.create_and_update_topic_config(
                        broker.addr,
                        TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2),
                    )
            await server.start("127.0.0.1")
            endpoint = f"127.0.0.1:{server.port}"
            stop = tmp_path / "stop-sending"
            sender = asyncio.get_running_loop().create_task(
                run_rmq5(
                    "rmq5_driver.py", "send_only", "--endpoint", endpoint, "--topic", TOPIC,
                    "--count", "0", "--until", str(stop), "--interval-ms", str(INTERVAL_MS),
                    home=tmp_path / "send", timeout_s=150,
                )
            )  # fmt: skip
            try:
                assert await until(lambda: sends_ok(server) >= BEFORE_KILL, 60)
                killed_ms = int(time.time() * 1000)
                assert await asyncio.to_thread(a.kill) == -signal.SIGKILL
                phase = sends_ok(server) + DOWN_SENDS
                assert await until(lambda: sends_ok(server) >= phase, 60)  # broker-b alone
                a = await start_broker(tmp_path / "a", "broker-a", ns.addr)
                restarted_ms = int(time.time() * 1000)
                async with AsyncAdminClient(ns.addr) as admin:
                    assert await until_stored(admin, "broker-a", 1, 30)  # routed, recovered
                    recovered = await stored_on(admin, "broker-a")
                    # the proxy finds broker-a's new address at its next route refresh
                    back = recovered + BACK_SENDS
                    assert await until_stored(admin, "broker-a", back, 60), recovered
            finally:
                stop.touch()
            events = json_lines(await sender)
            sent = {e["body"]: e["message_id"] for e in events if e["event"] == "sent"}
            assert events[-1]["event"] == "end"
            assert any(e["t_ms"] < killed_ms for e in events if e["event"] == "sent")
            assert any(e["t_ms"] > restarted_ms for e in events if e["event"] == "sent")
            refused = [e for e in events if e["event"] == "refused"]
            assert len(sent) + len(refused) == len(events) - 1
            assert len(refused) < len(sent) // 10, refused[:3]
            got = json_lines(
                await run_rmq5(
                    "rmq5_driver.py", "receive_only", "--endpoint", endpoint, "--topic", TOPIC,
                    "--group", "GrpcKillG", "--count", str(len(sent)), "--deadline", "60",
                    "--parallel", str(RECEIVERS),
                    home=tmp_path / "receive", timeout_s=90,
                )
            )  # fmt: skip
            received = {e["body"]: e["message_id"] for e in got if e["event"] == "received"}
            lost = {body for body in sent if received.get(body) != sent[body]}
            assert not lost, (len(lost), len(sent), sorted(lost)[:10])
        finally:
            await server.stop()
            for broker in (a, b):
                await asyncio.to_thread(broker.stop)
