"""Request-reply over real sockets: Producer.request, a consumer's reply through
SEND_REPLY_MESSAGE_V2 (325) and the broker's PUSH_REPLY_MESSAGE_TO_CLIENT (326)."""

from __future__ import annotations

import asyncio
import re

import pytest

from rocketq.client import ConsumeStatus, Message
from rocketq.client import Producer as BlockingProducer
from rocketq.client.aio import Producer, PushConsumer
from rocketq.client.aio.request_reply import create_reply_message, reply_topic
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.errors import BrokerResponseError, ClientError, RequestTimeoutError
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.wait import until


class Replier:
    """A listener that answers every request with ``b"re:" + body`` through ``producer``."""

    def __init__(self, producer: Producer) -> None:
        self.producer = producer
        self.requests: list[MessageExt] = []

    async def listen(self, msgs: list[MessageExt]) -> ConsumeStatus:
        for msg in msgs:
            self.requests.append(msg)
            await self.producer.send(create_reply_message(msg, b"re:" + msg.body))
        return ConsumeStatus.CONSUME_SUCCESS


async def start_replier(cluster: Cluster, topic: str) -> tuple[PushConsumer, Producer, Replier]:
    await cluster.create_topic(topic, 2)
    reply_producer = Producer("reply-pg", namesrv_addr=cluster.addr, instance_name="replier")
    await reply_producer.start()
    replier = Replier(reply_producer)
    consumer = PushConsumer(
        "responders",
        namesrv_addr=cluster.addr,
        instance_name="replier",
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(replier.listen)
    await consumer.start()
    return consumer, reply_producer, replier


@pytest.mark.timeout(60)
async def test_request_returns_the_reply_the_consumer_sent(cluster: Cluster) -> None:
    consumer, reply_producer, replier = await start_replier(cluster, "RequestTopic")
    try:
        async with Producer("requesters", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            replies = [
                await producer.request(Message("RequestTopic", f"q{i}".encode()), timeout_s=15)
                for i in range(3)
            ]
    finally:
        await consumer.shutdown()
        await reply_producer.shutdown()
    assert [r.body for r in replies] == [b"re:q0", b"re:q1", b"re:q2"]
    for reply, request in zip(replies, replier.requests, strict=True):
        assert reply.topic == reply_topic("DefaultCluster")
        assert reply.get_property(mc.PROPERTY_CORRELATION_ID) == request.get_property(
            mc.PROPERTY_CORRELATION_ID
        )
        assert reply.get_property(mc.PROPERTY_MESSAGE_TYPE) == "reply"
        assert reply.get_property(mc.PROPERTY_PUSH_REPLY_TIME) is not None
        assert request.get_property(mc.PROPERTY_MESSAGE_TTL) == "15000"


@pytest.mark.timeout(60)
async def test_the_broker_also_stores_the_reply_in_the_reply_topic(cluster: Cluster) -> None:
    consumer, reply_producer, _ = await start_replier(cluster, "StoredReplyTopic")
    try:
        async with Producer("requesters", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            await producer.request(Message("StoredReplyTopic", b"keep me"), timeout_s=15)
    finally:
        await consumer.shutdown()
        await reply_producer.shutdown()
    store = cluster.broker.message_store
    topic = reply_topic("DefaultCluster")
    assert await until(lambda: store.get_max_offset_in_queue(topic, 0) == 1, 5)


async def test_a_request_nobody_answers_raises_request_timeout(cluster: Cluster) -> None:
    await cluster.create_topic("Unanswered", 1)
    async with Producer("requesters", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        with pytest.raises(RequestTimeoutError):
            await producer.request(Message("Unanswered", b"hello?"), timeout_s=1.0)
        assert len(producer.instance.request_futures) == 0


async def test_a_reply_to_a_client_that_is_gone_is_refused_with_the_reason(
    cluster: Cluster,
) -> None:
    request = Message("AnyTopic", b"x")
    request.put_property(mc.PROPERTY_CLUSTER, "DefaultCluster")
    request.put_property(mc.PROPERTY_CORRELATION_ID, "c-1")
    request.put_property(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT, "10.9.9.9@nobody")
    async with Producer("reply-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        gone = re.escape("channel of <10.9.9.9@nobody> not found")
        with pytest.raises(BrokerResponseError, match=gone) as caught:
            await producer.send(create_reply_message(request, b"late"))
    assert caught.value.response_code == ResponseCode.SYSTEM_ERROR


def test_a_reply_needs_the_cluster_of_the_request() -> None:
    with pytest.raises(ClientError, match="CLUSTER"):
        create_reply_message(Message("T", b"no cluster"), b"re")


@pytest.mark.timeout(60)
async def test_blocking_producer_request_waits_for_the_reply(cluster: Cluster) -> None:
    consumer, reply_producer, _ = await start_replier(cluster, "BlockingRequest")
    producer = BlockingProducer("blocking-requesters", namesrv_addr=cluster.addr, **FAST_CLIENT)
    try:
        await asyncio.to_thread(producer.start)
        reply = await asyncio.to_thread(producer.request, Message("BlockingRequest", b"b"), 15.0)
    finally:
        await asyncio.to_thread(producer.shutdown)
        await consumer.shutdown()
        await reply_producer.shutdown()
    assert reply.body == b"re:b"


async def test_send_reply_message_v1_without_a_requester_is_refused_but_stored(
    cluster: Cluster,
) -> None:
    from rocketq.remoting.client import RemotingClient
    from rocketq.remoting.protocol.codes import RequestCode
    from rocketq.remoting.protocol.command import RemotingCommand
    from rocketq.remoting.protocol.headers import SendMessageRequestHeader

    topic = reply_topic("DefaultCluster")
    header = SendMessageRequestHeader(
        producer_group="pg",
        topic=topic,
        default_topic="TBW102",
        default_topic_queue_nums=4,
        queue_id=0,
        sys_flag=0,
        born_timestamp=1,
        flag=0,
        properties="MSG_TYPE\x01reply\x02CORRELATION_ID\x01c-9\x02",
    )
    request = RemotingCommand.create_request(
        RequestCode.SEND_REPLY_MESSAGE, header.to_ext_fields(), b"orphan reply"
    )
    async with RemotingClient() as client:
        response = await client.invoke(cluster.broker.broker_addr, request, 5.0)
    assert response.code == ResponseCode.SYSTEM_ERROR
    assert response.remark == "reply message properties[REPLY_TO_CLIENT] is null"
    store = cluster.broker.message_store
    assert await until(lambda: store.get_max_offset_in_queue(topic, 0) == 1, 5)
