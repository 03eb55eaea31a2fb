"""LitePullConsumer: assign and poll from offset 0, seek, commit, subscribe with a rebalance."""

from __future__ import annotations

import asyncio
import time

from rocketq.client import Message
from rocketq.client.aio import LitePullConsumer, Producer
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.wait import collect


async def send(cluster: Cluster, topic: str, count: int, start: int = 0) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(start, start + count):
            await producer.send(Message(topic, b"p%d" % i, properties={"seq": str(i)}))


async def poll_until(consumer: LitePullConsumer, count: int, timeout_s: float) -> list[MessageExt]:
    return await collect(lambda: consumer.poll(0.5), count, timeout_s)


def seqs(msgs: list[MessageExt]) -> list[int]:
    return sorted(int(m.properties["seq"]) for m in msgs)


def lite(cluster: Cluster, group: str, **kw: object) -> LitePullConsumer:
    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET", **kw}
    return LitePullConsumer(group, namesrv_addr=cluster.addr, **options)


async def test_assigned_queues_are_polled_from_offset_zero(cluster: Cluster) -> None:
    await cluster.create_topic("TopicP", 2)
    await send(cluster, "TopicP", 10)
    consumer = lite(cluster, "GroupP", auto_commit=False)
    async with consumer:
        mqs = await consumer.fetch_message_queues("TopicP")
        assert len(mqs) == 2
        await consumer.assign(mqs)
        got = await poll_until(consumer, 10, 20)
        assert seqs(got) == list(range(10))
        assert await consumer.poll(0.2) == []
    assert cluster.committed("GroupP", "TopicP") == {}  # auto_commit off, nothing committed


async def test_seek_rewinds_a_queue_and_commit_stores_the_offsets(cluster: Cluster) -> None:
    await cluster.create_topic("TopicK", 1)
    await send(cluster, "TopicK", 6)
    mq = MessageQueue("TopicK", "broker-a", 0)
    consumer = lite(cluster, "GroupK", auto_commit=False)
    async with consumer:
        await consumer.assign([mq])
        assert seqs(await poll_until(consumer, 6, 20)) == list(range(6))
        await consumer.seek(mq, 4)
        assert seqs(await poll_until(consumer, 2, 20)) == [4, 5]
        await consumer.commit()
        assert await consumer.committed(mq) == 6
        await consumer.seek(mq, 2)
        assert seqs(await poll_until(consumer, 4, 20)) == [2, 3, 4, 5]
    assert cluster.committed("GroupK", "TopicK") == {0: 6}


async def test_offset_for_timestamp_finds_the_first_later_message(cluster: Cluster) -> None:
    await cluster.create_topic("TopicT", 1)
    await send(cluster, "TopicT", 3)
    middle_ms = time.time_ns() // 1_000_000 + 5
    await asyncio.sleep(0.02)
    await send(cluster, "TopicT", 3, start=3)
    mq = MessageQueue("TopicT", "broker-a", 0)
    store = cluster.broker.message_store
    assert await until(lambda: store.get_max_offset_in_queue("TopicT", 0) == 6, 10)  # dispatched
    async with lite(cluster, "GroupT") as consumer:
        await consumer.assign([mq])
        offset = await consumer.offset_for_timestamp(mq, middle_ms)
    assert offset == 3


async def test_subscribed_consumers_auto_commit_what_they_polled(cluster: Cluster) -> None:
    await cluster.create_topic("TopicSub", 4)
    await send(cluster, "TopicSub", 12)
    consumer = lite(cluster, "GroupSub", auto_commit_interval_s=0.2)
    async with consumer:
        consumer.subscribe("TopicSub")
        got = await poll_until(consumer, 12, 30)
        assert len(consumer.assignment()) == 4
        await consumer.poll(0.3)
        await consumer.poll(0.0)
    assert seqs(got) == list(range(12))
    assert await until(lambda: sum(cluster.committed("GroupSub", "TopicSub").values()) == 12, 5)


async def test_the_async_iterator_yields_each_message(cluster: Cluster) -> None:
    await cluster.create_topic("TopicIt", 2)
    await send(cluster, "TopicIt", 6)
    got: list[MessageExt] = []
    async with lite(cluster, "GroupIt") as consumer:
        await consumer.assign(await consumer.fetch_message_queues("TopicIt"))
        async with asyncio.timeout(20):
            async for msg in consumer:
                got.append(msg)
                if len(got) == 6:
                    break
    assert seqs(got) == list(range(6))
