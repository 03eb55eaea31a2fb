"""Producer against a real name server and broker: every send kind, and what the broker stored."""

from __future__ import annotations

import asyncio
import zlib

import pytest

from rocketq.client import Message, SendResult, SendStatus
from rocketq.client.aio import Producer
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message
from rocketq.common.message_id import decode_message_id
from rocketq.errors import ClientError, MessageIllegalError
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, Cluster


async def stored(cluster: Cluster, result: SendResult) -> MessageExt:
    """The record behind a send result, read back through the broker's store."""
    store = cluster.broker.message_store
    mq = result.message_queue

    def found() -> list[bytes]:
        return store.get_message("G", mq.topic, mq.queue_id, result.queue_offset, 1).message_buffers

    assert await until(lambda: bool(found()), 10)
    record = decode_message(found()[0], check_crc=False)
    _host, phy = decode_message_id(result.offset_msg_id)
    assert record.commitlog_offset == phy
    return record


async def test_sync_send_reports_send_ok_with_ids_offset_and_queue(cluster: Cluster) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        msg = Message("Orders", b"hello", tags="TagA", keys=["k1", "k2"], properties={"a": "1"})
        first = await producer.send(msg)
        second = await producer.send(Message("Orders", b"again"))
    assert first.status is SendStatus.SEND_OK
    assert first.msg_id == msg.uniq_key
    assert len(first.offset_msg_id) == 32
    assert first.message_queue.topic == "Orders"
    assert first.message_queue.broker_name == "broker-a"
    assert first.queue_offset == 0
    assert second.message_queue.queue_id != first.message_queue.queue_id  # round robin
    record = await stored(cluster, first)
    assert record.body == b"hello"
    assert record.properties["TAGS"] == "TagA"
    assert record.properties["KEYS"] == "k1 k2"
    assert record.properties["a"] == "1"
    assert record.properties["UNIQ_KEY"] == first.msg_id


async def test_async_send_is_awaitable_and_calls_back(cluster: Cluster) -> None:
    calls: list[tuple[SendResult | None, BaseException | None]] = []
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        tasks = [
            producer.send_async(Message("Orders", b"a%d" % i), lambda r, e: calls.append((r, e)))
            for i in range(20)
        ]
        results = await asyncio.gather(*tasks)
    assert all(r.status is SendStatus.SEND_OK for r in results)
    assert len({r.msg_id for r in results}) == 20
    assert len(calls) == 20
    assert all(r is not None and e is None for r, e in calls)


async def test_oneway_send_reaches_the_broker(cluster: Cluster) -> None:
    await cluster.create_topic("OneWay", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(5):
            await producer.send_oneway(Message("OneWay", b"o%d" % i))
        store = cluster.broker.message_store
        assert await until(lambda: store.get_max_offset_in_queue("OneWay", 0) == 5, 10)


async def test_batch_send_is_one_request_with_one_offset_per_message(cluster: Cluster) -> None:
    await cluster.create_topic("Batch", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        msgs = [Message("Batch", b"b%d" % i, keys=f"k{i}") for i in range(10)]
        result = await producer.send_batch(msgs)
        with pytest.raises(ClientError):
            await producer.send_batch([Message("Batch", b"x"), Message("Other", b"y")])
        with pytest.raises(ClientError):
            await producer.send_batch([Message("Batch", b"x", delay_time_level=2)])
    assert result.status is SendStatus.SEND_OK
    assert result.msg_id.split(",") == [m.uniq_key for m in msgs]
    assert len(result.offset_msg_id.split(",")) == 10
    assert result.queue_offset == 0
    store = cluster.broker.message_store
    assert await until(lambda: store.get_max_offset_in_queue("Batch", 0) == 10, 10)


async def test_sends_with_one_sharding_key_land_on_one_queue(cluster: Cluster) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        by_key: dict[str, set[int]] = {}
        for i in range(20):
            key = f"order-{i % 3}"
            result = await producer.send_orderly(Message("Orders", b"%d" % i), key)
            by_key.setdefault(key, set()).add(result.message_queue.queue_id)
    assert all(len(q) == 1 for q in by_key.values())


async def test_a_large_body_is_stored_compressed_and_flagged(cluster: Cluster) -> None:
    body = b"compressible-" * 2000
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        result = await producer.send(Message("Big", body))
        small = await producer.send(Message("Big", b"tiny"))
    record = await stored(cluster, result)
    assert record.sys_flag & MessageSysFlag.COMPRESSED_FLAG
    assert zlib.decompress(record.body) == body
    assert not (await stored(cluster, small)).sys_flag & MessageSysFlag.COMPRESSED_FLAG


async def test_an_oversized_body_is_refused_by_client_and_by_broker(cluster: Cluster) -> None:
    async with Producer(
        "pg", namesrv_addr=cluster.addr, max_message_size_bytes=64 * 1024, **FAST_CLIENT
    ) as producer:
        with pytest.raises(ClientError):
            await producer.send(Message("Big", b"x" * (64 * 1024 + 1)))
    async with Producer(
        "pg2",
        namesrv_addr=cluster.addr,
        max_message_size_bytes=8 * 1024 * 1024,
        compress_msg_body_over_bytes=16 * 1024 * 1024,
        **FAST_CLIENT,
    ) as producer:
        with pytest.raises(MessageIllegalError) as info:
            await producer.send(Message("Big", b"x" * (5 * 1024 * 1024)))
    assert info.value.retriable is False
    assert info.value.response_code == 13
