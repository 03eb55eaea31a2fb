"""Mixed clients: the C++ client (PyPI ``rocketmq`` 0.4.4) on one side, ours on the other.

The C++ client runs in a subprocess through ``tests/interop/cpp_driver.py``; name server and
broker run in this process on 127.0.0.1 port 0.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from tests.interop.cpp_runner import run_driver, start_driver

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]
TIMEOUT_S = 60.0
SEND_TIMEOUT_MS = 10_000


async def cpp_produce(cluster: Cluster, topic: str, count: int, *extra: str) -> list[dict]:  # type: ignore[type-arg]
    """Every message sent, or a failure that shows what the C++ client reported instead."""
    home = cluster.tmp / "homes" / f"p-{topic}"
    args = ["produce", "--namesrv", cluster.addr, "--topic", topic, "--count", str(count)]
    # a loaded machine can take more than the C++ client's default 3 s for a send
    args += ["--send-timeout-ms", str(SEND_TIMEOUT_MS)]
    events = await run_driver(home, TIMEOUT_S, *args, *extra)
    sent = [e for e in events if e["event"] == "sent"]
    assert len(sent) == count, [e for e in events if e["event"] != "sent"]
    return sent


async def consume(cluster: Cluster, topic: str, group: str, count: int) -> list[MessageExt]:
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    c = PushConsumer(group, namesrv_addr=cluster.addr, **FAST_CONSUMER)
    c.subscribe(topic)
    c.register_message_listener(listener)
    await c.start()
    try:
        assert await until(lambda: len(got) >= count, TIMEOUT_S)
    finally:
        await c.shutdown()
    return got


async def test_cpp_produced_messages_reach_our_consumer_intact(cluster: Cluster) -> None:
    sent = await cpp_produce(cluster, "CppToPy", 10, "--tags", "TagA,TagB", "--color", "red")
    assert len(sent) == 10
    got = await consume(cluster, "CppToPy", "GroupCppToPy", 10)
    by_seq = {int(m.properties["seq"]): m for m in got}
    assert sorted(by_seq) == list(range(10))
    assert len(got) == 10
    ids = {e["i"]: e["msg_id"] for e in sent}
    for i, m in by_seq.items():
        assert m.body == f"body-{i}".encode()
        assert m.tags == ("TagA" if i % 2 == 0 else "TagB")
        assert m.keys == [f"key-{i}"]
        assert m.properties["color"] == "red"
        assert m.msg_id == m.uniq_key
        assert m.queue_offset >= 0
        assert m.store_timestamp >= m.born_timestamp
        assert ids[i]  # the C++ send reply carried the broker's offset msgId


async def test_cpp_compressed_bodies_are_inflated_by_our_consumer(cluster: Cluster) -> None:
    sent = await cpp_produce(cluster, "CppZip", 2, "--body-size", "20000", "--compressible")
    got = await consume(cluster, "CppZip", "GroupCppZip", 2)
    assert {hashlib.sha256(m.body).hexdigest() for m in got} == {e["body_sha256"] for e in sent}
    assert all(len(m.body) == 20000 for m in got)


async def test_our_messages_reach_the_cpp_consumer_intact(cluster: Cluster) -> None:
    big = ("compressible-" * 1000).encode()
    sent = []
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(10):
            msg = Message(
                "PyToCpp",
                big if i == 9 else f"body-{i}".encode(),
                tags="TagA" if i % 2 == 0 else "TagB",
                keys=f"key-{i}",
                properties={"seq": str(i), "color": "blue"},
            )
            sent.append(await producer.send(msg))
    home = cluster.tmp / "homes" / "c-PyToCpp"
    run = await start_driver(
        home,
        "push",
        "--namesrv",
        cluster.addr,
        "--topic",
        "PyToCpp",
        "--group",
        "GroupPyToCpp",
        "--expect",
        "10",
        "--timeout",
        str(TIMEOUT_S),
    )
    try:
        await run.wait(TIMEOUT_S + 15)
    finally:
        await run.kill()
    msgs = run.messages()
    by_seq = {int(m["properties"]["seq"]): m for m in msgs}
    assert sorted(by_seq) == list(range(10))
    for i, m in by_seq.items():
        assert m["tags"] == ("TagA" if i % 2 == 0 else "TagB")
        assert m["keys"] == f"key-{i}"
        assert m["properties"]["color"] == "blue"
        assert m["properties"]["UNIQ_KEY"] == sent[i].msg_id
        assert m["msg_id"] == sent[i].msg_id
        if i < 9:
            assert m["body"] == f"body-{i}"
    assert by_seq[9]["body_sha256"] == hashlib.sha256(big).hexdigest()


async def test_our_batch_is_read_message_by_message_by_the_cpp_pull_consumer(
    cluster: Cluster, tmp_path: Path
) -> None:
    await cluster.create_topic("PyBatch", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        msgs = [Message("PyBatch", b"b%d" % i, properties={"seq": str(i)}) for i in range(8)]
        await producer.send_batch(msgs)
    args = ["pull", "--namesrv", cluster.addr, "--topic", "PyBatch", "--group", "GroupPyBatch"]
    events = await run_driver(tmp_path / "puller", TIMEOUT_S, *args)
    pulled = [e for e in events if e["event"] == "msg"]
    assert sorted(int(e["properties"]["seq"]) for e in pulled) == list(range(8))
    assert {e["properties"]["UNIQ_KEY"] for e in pulled} == {m.uniq_key for m in msgs}
