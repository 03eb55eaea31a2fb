"""Consumer admin calls answered by the official C++ client (PyPI ``rocketmq`` 0.4.4, run in a
subprocess): its GET_CONSUMER_RUNNING_INFO reply (fastjson-style object keys, written by
jsoncpp) decodes, and RESET_CONSUMER_CLIENT_OFFSET in the C++ list form moves it back."""

from __future__ import annotations

import importlib.util

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.testing.cluster import FAST_CLIENT, Cluster
from rocketq.testing.wait import until
from tests.interop.cpp_runner import DriverRun, start_driver

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]
TIMEOUT_S = 60.0


async def produce(cluster: Cluster, topic: str, count: int) -> None:
    await cluster.create_topic(topic, 2)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(count):
            await producer.send(Message(topic, f"body-{i}".encode(), properties={"seq": str(i)}))


async def start_cpp_consumer(cluster: Cluster, topic: str, group: str, expect: int) -> DriverRun:
    home = cluster.tmp / "homes" / f"c-{group}"
    return await start_driver(
        home,
        "push",
        "--namesrv",
        cluster.addr,
        "--topic",
        topic,
        "--group",
        group,
        "--expect",
        str(expect),
        "--timeout",
        str(TIMEOUT_S),
    )


@pytest.mark.timeout(120)
async def test_cpp_consumer_running_info_decodes(cluster: Cluster) -> None:
    await produce(cluster, "CppRunning", 4)
    run = await start_cpp_consumer(cluster, "CppRunning", "GroupCppRunning", 4)
    try:
        assert await until(lambda: len(run.messages()) == 4, TIMEOUT_S)
        async with AsyncAdminClient(cluster.addr) as admin:
            conn = await admin.examine_consumer_connection_info("GroupCppRunning")
            assert conn.connection_set[0].language == "CPP"
            client_id = conn.connection_set[0].client_id
            info = await admin.get_consumer_running_info("GroupCppRunning", client_id)
    finally:
        await run.kill()
    assert "CppRunning" in {s.topic for s in info.subscription_set}
    assert {mq.topic for mq in info.mq_table} >= {"CppRunning"}
    assert info.properties


@pytest.mark.timeout(120)
async def test_cpp_consumer_reads_again_after_a_reset_by_time(cluster: Cluster) -> None:
    await produce(cluster, "CppReset", 4)
    run = await start_cpp_consumer(cluster, "CppReset", "GroupCppReset", 8)
    try:
        assert await until(lambda: len(run.messages()) == 4, TIMEOUT_S)
        assert await until(
            lambda: sum(cluster.committed("GroupCppReset", "CppReset").values()) == 4, TIMEOUT_S
        )
        async with AsyncAdminClient(cluster.addr) as admin:
            table = await admin.reset_offset_by_timestamp("CppReset", "GroupCppReset", 0)
        assert set(table.values()) == {0}
        assert await until(lambda: len(run.messages()) >= 8, TIMEOUT_S)
    finally:
        await run.kill()
    seqs = sorted(int(m["properties"]["seq"]) for m in run.messages())
    assert seqs[:8] == sorted(list(range(4)) * 2)
