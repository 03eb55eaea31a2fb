"""The producer's and consumers' message queries (RocketMQ's MQAdmin) against a real broker:
view by offset msgId, query by key and by uniq key, offsets by time, max, min, earliest."""

from __future__ import annotations

import asyncio
import time

import pytest

from rocketq.client import LitePullConsumer as BlockingLitePullConsumer
from rocketq.client import Message
from rocketq.client import Producer as BlockingProducer
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageQueue
from rocketq.errors import IllegalStateError, NoMessageError
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.wait import until, until_sync


async def test_producer_views_and_queries_what_it_sent(cluster: Cluster) -> None:
    await cluster.create_topic("MQAdminTopic", 1)
    started_ms = int(time.time() * 1000) - 1000
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        sent = [
            await producer.send(Message("MQAdminTopic", f"b{i}".encode(), keys=f"order-{i}"))
            for i in range(3)
        ]
        store = cluster.broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 5)
        viewed = await producer.view_message(sent[0].offset_msg_id)
        queried = await producer.query_message("MQAdminTopic", "order-2")
        by_uniq = await producer.query_message_by_uniq_key("MQAdminTopic", sent[1].msg_id)
        mq = MessageQueue("MQAdminTopic", "broker-a", 0)
        offsets = (
            await producer.min_offset(mq),
            await producer.max_offset(mq),
            await producer.search_offset(mq, started_ms),
        )
        earliest = await producer.earliest_msg_store_time(mq)
        with pytest.raises(NoMessageError):
            await producer.query_message("MQAdminTopic", "order-9")
    assert viewed.body == b"b0"
    assert [m.body for m in queried.message_list] == [b"b2"]
    assert by_uniq is not None
    assert by_uniq.body == b"b1"
    assert offsets == (0, 3, 0)
    assert earliest >= started_ms


async def test_a_consumer_answers_the_same_queries(cluster: Cluster) -> None:
    await cluster.create_topic("ConsumerQueryTopic", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        result = await producer.send(Message("ConsumerQueryTopic", b"x", keys="k"))
    consumer = PushConsumer("QueryingGroup", namesrv_addr=cluster.addr, **FAST_CONSUMER)
    consumer.subscribe("ConsumerQueryTopic")
    consumer.register_message_listener(lambda msgs: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(IllegalStateError):
        await consumer.max_offset(result.message_queue)
    await consumer.start()
    try:
        # SEND_OK precedes the consume queue's dispatch (RocketMQ's reput is asynchronous too)
        store = cluster.broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 5)
        assert await consumer.max_offset(result.message_queue) == 1
        assert (await consumer.view_message(result.offset_msg_id)).body == b"x"
    finally:
        await consumer.shutdown()


async def test_blocking_clients_answer_the_queries(cluster: Cluster) -> None:
    await cluster.create_topic("BlockingQueryTopic", 1)

    def run() -> tuple[bytes, int, int]:
        producer = BlockingProducer("bpg", namesrv_addr=cluster.addr, **FAST_CLIENT)
        producer.start()
        consumer = BlockingLitePullConsumer("bq", namesrv_addr=cluster.addr, **FAST_CLIENT)
        consumer.subscribe("BlockingQueryTopic")
        consumer.start()
        try:
            sent = producer.send(Message("BlockingQueryTopic", b"blocking", keys="bk"))
            body = producer.view_message(sent.offset_msg_id).body
            # the consume queue is built just after the put
            assert until_sync(lambda: producer.max_offset(sent.message_queue) != 0, 5, 0.02)
            return (
                body,
                producer.max_offset(sent.message_queue),
                consumer.max_offset(sent.message_queue),
            )
        finally:
            consumer.shutdown()
            producer.shutdown()

    assert await asyncio.to_thread(run) == (b"blocking", 1, 1)
