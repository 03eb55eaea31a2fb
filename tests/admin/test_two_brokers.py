"""Admin calls that span brokers: two brokers of one cluster behind one name server; queries
by key and uniq key, topic stats and consume stats gather every broker's part."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until


@pytest.mark.timeout(90)
async def test_queries_and_stats_cover_every_broker_of_the_topic(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "a", namesrv_addr=ns.addr, store_properties=small_store_properties()
        ) as a,
        run_broker(
            tmp_path / "b",
            namesrv_addr=ns.addr,
            broker_name="broker-b",
            store_properties=small_store_properties(),
        ) as b,
        AsyncAdminClient(ns.addr) as admin,
    ):
        masters = await admin.create_and_update_topic_config_in_cluster(
            "DefaultCluster",
            TopicConfig(topic_name="Spread", read_queue_nums=2, write_queue_nums=2),
        )
        assert sorted(masters) == sorted([a.broker_addr, b.broker_addr])
        async with Producer("pg", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
            sent = [
                await producer.send(Message("Spread", f"m{i}".encode(), keys="same"))
                for i in range(8)
            ]
        assert {s.message_queue.broker_name for s in sent} == {"broker-a", "broker-b"}
        for broker in (a, b):
            store = broker.message_store
            assert await until(lambda s=store: s.dispatch_behind_bytes() == 0, 5)
        found = await admin.query_message("Spread", "same")
        by_uniq = await admin.query_message_by_uniq_key("Spread", sent[-1].msg_id)
        topic_stats = await admin.examine_topic_stats("Spread")

        got: list[MessageExt] = []

        def listener(msgs: list[MessageExt]) -> ConsumeStatus:
            got.extend(msgs)
            return ConsumeStatus.CONSUME_SUCCESS

        consumer = PushConsumer(
            "SpreadGroup",
            namesrv_addr=ns.addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            **FAST_CONSUMER,
        )
        consumer.subscribe("Spread")
        consumer.register_message_listener(listener)
        await consumer.start()
        try:
            assert await until(lambda: len(got) == 8, 30)

            def committed() -> int:
                return sum(
                    sum(br.consumer_offset_manager.query_offsets("SpreadGroup", "Spread").values())
                    for br in (a, b)
                )

            assert await until(lambda: committed() == 8, 15)
            stats = await admin.examine_consume_stats("SpreadGroup", "Spread")
        finally:
            await consumer.shutdown()
    assert sorted(m.body for m in found.message_list) == sorted(f"m{i}".encode() for i in range(8))
    assert {m.store_host[1] for m in found.message_list} == {a.port, b.port}
    assert by_uniq is not None
    assert by_uniq.body == b"m7"
    assert {mq.broker_name for mq in topic_stats.offset_table} == {"broker-a", "broker-b"}
    assert sum(t.max_offset for t in topic_stats.offset_table.values()) == 8
    assert {mq.broker_name for mq in stats.offset_table} == {"broker-a", "broker-b"}
    assert stats.compute_total_diff() == 0
