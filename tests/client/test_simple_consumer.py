"""SimpleConsumer over a real broker (receive with an invisible duration, ack, change of the
invisible duration, FIFO groups), its blocking twin, and the PushConsumer's POP mode."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from rocketq.client import SimpleConsumer as BlockingSimpleConsumer
from rocketq.client.aio import Producer, PushConsumer, SimpleConsumer
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import Message, MessageExt
from rocketq.errors import BrokerResponseError
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster, run_cluster
from rocketq.testing.store import small_store_properties

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(40)]

TOPIC = "SimpleTopic"
GROUP = "simple-group"


@asynccontextmanager
async def pop_cluster(tmp: Path, queues: int = 2) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    async with run_cluster(tmp, store_properties=props, revive_interval_ms=200) as c:
        await c.create_topic(TOPIC, queues=queues)
        yield c


async def send(c: Cluster, *bodies: str, group: str | None = None) -> None:
    async with Producer("simple-pg", namesrv_addr=c.addr, **FAST_CLIENT) as producer:
        for body in bodies:
            await producer.send(Message(TOPIC, body.encode(), message_group=group))
    await c.dispatched()  # an answered send may not be in the consume queue yet, as in RocketMQ


async def receive_all(consumer: SimpleConsumer, count: int, **kw: float) -> list[MessageExt]:
    got: list[MessageExt] = []
    while len(got) < count:  # each receive long-polls; the test's timeout bounds the loop
        got.extend(await consumer.receive(32, **kw))
    return got


def simple(c: Cluster, **kw: float) -> SimpleConsumer:
    consumer = SimpleConsumer(GROUP, namesrv_addr=c.addr, await_duration_s=1.0, **FAST_CLIENT)
    consumer.subscribe(TOPIC, "*")
    return consumer


async def test_received_messages_acked_are_not_received_again(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, "a", "b", "c")
        async with simple(c) as consumer:
            got = await receive_all(consumer, 3, invisible_duration_s=1.0)
            assert sorted(m.body for m in got) == [b"a", b"b", b"c"]
            assert {m.topic for m in got} == {TOPIC}
            for msg in got:
                await consumer.ack(msg)
            assert await consumer.receive(32, invisible_duration_s=1.0) == []


async def test_an_unacked_message_comes_back_after_its_invisible_duration(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, "x")
        async with simple(c) as consumer:
            (first,) = await receive_all(consumer, 1, invisible_duration_s=1.0)
            (again,) = await receive_all(consumer, 1, invisible_duration_s=10.0)
            assert (again.body, again.reconsume_times) == (b"x", 1)
            with pytest.raises(BrokerResponseError) as refused:
                await consumer.ack(first)  # its handle expired
            assert refused.value.code == ResponseCode.NO_MESSAGE
            await consumer.ack(again)


async def test_change_invisible_duration_renews_the_handle(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, "y")
        async with simple(c) as consumer:
            (msg,) = await receive_all(consumer, 1, invisible_duration_s=1.0)
            old = dict(msg.properties)
            await consumer.change_invisible_duration(msg, 20.0)
            assert msg.properties["POP_CK"] != old["POP_CK"]
            assert await consumer.receive(32, invisible_duration_s=1.0) == []  # past 1 s
            await consumer.ack(msg)


async def test_a_fifo_group_gets_a_message_group_in_order_one_batch_at_a_time(
    tmp_path: Path,
) -> None:
    async with pop_cluster(tmp_path) as c:
        c.broker.subscription_group_manager.update_subscription_group_config(
            SubscriptionGroupConfig(group_name=GROUP, consume_message_orderly=True)
        )
        await send(c, *[f"o{i}" for i in range(6)], group="order-1")
        async with simple(c) as consumer:
            first = await consumer.receive(3, invisible_duration_s=1.0)
            assert [m.body for m in first] == [b"o0", b"o1", b"o2"]
            again = await receive_all(consumer, 3, invisible_duration_s=10.0)
            assert [(m.body, m.reconsume_times) for m in again[:3]] == [
                (b"o0", 1), (b"o1", 1), (b"o2", 1),
            ]  # fmt: skip
            for msg in again:
                await consumer.ack(msg)
            rest = await receive_all(consumer, 6 - len(again), invisible_duration_s=10.0)
            assert [m.body for m in again + rest] == [f"o{i}".encode() for i in range(6)]


def test_the_blocking_simple_consumer_receives_and_acks(tmp_path: Path) -> None:
    async def setup() -> None:
        async with pop_cluster(tmp_path) as c:
            await send(c, "z")
            await asyncio.to_thread(run_blocking, c.addr)

    def run_blocking(addr: str) -> None:
        with BlockingSimpleConsumer(
            GROUP, namesrv_addr=addr, subscriptions={TOPIC: "*"}, await_duration_s=1.0
        ) as consumer:
            got: list[MessageExt] = []
            while not got:
                got = consumer.receive(32, invisible_duration_s=5.0)
            consumer.change_invisible_duration(got[0], 10.0)
            consumer.ack(got[0])
            assert got[0].body == b"z"

    asyncio.run(setup())


async def test_a_push_consumer_in_pop_mode_consumes_a_topic(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path, queues=4) as c:
        await send(c, *[f"p{i}" for i in range(20)])
        got: list[bytes] = []
        done = asyncio.Event()

        async def listener(msgs: list[MessageExt]) -> ConsumeStatus:  # runs on the loop
            got.extend(m.body for m in msgs)
            if len(set(got)) == 20:
                done.set()
            return ConsumeStatus.CONSUME_SUCCESS

        consumer = PushConsumer(
            "pop-push-group", namesrv_addr=c.addr, client_rebalance=False, **FAST_CONSUMER
        )
        consumer.subscribe(TOPIC, "*")
        consumer.register_message_listener(listener)
        async with consumer:
            await asyncio.wait_for(done.wait(), 20)
        assert sorted(set(got)) == sorted(f"p{i}".encode() for i in range(20))
        offsets = c.committed("pop-push-group", TOPIC)
        assert sum(offsets.values()) == 20  # acked POP offsets, committed at pop


async def test_an_orderly_push_consumer_in_pop_mode_gets_a_failed_batch_first_again(
    tmp_path: Path,
) -> None:
    async with pop_cluster(tmp_path, queues=1) as c:
        await send(c, "q0", "q1", "q2")
        seen: list[tuple[bytes, int]] = []
        done = asyncio.Event()

        async def listener(msgs: list[MessageExt]) -> ConsumeStatus:  # runs on the loop
            seen.extend((m.body, m.reconsume_times) for m in msgs)
            if len(seen) == 4:
                done.set()
            failing = seen == [(b"q0", 0), (b"q1", 0)]
            return (
                ConsumeStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
                if failing
                else ConsumeStatus.CONSUME_SUCCESS
            )

        consumer = PushConsumer(
            "pop-orderly-group", namesrv_addr=c.addr, client_rebalance=False,
            suspend_current_queue_time_s=0.3, **FAST_CONSUMER,
        )  # fmt: skip
        consumer.subscribe(TOPIC, "*")
        consumer.register_message_listener_orderly(listener)
        async with consumer:
            await asyncio.wait_for(done.wait(), 20)
        # q1 failed: q1 and q2 come again, q1 first, with their delivery counts
        assert seen == [(b"q0", 0), (b"q1", 0), (b"q1", 1), (b"q2", 1)]
