"""Failures: a broker restarted while producers send; a consumer killed in the middle of a batch."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

from rocketq.client import ConsumeStatus, Message, SendStatus
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.testing import run_broker, run_namesrv, until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.store import small_store_properties

REPO_ROOT = Path(__file__).resolve().parents[2]


async def test_sends_retry_on_the_other_broker_while_one_restarts(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "b",
            namesrv_addr=ns.addr,
            broker_name="broker-b",
            store_properties=small_store_properties(),
        ) as broker_b,
    ):
        a_store = tmp_path / "a"
        broker_a_cm = run_broker(
            a_store, namesrv_addr=ns.addr, store_properties=small_store_properties()
        )
        broker_a = await broker_a_cm.__aenter__()
        port = int(broker_a.broker_addr.rsplit(":", 1)[1])
        for broker in (broker_a, broker_b):
            await broker.register_broker_all()
        producer = Producer("pg", namesrv_addr=ns.addr, **FAST_CLIENT)
        await producer.start()
        results = []
        stop = asyncio.Event()

        async def keep_sending() -> None:
            i = 0
            while not stop.is_set() and i < 2000:
                results.append(await producer.send(Message("Restart", b"r%d" % i)))
                i += 1
                await asyncio.sleep(0.002)

        sender = asyncio.create_task(keep_sending())
        try:
            assert await until(
                lambda: {r.message_queue.broker_name for r in results} == {"broker-a", "broker-b"},
                15,
            )
            before = len(results)
            await broker_a_cm.__aexit__(None, None, None)
            during = len(results)
            assert await until(lambda: len(results) >= during + 20, 15)
            # sends to the stopped broker failed, were retried on broker-b, and broker-a is
            # now avoided for its back-off period
            assert not producer.fault_strategy.fault_tolerance.is_available("broker-a")
            broker_a_cm = run_broker(
                a_store,
                namesrv_addr=ns.addr,
                listen_port=port,
                store_properties=small_store_properties(),
            )
            broker_a = await broker_a_cm.__aenter__()
            restarted = len(results)

            def routed_to_a() -> bool:
                return "broker-a" in {
                    mq.broker_name for mq in producer._publish_infos["Restart"].message_queue_list
                }

            assert await until(routed_to_a, 20)
            direct = await producer.send(
                Message("Restart", b"back"), message_queue=MessageQueue("Restart", "broker-a", 0)
            )
            assert direct.status is SendStatus.SEND_OK
        finally:
            stop.set()
            await sender  # a send that failed for good would raise here
            await producer.shutdown()
            with contextlib.suppress(Exception):
                await broker_a_cm.__aexit__(None, None, None)
    assert before > 0
    assert all(r.message_queue.broker_name == "broker-b" for r in results[during + 5 : restarted])
    assert len({r.msg_id for r in results}) == len(results)


async def test_a_killed_consumers_queues_move_and_nothing_is_lost(cluster: Cluster) -> None:
    await cluster.create_topic("Victim", 4)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(200):
            await producer.send(Message("Victim", b"v%d" % i, properties={"seq": str(i)}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.client.consumer_process",
        "--namesrv",
        cluster.addr,
        "--group",
        "GroupV",
        "--topic",
        "Victim",
        "--delay-s",
        "0.05",
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    victim_seqs: list[int] = []

    async def read() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            event = json.loads(raw)
            if event["event"] == "msg":
                victim_seqs.append(event["seq"])

    reader = asyncio.create_task(read())
    survivor_msgs: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        survivor_msgs.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    survivor = PushConsumer(
        "GroupV",
        namesrv_addr=cluster.addr,
        instance_name="survivor",
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    survivor.subscribe("Victim")
    survivor.register_message_listener(listener)
    try:
        assert await until(lambda: len(victim_seqs) >= 10, 30)
        await survivor.start()
        assert await until(lambda: len(victim_seqs) >= 30, 30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        await asyncio.wait_for(reader, 10)
    try:
        assert await until(
            lambda: (
                len({int(m.properties["seq"]) for m in survivor_msgs} | set(victim_seqs)) == 200
            ),
            40,
        )
        assert len(survivor.assigned_queues()) == 5  # all of Victim and the retry queue
    finally:
        await survivor.shutdown()
    assert proc.returncode == -9  # killed, so it could not commit on its way out
    assert len(victim_seqs) >= 30
