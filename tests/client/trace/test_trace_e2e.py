"""Message trace against a real broker: a producer and a push consumer with enable_msg_trace
write Pub, SubBefore and SubAfter records that queryMsgTraceById finds by the message's id;
with tracing off nothing reaches the trace topic; a full trace queue drops, never blocks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer, SimpleConsumer, TransactionProducer
from rocketq.client.config import ClientConfig
from rocketq.client.trace.context import TraceContext, TraceType
from rocketq.client.trace.dispatcher import AsyncTraceDispatcher
from rocketq.client.transaction import LocalTransactionState
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC
from rocketq.testing import until
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import (
    FAST_CLIENT,
    FAST_CONSUMER,
    FAST_DELAYS,
    Cluster,
    run_cluster,
    small_store_properties,
)

pytestmark = pytest.mark.timeout(40)


@pytest.fixture
async def trace_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    """A cluster whose broker creates the trace topic at start (traceTopicEnable), with
    fast delays and pop revives (a failed consume comes back within about a second)."""
    props = small_store_properties(
        messageDelayLevel=FAST_DELAYS, timerPrecisionMs="100", timerFlushIntervalMs="200"
    )
    async with run_cluster(
        tmp_path, store_properties=props, revive_interval_ms=200, trace_topic_enable=True
    ) as running:
        yield running


async def _trace_count(admin: AsyncAdminClient) -> int:
    mq = MessageQueue(RMQ_SYS_TRACE_TOPIC, "broker-a", 0)
    return await admin.max_offset(mq)


async def test_producer_and_push_consumer_traces_show_in_query_msg_trace_by_id(
    trace_cluster: Cluster,
) -> None:
    cluster = trace_cluster
    await cluster.create_topic("TraceT", queues=2)
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"}
    consumer = PushConsumer("trace-cg", namesrv_addr=cluster.addr, enable_msg_trace=True, **options)
    consumer.subscribe("TraceT", "*")
    consumer.register_message_listener(listener)
    await consumer.start()
    try:
        async with Producer(
            "trace-pg", namesrv_addr=cluster.addr, enable_msg_trace=True, **FAST_CLIENT
        ) as producer:
            sent = await producer.send(Message("TraceT", b"traced", tags="TagT", keys="order-1"))
            await until(lambda: len(got) == 1, timeout_s=15)
            assert producer.trace_dispatcher is not None
            await producer.trace_dispatcher.flush()
        trace = consumer._consume.trace if consumer._consume else None
        assert trace is not None
        await until(lambda: trace.sent_count >= 1, timeout_s=10)
        await trace.flush()
    finally:
        await consumer.shutdown()
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        views = await admin.query_msg_trace_by_id(sent.msg_id)
        while len(views) < 3:  # the index is built after the put (reput)
            await asyncio.sleep(0.05)
            views = await admin.query_msg_trace_by_id(sent.msg_id)
        by_type = {v.msg_type: v for v in views}
        assert set(by_type) == {"Pub", "SubBefore", "SubAfter"}
        pub = by_type["Pub"]
        assert (pub.group_name, pub.status, pub.topic, pub.tags) == (
            "trace-pg", "success", "TraceT", "TagT",
        )  # fmt: skip
        assert pub.store_host == cluster.broker_addr
        assert pub.offset_msg_id == sent.offset_msg_id
        assert pub.client_host == "127.0.0.1"
        assert pub.cost_time_ms >= 0
        after = by_type["SubAfter"]
        assert (after.group_name, after.status, after.client_host) == (
            "trace-cg", "success", "127.0.0.1",
        )  # fmt: skip
        assert by_type["SubBefore"].request_id == after.request_id
        assert by_type["SubBefore"].retry_times == 0
    shown = ok(await run(cluster, "queryMsgTraceById", "-i", sent.msg_id)).splitlines()
    assert shown[0].split() == [
        "#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status",
        "#StoreHost",
    ]  # fmt: skip
    pub_row = shown[1].split()
    assert pub_row[:3] == ["Pub", "trace-pg", "127.0.0.1"]
    assert pub_row[-2:] == ["success", cluster.broker_addr]
    sub_row = shown[4].split()
    assert shown[3].split()[1] == "#ConsumerGroup"
    assert sub_row[:3] == ["Sub", "trace-cg", "127.0.0.1"]
    assert sub_row[-2:] == ["success", "0"]


async def test_admin_send_message_with_m_true_is_traced(trace_cluster: Cluster) -> None:
    cluster = trace_cluster
    await cluster.create_topic("CliT", queues=1)
    out = ok(await run(cluster, "sendMessage", "-t", "CliT", "-p", "x", "-m", "true"))
    msg_id = out.splitlines()[-1].split()[-1]
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        views = await admin.query_msg_trace_by_id(msg_id)
        while not views:  # the index is built after the put (reput)
            await asyncio.sleep(0.05)
            views = await admin.query_msg_trace_by_id(msg_id)
    assert [(v.msg_type, v.group_name) for v in views] == [("Pub", "PID_ROCKETQ_ADMIN")]


async def test_tracing_off_sends_nothing_to_the_trace_topic(trace_cluster: Cluster) -> None:
    cluster = trace_cluster
    await cluster.create_topic("PlainT", queues=1)
    async with AsyncAdminClient(cluster.addr) as admin:
        assert await _trace_count(admin) == 0
        async with Producer("plain-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            assert producer.trace_dispatcher is None
            sent = await producer.send(Message("PlainT", b"x"))
        assert await _trace_count(admin) == 0
        assert await admin.query_msg_trace_by_id(sent.msg_id) == []


def test_a_full_trace_queue_drops_and_counts_without_blocking() -> None:
    """No worker runs, so nothing leaves the queue: appends past its size are dropped."""
    dispatcher = AsyncTraceDispatcher("g", ClientConfig(), queue_size=4)
    started = time.monotonic()
    accepted = [dispatcher.append(TraceContext(trace_type=TraceType.Pub)) for _ in range(1000)]
    assert time.monotonic() - started < 5.0  # an append that blocked would never return
    assert accepted.count(True) == 4
    assert dispatcher.dropped_count == 996


async def test_simple_consumer_traces_a_receive_and_its_ack_or_hand_back(
    trace_cluster: Cluster,
) -> None:
    cluster = trace_cluster
    await cluster.create_topic("PopT", queues=1)
    async with Producer("pop-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        acked = await producer.send(Message("PopT", b"a"))
        handed_back = await producer.send(Message("PopT", b"b"))
    consumer = SimpleConsumer(
        "pop-cg", namesrv_addr=cluster.addr, await_duration_s=1.0, enable_msg_trace=True,
        **FAST_CLIENT,
    )  # fmt: skip
    consumer.subscribe("PopT", "*")
    async with consumer, asyncio.timeout(20):
        got: dict[str, MessageExt] = {}
        while len(got) < 2:
            got.update((m.uniq_key or "", m) for m in await consumer.receive(2, 30.0))
        await consumer.ack(got[acked.msg_id])
        await consumer.change_invisible_duration(got[handed_back.msg_id], 30.0)
        assert consumer._trace is not None
        await consumer._trace.dispatcher.flush()
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        for msg_id, status in ((acked.msg_id, "success"), (handed_back.msg_id, "failed")):
            views = await admin.query_msg_trace_by_id(msg_id)
            while len(views) < 2:  # the index is built after the put (reput)
                await asyncio.sleep(0.05)
                views = await admin.query_msg_trace_by_id(msg_id)
            assert [v.msg_type for v in views] == ["SubBefore", "SubAfter"]
            assert {v.group_name for v in views} == {"pop-cg"}
            assert views[1].status == status


class _Commit:
    def execute_local_transaction(self, msg: Message, arg: object) -> LocalTransactionState:
        return LocalTransactionState.COMMIT

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        return LocalTransactionState.COMMIT


async def test_a_transaction_traces_its_half_and_its_end(trace_cluster: Cluster) -> None:
    cluster = trace_cluster
    await cluster.create_topic("TxT", queues=1)
    async with TransactionProducer(
        "tx-pg", _Commit(), namesrv_addr=cluster.addr, enable_msg_trace=True, **FAST_CLIENT
    ) as producer:
        sent = await producer.send_message_in_transaction(Message("TxT", b"t", keys="tk"))
        assert producer.trace_dispatcher is not None
        await producer.trace_dispatcher.flush()
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        views = await admin.query_msg_trace_by_id(sent.msg_id)
        while len(views) < 2:  # the index is built after the put (reput)
            await asyncio.sleep(0.05)
            views = await admin.query_msg_trace_by_id(sent.msg_id)
    assert [v.msg_type for v in views] == ["Pub", "EndTransaction"]
    assert {v.group_name for v in views} == {"tx-pg"}
    assert views[1].store_host == cluster.broker_addr


@pytest.mark.parametrize("pop_mode", [False, True], ids=["pull", "pop"])
async def test_a_failed_consume_and_its_retry_are_traced(
    trace_cluster: Cluster, pop_mode: bool
) -> None:
    """The first consume fails (RECONSUME_LATER), the retry succeeds: two Sub rows, the second
    with one retry. In pop mode the client's pop delay (10 s) is too long for a test, so there
    the one consume succeeds; pop and pull consumers share the traced listener call."""
    cluster = trace_cluster
    await cluster.create_topic("RetryT", queues=1)
    calls: list[int] = []
    done = asyncio.Event()

    async def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        calls.append(msgs[0].reconsume_times)
        if len(calls) == 1 and not pop_mode:
            return ConsumeStatus.RECONSUME_LATER
        done.set()
        return ConsumeStatus.CONSUME_SUCCESS

    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"}
    consumer = PushConsumer(
        "retry-cg", namesrv_addr=cluster.addr, enable_msg_trace=True,
        client_rebalance=not pop_mode, pop_invisible_time_s=1.0, **options,
    )  # fmt: skip
    consumer.subscribe("RetryT", "*")
    consumer.register_message_listener(listener)
    async with Producer("retry-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        sent = await producer.send(Message("RetryT", b"r"))
    async with consumer:
        await asyncio.wait_for(done.wait(), 20)
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        views = await admin.query_msg_trace_by_id(sent.msg_id)
        while len(views) < (2 if pop_mode else 4):  # the index is built after the put (reput)
            await asyncio.sleep(0.05)
            views = await admin.query_msg_trace_by_id(sent.msg_id)
    afters = [v for v in views if v.msg_type == "SubAfter"]
    befores = {v.request_id: v.retry_times for v in views if v.msg_type == "SubBefore"}
    assert [v.status for v in afters] == (["success"] if pop_mode else ["failed", "success"])
    assert [befores[v.request_id] for v in afters] == ([0] if pop_mode else [0, 1])
    assert {v.group_name for v in views} == {"retry-cg"}
