"""AdminClient's message queries and consumer admin calls against a real broker with real
producers, push and lite pull consumers: view/query/uniq key, offsets, consume stats,
connections, running info (307), consume directly (309) and reset by time (222 -> 220)."""

from __future__ import annotations

import logging
import time

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import LitePullConsumer, Producer, PushConsumer
from rocketq.client.status import SendResult
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.errors import (
    BrokerResponseError,
    ConsumerNotOnlineError,
    NoMessageError,
    TopicNotExistError,
)
from rocketq.remoting.protocol.bodies import ConsumeType, MessageModel
from rocketq.remoting.protocol.consumer_bodies import PROP_CONSUME_TYPE, CMResult
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster
from rocketq.testing.wait import collect, until


async def produce(cluster: Cluster, topic: str, count: int) -> list[SendResult]:
    await cluster.create_topic(topic, 2)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        sent = [
            await producer.send(
                Message(topic, f"body-{i}".encode(), tags="T", keys=[f"k{i}", "shared"])
            )
            for i in range(count)
        ]
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 5)  # queues and index built
    return sent


class Collector:
    def __init__(self) -> None:
        self.msgs: list[MessageExt] = []

    def __call__(self, msgs: list[MessageExt]) -> ConsumeStatus:
        self.msgs.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS


async def start_consumer(
    cluster: Cluster, group: str, topic: str
) -> tuple[PushConsumer, Collector]:
    got = Collector()
    consumer = PushConsumer(
        group,
        namesrv_addr=cluster.addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe(topic, "*")
    consumer.register_message_listener(got)
    await consumer.start()
    return consumer, got


async def test_view_message_by_offset_msg_id_returns_the_stored_message(cluster: Cluster) -> None:
    sent = await produce(cluster, "ViewTopic", 3)
    async with AsyncAdminClient(cluster.addr) as admin:
        msg = await admin.view_message(sent[1].offset_msg_id)
        by_uniq = await admin.view_message(sent[2].msg_id, "ViewTopic")
        with pytest.raises(ValueError, match="not hex"):
            await admin.view_message("not-an-id")
    assert (msg.topic, msg.body, msg.keys) == ("ViewTopic", b"body-1", ["k1", "shared"])
    assert msg.uniq_key == sent[1].msg_id
    assert by_uniq.body == b"body-2"


async def test_query_by_key_finds_every_match_and_nothing_else(cluster: Cluster) -> None:
    await produce(cluster, "KeyTopic", 5)
    await produce(cluster, "OtherKeyTopic", 2)
    async with AsyncAdminClient(cluster.addr) as admin:
        one = await admin.query_message("KeyTopic", "k3")
        shared = await admin.query_message("KeyTopic", "shared", max_num=32)
        with pytest.raises(NoMessageError):
            await admin.query_message("KeyTopic", "no-such-key")
    assert [m.body for m in one.message_list] == [b"body-3"]
    assert sorted(m.body for m in shared.message_list) == [f"body-{i}".encode() for i in range(5)]
    assert {m.topic for m in shared.message_list} == {"KeyTopic"}
    assert one.index_last_update_timestamp > 0


async def test_query_by_uniq_key_finds_the_message_the_send_result_named(
    cluster: Cluster,
) -> None:
    sent = await produce(cluster, "UniqTopic", 4)
    async with AsyncAdminClient(cluster.addr) as admin:
        found = await admin.query_message_by_uniq_key("UniqTopic", sent[2].msg_id)
        missing = await admin.query_message_by_uniq_key("UniqTopic", "0" * 32)
    assert found is not None
    assert found.body == b"body-2"
    assert missing is None


async def test_offset_queries_answer_max_min_search_and_earliest_time(cluster: Cluster) -> None:
    before_ms = int(time.time() * 1000) - 1000
    sent = await produce(cluster, "OffsetTopic", 6)
    mq = sent[0].message_queue
    count = sum(1 for s in sent if s.message_queue == mq)
    async with AsyncAdminClient(cluster.addr) as admin:
        assert await admin.max_offset(mq) == count
        assert await admin.min_offset(mq) == 0
        assert await admin.search_offset(mq, before_ms) == 0
        assert await admin.search_offset(mq, int(time.time() * 1000) + 60_000) == count
        earliest = await admin.earliest_msg_store_time(mq)
        empty = MessageQueue("OffsetTopic", "broker-a", 1 - mq.queue_id)
        assert await admin.max_offset(empty) == count_other(sent, empty)
    assert before_ms <= earliest <= int(time.time() * 1000)


def count_other(sent: list[SendResult], mq: MessageQueue) -> int:
    return sum(1 for s in sent if s.message_queue == mq)


@pytest.mark.timeout(60)
async def test_consume_stats_connections_and_offsets_describe_a_live_group(
    cluster: Cluster,
) -> None:
    await produce(cluster, "StatsTopic", 8)
    consumer, got = await start_consumer(cluster, "StatsGroup", "StatsTopic")
    broker = cluster.broker.broker_addr
    try:
        assert await until(lambda: len(got.msgs) == 8, 30)
        assert await until(
            lambda: sum(cluster.committed("StatsGroup", "StatsTopic").values()) == 8, 10
        )
        async with AsyncAdminClient(cluster.addr) as admin:
            stats = await admin.examine_consume_stats("StatsGroup", "StatsTopic")
            every_topic = await admin.examine_consume_stats("StatsGroup")
            topic_stats = await admin.examine_topic_stats("StatsTopic")
            conn = await admin.examine_consumer_connection_info("StatsGroup")
            who = await admin.query_topic_consume_by_who("StatsTopic")
            offsets = await admin.get_all_consumer_offset(broker)
            cq = await admin.query_consume_queue(broker, "StatsTopic", 0, 0, 3, "StatsGroup")
            with pytest.raises(ConsumerNotOnlineError):
                await admin.examine_consumer_connection_info("NobodyGroup")
    finally:
        await consumer.shutdown()
    assert stats.compute_total_diff() == 0
    assert set(stats.offset_table) <= set(every_topic.offset_table)
    assert sum(w.broker_offset for w in stats.offset_table.values()) == 8
    assert all(w.last_timestamp > 0 for w in stats.offset_table.values() if w.consumer_offset)
    assert sum(t.max_offset for t in topic_stats.offset_table.values()) == 8
    assert conn.consume_type is ConsumeType.CONSUME_PASSIVELY
    assert conn.message_model is MessageModel.CLUSTERING
    assert "StatsTopic" in conn.subscription_table
    assert [c.client_id for c in conn.connection_set] == [consumer.config.build_client_id()]
    assert conn.connection_set[0].language == "PYTHON"  # ClientConfig.language of our client
    assert "StatsGroup" in who.group_list
    assert sum(offsets.offset_table["StatsTopic@StatsGroup"].values()) == 8
    assert (
        cq.max_queue_index
        == topic_stats.offset_table[
            next(mq for mq in topic_stats.offset_table if mq.queue_id == 0)
        ].max_offset
    )
    assert len(cq.queue_data) == min(3, cq.max_queue_index)
    assert cq.subscription_data is not None
    assert cq.subscription_data.topic == "StatsTopic"


async def test_producer_connection_lists_the_live_producer(cluster: Cluster) -> None:
    await cluster.create_topic("ProducerConnTopic", 1)
    async with (
        Producer("ConnPG", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer,
        AsyncAdminClient(cluster.addr) as admin,
    ):
        await producer.send(Message("ProducerConnTopic", b"x"))
        conn = await admin.examine_producer_connection_info("ConnPG", "ProducerConnTopic")
        with pytest.raises(BrokerResponseError, match="not exist"):
            await admin.examine_producer_connection_info("NoSuchPG", "ProducerConnTopic")
    assert [c.client_id for c in conn.connection_set] == [producer.config.build_client_id()]


async def test_delay_offsets_show_the_schedule_progress(cluster: Cluster) -> None:
    await cluster.create_topic("DelayTopic", 1)
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        msg = Message("DelayTopic", b"later")
        msg.delay_time_level = 1
        await producer.send(msg)
    store = cluster.broker.message_store
    assert await until(lambda: store.get_max_offset_in_queue("DelayTopic", 0) == 1, 15)
    async with AsyncAdminClient(cluster.addr) as admin:
        delay = await admin.get_all_delay_offset(cluster.broker.broker_addr)
    assert delay.offset_table.get(1) == 1


@pytest.mark.timeout(60)
async def test_running_info_and_consume_directly_are_answered_by_the_consumer(
    cluster: Cluster,
) -> None:
    sent = await produce(cluster, "RunningTopic", 4)
    consumer, got = await start_consumer(cluster, "RunningGroup", "RunningTopic")
    client_id = consumer.config.build_client_id()
    try:
        assert await until(lambda: len(got.msgs) == 4, 30)
        async with AsyncAdminClient(cluster.addr) as admin:
            info = await admin.get_consumer_running_info("RunningGroup", client_id, jstack=True)
            result = await admin.consume_message_directly(
                "RunningGroup", client_id, "RunningTopic", sent[0].offset_msg_id
            )
            with pytest.raises(BrokerResponseError, match="not online"):
                await admin.get_consumer_running_info("RunningGroup", "10.0.0.1@ghost")
    finally:
        await consumer.shutdown()
    assert info.properties[PROP_CONSUME_TYPE] == "CONSUME_PASSIVELY"
    assert info.properties["consumerGroup"] == "RunningGroup"
    assert info.properties["messageModel"] == "CLUSTERING"
    assert int(info.properties["PROP_CONSUMER_START_TIMESTAMP"]) > 0
    status = info.status_table["RunningTopic"]
    assert status.consume_ok_tps > 0
    assert status.pull_tps > 0
    assert status.consume_failed_msgs == 0
    assert {s.topic for s in info.subscription_set} == {"RunningTopic", "%RETRY%RunningGroup"}
    assert {mq.topic for mq in info.mq_table} >= {"RunningTopic"}
    assert info.jstack
    assert "Thread" in info.jstack
    assert result.consume_result is CMResult.CR_SUCCESS
    assert [m.body for m in got.msgs].count(b"body-0") == 2


@pytest.mark.timeout(60)
async def test_reset_offset_by_time_makes_the_live_consumer_read_again(cluster: Cluster) -> None:
    await produce(cluster, "ResetTopic", 6)
    consumer, got = await start_consumer(cluster, "ResetGroup", "ResetTopic")
    try:
        assert await until(lambda: len(got.msgs) == 6, 30)
        assert await until(
            lambda: sum(cluster.committed("ResetGroup", "ResetTopic").values()) == 6, 10
        )
        async with AsyncAdminClient(cluster.addr) as admin:
            table = await admin.reset_offset_by_timestamp("ResetTopic", "ResetGroup", 0)
            with pytest.raises(BrokerResponseError, match="not exist"):
                await admin.reset_offset_by_timestamp("ResetTopic", "NeverConsumed", 0)
        assert set(table.values()) == {0}
        assert await until(lambda: len(got.msgs) == 12, 30)
        assert await until(
            lambda: sum(cluster.committed("ResetGroup", "ResetTopic").values()) == 6, 10
        )
    finally:
        await consumer.shutdown()
    assert sorted(m.body for m in got.msgs) == sorted([f"body-{i}".encode() for i in range(6)] * 2)


@pytest.mark.timeout(60)
async def test_a_lite_pull_consumer_answers_running_info_and_refuses_direct_consume(
    cluster: Cluster,
) -> None:
    sent = await produce(cluster, "LiteTopic", 2)
    consumer = LitePullConsumer("LiteGroup", namesrv_addr=cluster.addr, **FAST_CLIENT)
    consumer.subscribe("LiteTopic")
    await consumer.start()
    try:
        async with AsyncAdminClient(cluster.addr) as admin:
            assert await until(
                lambda: (
                    cluster.broker.consumer_manager.get_consumer_group_info("LiteGroup") is not None
                ),
                10,
            )
            client_id = consumer.config.build_client_id()
            info = await admin.get_consumer_running_info("LiteGroup", client_id)
            result = await admin.consume_message_directly(
                "LiteGroup", client_id, "LiteTopic", sent[0].offset_msg_id
            )
    finally:
        await consumer.shutdown()
    assert info.properties[PROP_CONSUME_TYPE] == "CONSUME_ACTIVELY"
    assert "LiteTopic" in {s.topic for s in info.subscription_set}
    assert result.consume_result is CMResult.CR_THROW_EXCEPTION
    assert "no message listener" in (result.remark or "")


@pytest.mark.timeout(60)
async def test_reset_offset_of_an_offline_group_moves_the_broker_offsets(cluster: Cluster) -> None:
    await produce(cluster, "OfflineReset", 4)
    consumer, got = await start_consumer(cluster, "OfflineGroup", "OfflineReset")
    try:
        assert await until(lambda: len(got.msgs) == 4, 30)
    finally:
        await consumer.shutdown()
    assert sum(cluster.committed("OfflineGroup", "OfflineReset").values()) == 4
    async with AsyncAdminClient(cluster.addr) as admin:
        table = await admin.reset_offset_by_timestamp("OfflineReset", "OfflineGroup", 0)
    assert set(table.values()) == {0}
    assert set(cluster.committed("OfflineGroup", "OfflineReset").values()) == {0}


async def test_a_group_without_a_consumer_client_announces_itself_and_commits_offsets(
    cluster: Cluster,
) -> None:
    """What Spark's topic source does for ``consumerGroup``: one heartbeat, then offsets."""
    await produce(cluster, "AnnouncedTopic", 4)
    async with AsyncAdminClient(cluster.addr) as admin:
        queues = await admin.fetch_subscribe_message_queues("AnnouncedTopic")
        with pytest.raises(TopicNotExistError):
            await admin.fetch_subscribe_message_queues("NoSuchTopic")
        addrs = await admin.register_consumer_group(
            "AnnouncedGroup", ["AnnouncedTopic", "NoSuchTopic"], "127.0.0.1@announcer"
        )
        connection = await admin.examine_consumer_connection_info("AnnouncedGroup")
        for mq in sorted(queues):
            await admin.update_consume_offset(addrs[0], "AnnouncedGroup", mq, 2)
        stats = await admin.examine_consume_stats("AnnouncedGroup", "AnnouncedTopic")
    broker_name = cluster.broker.config.broker_name
    assert queues == {MessageQueue("AnnouncedTopic", broker_name, q) for q in (0, 1)}
    assert addrs == [cluster.broker.broker_addr]
    assert [c.client_id for c in connection.connection_set] == ["127.0.0.1@announcer"]
    assert connection.consume_type is ConsumeType.CONSUME_ACTIVELY
    assert cluster.committed("AnnouncedGroup", "AnnouncedTopic") == {0: 2, 1: 2}
    assert sum(w.consumer_offset for w in stats.offset_table.values()) == 4


async def poll_count(consumer: LitePullConsumer, count: int, timeout_s: float) -> list[MessageExt]:
    return await collect(lambda: consumer.poll(0.5), count, timeout_s)


@pytest.mark.timeout(60)
async def test_a_lite_pull_consumer_ignores_a_reset_with_a_warning_and_reads_on(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rocketq.client.aio.consumer_admin")
    await produce(cluster, "LiteReset", 4)
    consumer = LitePullConsumer(
        "LiteResetGroup",
        namesrv_addr=cluster.addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe("LiteReset")
    await consumer.start()
    try:
        before = await poll_count(consumer, 4, 30)
        await consumer.commit()
        assert await until(
            lambda: sum(cluster.committed("LiteResetGroup", "LiteReset").values()) == 4, 10
        )
        async with AsyncAdminClient(cluster.addr) as admin:
            table = await admin.reset_offset_by_timestamp("LiteReset", "LiteResetGroup", 0)
        assert await until(
            lambda: any("is not a push consumer" in r.getMessage() for r in caplog.records), 10
        )
        await produce(cluster, "LiteReset", 2)
        after = await poll_count(consumer, 2, 30)
        after += await consumer.poll(1.0)  # a replay of the first four would show here
    finally:
        await consumer.shutdown()
    assert set(table.values()) == {0}
    assert len(before) == 4
    seen = {(m.queue_id, m.queue_offset) for m in before}
    assert len(after) == 2
    assert not seen & {(m.queue_id, m.queue_offset) for m in after}
