"""MessageSelector.by_sql / by_tag in subscribe, against a real broker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.client import ConsumeStatus, Message, MessageSelector
from rocketq.client.aio import LitePullConsumer, Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.errors import FilterExpressionError, SystemError_
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster, run_cluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import collect, until

TOPIC = "Selected"


@pytest.fixture
async def sql_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_cluster(
        tmp_path, store_properties=small_store_properties(), enable_property_filter=True
    ) as cluster:
        yield cluster


async def produce(cluster: Cluster, count: int) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(count):
            props = {"seq": str(i), "region": "eu" if i % 3 == 0 else "us"}
            await producer.send(Message(TOPIC, b"b%d" % i, tags=f"T{i % 2}", properties=props))


def seqs(msgs: list[MessageExt]) -> list[int]:
    return sorted(int(m.properties["seq"]) for m in msgs)


async def consume(cluster: Cluster, group: str, selector: MessageSelector, want: int) -> list[int]:
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"}
    consumer = PushConsumer(group, namesrv_addr=cluster.addr, **options)
    consumer.subscribe(TOPIC, selector)
    consumer.register_message_listener(listener)
    async with consumer:
        assert await until(lambda: len(got) >= want, 30)
        # everything that does not match was skipped: the committed offsets reach the end
        assert await until(lambda: sum(cluster.committed(group, TOPIC).values()) == 24, 15)
    return seqs(got)


async def test_push_consumer_by_sql_gets_exactly_the_matching_messages(
    sql_cluster: Cluster,
) -> None:
    await produce(sql_cluster, 24)
    selector = MessageSelector.by_sql("region = 'eu' AND seq >= 6")
    expected = [i for i in range(24) if i % 3 == 0 and i >= 6]
    assert await consume(sql_cluster, "GSql", selector, len(expected)) == expected


async def test_push_consumer_by_tag_filters_by_tag(sql_cluster: Cluster) -> None:
    await produce(sql_cluster, 24)
    selector = MessageSelector.by_tag("T1")
    assert await consume(sql_cluster, "GTag", selector, 12) == list(range(1, 24, 2))


async def test_lite_pull_consumer_by_sql(sql_cluster: Cluster) -> None:
    await produce(sql_cluster, 24)
    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"}
    consumer = LitePullConsumer("GLite", namesrv_addr=sql_cluster.addr, **options)
    consumer.subscribe(TOPIC, MessageSelector.by_sql("seq < 5 OR seq > 21"))
    async with consumer:
        got = await collect(lambda: consumer.poll(0.5), 7, 30)
    assert seqs(got) == [0, 1, 2, 3, 4, 22, 23]


def test_by_sql_with_a_bad_expression_fails_at_once() -> None:
    with pytest.raises(FilterExpressionError, match="Encountered <EOF> at line 1, column 9"):
        MessageSelector.by_sql("region =")


async def test_start_fails_when_the_broker_has_property_filters_off(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC)
    consumer = PushConsumer("GOff", namesrv_addr=cluster.addr, **FAST_CONSUMER)
    consumer.subscribe(TOPIC, MessageSelector.by_sql("seq > 1"))
    consumer.register_message_listener(lambda msgs: ConsumeStatus.CONSUME_SUCCESS)
    with pytest.raises(SystemError_, match="enablePropertyFilter"):
        await consumer.start()
