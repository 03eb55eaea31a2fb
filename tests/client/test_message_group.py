"""A producer's message group (``__SHARDINGKEY``): every message of a group lands in the write
queue RocketMQ 5's proxy would pick (``consistentHash(group.hashCode(), n)`` over the write
queues sorted by broker and id), through every send kind that chooses a queue itself."""

from __future__ import annotations

import asyncio

from rocketq.client import Message, Producer, SendStatus
from rocketq.client.aio import Producer as AsyncProducer
from rocketq.common import message_const as mc
from rocketq.common.attribute import parse_to_map
from rocketq.common.hashing import message_group_queue_index
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.cluster import FAST_CLIENT, Cluster

TOPIC = "FifoTopic"


async def test_a_message_group_stays_in_the_queue_java_picks(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC, 8)
    async with AsyncProducer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        by_group: dict[str, set[int]] = {}
        for i in range(12):
            group = f"order-{i % 3}"
            msg = Message(TOPIC, b"step %d" % i, message_group=group)
            sent = await (producer.send(msg) if i % 2 else producer.send_async(msg))
            by_group.setdefault(group, set()).add(sent.message_queue.queue_id)
        await producer.send_oneway(Message(TOPIC, b"oneway", message_group="order-1"))
    assert by_group == {g: {message_group_queue_index(g, 8)} for g in by_group}
    assert by_group["order-1"] == {3}  # golden, as in tests/common/test_consistent_hash.py
    assert by_group["order-2"] == {2}
    await cluster.dispatched()
    store = cluster.broker.message_store
    found = store.get_message("G", TOPIC, 3, 0, 32).message_buffers
    records = [decode_message(b, check_crc=False) for b in found]
    assert [r.body for r in records] == [b"step 1", b"step 4", b"step 7", b"step 10", b"oneway"]
    assert {r.properties[mc.PROPERTY_SHARDING_KEY] for r in records} == {"order-1"}


async def test_the_blocking_producer_sets_a_message_group_too(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC, 4)

    def send() -> set[int]:
        with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            msg = Message(TOPIC, b"x")
            msg.message_group = "hello"
            return {producer.send(msg).message_queue.queue_id for _ in range(3)}

    assert await asyncio.to_thread(send) == {3}  # consistentHash(99162322, 4)


async def test_remoting_sends_are_not_checked_against_the_topic_message_type(
    cluster: Cluster,
) -> None:
    """RocketMQ 5's broker takes any message on a typed topic over remoting (its proxy checks
    gRPC sends): a plain message on a FIFO topic, a grouped one on a DELAY topic."""
    manager = cluster.broker.topic_config_manager
    for topic, kind in (("TypedFifo", "FIFO"), ("TypedDelay", "DELAY")):
        plain = TopicConfig(topic_name=topic, read_queue_nums=2, write_queue_nums=2)
        manager.update_topic_config_by_request(plain, parse_to_map(f"+message.type={kind}"))
    await cluster.broker.register_broker_all()
    async with AsyncProducer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        plain_sent = await producer.send(Message("TypedFifo", b"plain"))
        grouped = await producer.send(Message("TypedDelay", b"grouped", message_group="g"))
    assert plain_sent.status is SendStatus.SEND_OK
    assert grouped.status is SendStatus.SEND_OK
