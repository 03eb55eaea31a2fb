"""A push consumer's pulls answered on the reader (client/aio/pull_chain.py): found batches
go on without the pull loop's task, and a timeout, a lost connection, a queue taken away by a
rebalance and flow control behave as the loop's own path."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.client.aio.pull_chain import PullChain
from rocketq.common.message import MessageExt
from rocketq.remoting.channel import RemotingChannel
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.record_paths import record_paths

WAIT = 30.0


class CountingConsumer(PushConsumer):
    """A PushConsumer that counts its pull loop's pulls (each a chain started by the loop)."""

    loop_pulls = 0

    async def _start_pull(self, *args: Any) -> PullChain:
        self.loop_pulls += 1
        return await super()._start_pull(*args)


class Seqs:
    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.queues: list[int] = []

    def __call__(self, msgs: list[MessageExt]) -> ConsumeStatus:
        self.seqs += [int(m.properties["seq"]) for m in msgs]
        self.queues += [m.queue_id for m in msgs]
        return ConsumeStatus.CONSUME_SUCCESS


def counting(cluster: Cluster, group: str, topic: str, **kw: Any) -> CountingConsumer:
    options = {
        **FAST_CONSUMER,
        "consume_from_where": "CONSUME_FROM_FIRST_OFFSET",
        "instance_name": "chain",  # its own connection, not the producer's
        **kw,
    }
    c = CountingConsumer(group, namesrv_addr=cluster.addr, **options)
    c.subscribe(topic, "*")
    return c


async def produce(producer: Producer, topic: str, seqs: range) -> None:
    for i in seqs:
        await producer.send(Message(topic, f"b{i}".encode(), properties={"seq": str(i)}))


async def consumer_channel(c: PushConsumer, cluster: Cluster) -> RemotingChannel:
    instance = c._instance
    assert instance is not None
    return await instance.api.remoting.get_channel(cluster.broker_addr)


async def test_found_batches_are_taken_and_pulled_again_without_the_loop(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("TopicCh", 1)
    got = Seqs()
    # held pulls outlive the test: an idle queue's NO_NEW_MSG (the loop's) never comes back
    held = {"broker_suspend_max_time_s": 60.0, "consumer_timeout_when_suspend_s": 65.0}
    c = counting(cluster, "GroupCh", "TopicCh", pull_batch_size=1, **held)
    c.register_message_listener(got)
    async with Producer("pch", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await produce(producer, "TopicCh", range(40))
        await c.start()
        try:
            assert await until(lambda: len(got.seqs) >= 40, WAIT)
            # 40 pulls of one message: the loop started a few (the retry topic's queue,
            # the first pull), the responses wrote the rest
            assert c.loop_pulls <= 6
            await produce(producer, "TopicCh", range(40, 50))  # a held pull woken, chained
            assert await until(lambda: len(got.seqs) >= 50, WAIT)
            assert c.loop_pulls <= 6
        finally:
            await c.shutdown()
    assert sorted(got.seqs) == list(range(50))


async def test_a_timed_out_pull_is_retried_by_the_loop_and_its_late_answer_dropped(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    await cluster.create_topic("TopicTo", 1)
    got = Seqs()
    c = counting(
        cluster,
        "GroupTo",
        "TopicTo",
        broker_suspend_max_time_s=0.3,
        consumer_timeout_when_suspend_s=0.6,
    )
    c.register_message_listener(got)
    async with Producer("pto", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await produce(producer, "TopicTo", range(5))
        await c.start()
        try:
            assert await until(lambda: len(got.seqs) >= 5, WAIT)
            channel = await consumer_channel(c, cluster)
            transport = channel._writer.transport
            caplog.set_level(logging.INFO, logger="rocketq.client.aio.push_consumer")
            transport.pause_reading()  # no answer is read: the pulls' timers fire
            try:
                assert await until(lambda: "RemotingTimeoutError" in caplog.text, WAIT)
                await produce(producer, "TopicTo", range(5, 10))
            finally:
                transport.resume_reading()
            assert await until(lambda: len(got.seqs) >= 10, WAIT)
            await asyncio.sleep(0.3)  # the late answers were read and dropped by now
        finally:
            await c.shutdown()
    assert sorted(got.seqs) == list(range(10))


async def test_a_lost_connection_fails_the_held_pull_and_the_loop_pulls_on_a_new_one(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    await cluster.create_topic("TopicLost", 1)
    got = Seqs()
    c = counting(cluster, "GroupLost", "TopicLost")
    c.register_message_listener(got)
    async with Producer("plost", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await produce(producer, "TopicLost", range(5))
        await c.start()
        try:
            assert await until(lambda: len(got.seqs) >= 5, WAIT)
            channel = await consumer_channel(c, cluster)
            assert await until(lambda: channel.pending_request_count > 0, WAIT)  # held pulls
            before = c.loop_pulls
            caplog.set_level(logging.INFO, logger="rocketq.client.aio.push_consumer")
            channel.close()  # runs the chains' handlers: their loops log the error
            assert await until(lambda: "RemotingConnectError" in caplog.text, WAIT)
            await produce(producer, "TopicLost", range(5, 10))
            assert await until(lambda: len(got.seqs) >= 10, WAIT)
            assert c.loop_pulls > before
            assert channel.pending_request_count == 0
        finally:
            await c.shutdown()
    assert sorted(got.seqs) == list(range(10))


async def test_a_queue_taken_away_stops_its_chain_and_leaves_no_pull_behind(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("TopicAway", 2)
    a, b = Seqs(), Seqs()
    slow = {"rebalance_interval_s": 60.0}
    ca = counting(cluster, "GroupAway", "TopicAway", instance_name="a", **slow)
    cb = counting(cluster, "GroupAway", "TopicAway", instance_name="b", **slow)
    ca.register_message_listener(a)
    cb.register_message_listener(b)
    await ca.start()
    try:
        assert await until(lambda: len(ca.assigned_queues()) == 3, WAIT)  # 2 + the retry queue
        async with Producer("paway", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            await produce(producer, "TopicAway", range(20))
            assert await until(lambda: len(a.seqs) >= 20, WAIT)
            channel = await consumer_channel(ca, cluster)
            table = ca.rebalance.process_queue_table
            before = dict(table)
            await cb.start()
            assert await until(lambda: len(ca.assigned_queues()) < 3, WAIT)
            dropped = [pq for mq, pq in before.items() if mq not in table]
            assert dropped
            assert all(pq.dropped for pq in dropped)
            # one held pull a queue still assigned; the taken queues' are gone with their chains
            assert await until(lambda: channel.pending_request_count == len(table), WAIT)
            kept = {mq.queue_id for mq in table if mq.topic == "TopicAway"}
            a_had = len(a.seqs)
            await produce(producer, "TopicAway", range(20, 60))
            assert await until(lambda: len(a.seqs) + len(b.seqs) >= 60, WAIT)
    finally:
        await cb.shutdown()
        await ca.shutdown()
    assert set(a.seqs + b.seqs) == set(range(60))  # at least once: a moved queue may repeat
    assert set(a.queues[a_had:]) <= kept


async def test_flow_control_holds_the_chain_and_the_loop_resumes_it(cluster: Cluster) -> None:
    await cluster.create_topic("TopicFl", 1)
    gate = asyncio.Event()
    done: list[int] = []

    async def blocked(msgs: list[MessageExt]) -> ConsumeStatus:
        await gate.wait()
        done.extend(int(m.properties["seq"]) for m in msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    c = counting(cluster, "GroupFl", "TopicFl", pull_threshold_for_queue=10, pull_batch_size=4)
    c.register_message_listener(blocked)
    async with Producer("pfl", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await produce(producer, "TopicFl", range(60))
        await c.start()
        try:
            table = c.rebalance.process_queue_table
            assert await until(lambda: any(mq.topic == "TopicFl" for mq in table), WAIT)
            pq = next(pq for mq, pq in table.items() if mq.topic == "TopicFl")
            assert await until(lambda: pq.msg_count > 10, WAIT)
            await asyncio.sleep(0.5)  # more chained pulls would have landed by now
            assert pq.msg_count <= 10 + 4
            gate.set()
            assert await until(lambda: len(done) >= 60, WAIT)
        finally:
            gate.set()
            await c.shutdown()
    assert sorted(done) == list(range(60))


async def test_the_listener_gets_equal_messages_on_the_c_and_the_python_paths(
    cluster: Cluster,
) -> None:
    """The same stored messages consumed by two groups, one with the record paths in C (the
    pull body's C walk, the MessageExt's slots filled in C), one in Python: equal objects."""
    await cluster.create_topic("TopicPaths", 1)
    async with Producer("ppaths", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(30):
            msg = Message("TopicPaths", b"b%d" % i, tags="a" if i % 3 else "b", keys=f"k{i}")
            msg.put_user_property("seq", str(i))
            await producer.send(msg)
    seen: dict[bool, list[MessageExt]] = {}
    for native in (True, False):
        got: list[MessageExt] = []

        async def listener(msgs: list[MessageExt], got: list[MessageExt] = got) -> ConsumeStatus:
            got.extend(msgs)  # an asyncio listener: the consume service's common path
            return ConsumeStatus.CONSUME_SUCCESS

        with record_paths(native):
            c = counting(cluster, f"GroupPaths{int(native)}", "TopicPaths", pull_batch_size=7)
            c.subscribe("TopicPaths", "a")
            c.register_message_listener(listener)
            await c.start()
            try:
                assert await until(lambda got=got: len(got) >= 20, WAIT)
            finally:
                await c.shutdown()
        seen[native] = sorted(got, key=lambda m: m.queue_offset)
    assert len(seen[True]) == 20
    assert seen[True] == seen[False]
    for c_msg, py_msg in zip(seen[True], seen[False], strict=True):
        assert list(c_msg.properties.items()) == list(py_msg.properties.items())
        assert c_msg.msg_id == py_msg.msg_id == c_msg.properties["UNIQ_KEY"]
