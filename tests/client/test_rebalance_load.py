"""Consumers joining and leaving a group under load: none lost, no duplicate on a clean leave."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster

TOTAL = 400


class Seen:
    def __init__(self) -> None:
        self.seqs: list[int] = []

    def listener(self, msgs: list[MessageExt]) -> ConsumeStatus:
        self.seqs.extend(int(m.properties["seq"]) for m in msgs)
        return ConsumeStatus.CONSUME_SUCCESS


async def send_all(cluster: Cluster, topic: str, pace_s: float) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(TOTAL):
            await producer.send(Message(topic, b"l%d" % i, properties={"seq": str(i)}))
            await asyncio.sleep(pace_s)


async def member(cluster: Cluster, topic: str, name: str, seen: Seen, **kw: Any) -> PushConsumer:
    c = PushConsumer(
        "GroupL" + topic,
        namesrv_addr=cluster.addr,
        instance_name=name,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
        **kw,
    )
    c.subscribe(topic)
    c.register_message_listener(seen.listener)
    await c.start()
    return c


async def test_consumers_joining_under_load_lose_nothing(cluster: Cluster) -> None:
    await cluster.create_topic("Join", 8)
    seen = Seen()
    members = [await member(cluster, "Join", "m0", seen)]
    sender = asyncio.create_task(send_all(cluster, "Join", 0.005))
    try:
        for name in ("m1", "m2"):  # each joins while the group is consuming
            assert await until(lambda: len(set(seen.seqs)) >= TOTAL // 4, 20)
            members.append(await member(cluster, "Join", name, seen))
        await sender
        assert await until(lambda: set(seen.seqs) == set(range(TOTAL)), 40)
        shares = [{mq for mq in m.assigned_queues() if mq.topic == "Join"} for m in members]
        assert all(shares)
    finally:
        for m in members:
            await m.shutdown()
    committed = cluster.committed("GroupLJoin", "Join")
    assert sum(committed.values()) == TOTAL
    again = Seen()  # after a clean stop of everyone, the group has nothing left to read
    late = await member(cluster, "Join", "late", again)
    try:
        assert await until(lambda: len(late.assigned_queues()) == 9, 20)
        await asyncio.sleep(1.0)  # a redelivery would arrive well within this
    finally:
        await late.shutdown()
    assert again.seqs == []


async def test_a_consumer_leaving_cleanly_under_load_causes_no_duplicates(cluster: Cluster) -> None:
    await cluster.create_topic("Leave", 8)
    seen = Seen()
    members = [
        await member(cluster, "Leave", f"m{i}", seen, allocate_strategy="CONSISTENT_HASH")
        for i in range(3)
    ]

    def settled() -> bool:
        shares = [{mq for mq in m.assigned_queues() if mq.topic == "Leave"} for m in members]
        return sum(len(s) for s in shares) == 8 and not set.intersection(*shares)

    try:
        assert await until(settled, 20)
        sender = asyncio.create_task(send_all(cluster, "Leave", 0.005))
        assert await until(lambda: len(set(seen.seqs)) >= TOTAL // 3, 20)  # mid-stream
        leaving = members.pop()
        await leaving.shutdown()
        await sender
        assert await until(lambda: set(seen.seqs) == set(range(TOTAL)), 40)
    finally:
        for m in members:
            await m.shutdown()
    duplicates = [seq for seq, n in Counter(seen.seqs).items() if n > 1]
    assert duplicates == []


async def test_orderly_queues_keep_their_order_across_a_rebalance(cluster: Cluster) -> None:
    await cluster.create_topic("Ordered", 4)
    consumed: list[tuple[int, int]] = []  # (queue, seq) in consumption order, both members

    async def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        await asyncio.sleep(0.002)
        consumed.extend((m.queue_id, int(m.properties["seq"])) for m in msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    def orderly(name: str) -> PushConsumer:
        c = PushConsumer(
            "GroupOrdered",
            namesrv_addr=cluster.addr,
            instance_name=name,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            **FAST_CONSUMER,
        )
        c.subscribe("Ordered")
        c.register_message_listener(listener, orderly=True)
        return c

    async def send_ordered() -> None:
        async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            for i in range(200):
                msg = Message("Ordered", b"o%d" % i, properties={"seq": str(i)})
                await producer.send_orderly(msg, f"key-{i % 8}")
                await asyncio.sleep(0.005)

    first, second = orderly("o1"), orderly("o2")
    await first.start()
    sender = asyncio.create_task(send_ordered())
    try:
        assert await until(lambda: len(consumed) >= 50, 20)  # the rebalance comes mid-stream
        await second.start()
        await sender
        assert await until(lambda: {s for _, s in consumed} == set(range(200)), 40)
        assert second.assigned_queues()
    finally:
        await second.shutdown()
        await first.shutdown()
    by_queue: dict[int, list[int]] = {}
    for queue_id, seq in consumed:
        by_queue.setdefault(queue_id, []).append(seq)
    for seqs in by_queue.values():
        assert seqs == sorted(seqs)
