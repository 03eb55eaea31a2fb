from __future__ import annotations

import asyncio

from rocketq.broker.client_manager import (
    ClientChannelInfo,
    ConsumerIdsChangeNotifier,
    ConsumerManager,
    ProducerManager,
)
from rocketq.broker.rebalance_lock import RebalanceLockManager
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, ConsumeType, MessageModel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.server import RemotingServer
from tests.broker.channel_pair import Clock, Link, connect

CLUSTERING = MessageModel.CLUSTERING


def register(cm: ConsumerManager, link: Link, client_id: str, group: str = "g") -> bool:
    return cm.register_consumer(
        group,
        ClientChannelInfo(link.channel, client_id),
        ConsumeType.CONSUME_PASSIVELY,
        CLUSTERING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        [SubscriptionData(topic="T", sub_string="TagA")],
    )


async def test_second_consumer_joining_notifies_every_member_with_the_group(
    server: RemotingServer,
) -> None:
    notifier = ConsumerIdsChangeNotifier(asyncio.get_running_loop())
    cm = ConsumerManager(notifier)
    a, b = await connect(server), await connect(server)
    try:
        assert register(cm, a, "A")
        first = await asyncio.wait_for(a.notified.get(), 3.0)
        assert first.ext_fields["consumerGroup"] == "g"
        assert first.is_oneway
        assert register(cm, b, "B")
        for link in (a, b):
            cmd = await asyncio.wait_for(link.notified.get(), 3.0)
            assert cmd.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED
        info = cm.get_consumer_group_info("g")
        assert info is not None
        assert sorted(info.all_client_ids()) == ["A", "B"]
        assert cm.find_subscription_data("g", "T") == SubscriptionData(topic="T", sub_string="TagA")
        assert not register(cm, a, "A")  # a plain heartbeat changes nothing
        await notifier.drain()
        assert a.notified.empty()
    finally:
        await a.client.shutdown()
        await b.client.shutdown()


async def test_closed_channel_leaves_its_group_and_the_rest_are_told(
    server: RemotingServer,
) -> None:
    notifier = ConsumerIdsChangeNotifier(asyncio.get_running_loop())
    cm = ConsumerManager(notifier)
    a, b = await connect(server), await connect(server)
    try:
        register(cm, a, "A")
        register(cm, b, "B")
        await notifier.drain()
        while not a.notified.empty():
            a.notified.get_nowait()
        assert cm.do_channel_close_event(b.channel) == ["g"]
        cmd = await asyncio.wait_for(a.notified.get(), 3.0)
        assert cmd.ext_fields["consumerGroup"] == "g"
        info = cm.get_consumer_group_info("g")
        assert info is not None
        assert info.all_client_ids() == ["A"]
        cm.unregister_consumer("g", a.channel)
        assert cm.get_consumer_group_info("g") is None
    finally:
        await a.client.shutdown()
        await b.client.shutdown()


async def test_silent_clients_expire_after_120_seconds(server: RemotingServer) -> None:
    clock = Clock()
    cm = ConsumerManager(channel_expired_timeout_ms=120_000, clock=clock)
    pm = ProducerManager(channel_expired_timeout_ms=120_000, clock=clock)
    a = await connect(server)
    try:
        register(cm, a, "A")
        pm.register_producer("pg", ClientChannelInfo(a.channel, "A"))
        clock.ms += 120_000
        assert cm.scan_not_active_channel() == []
        assert pm.scan_not_active_channel() == []
        assert pm.get_available_channel("pg") is a.channel
        clock.ms += 1
        assert cm.scan_not_active_channel() == [a.channel]
        assert pm.scan_not_active_channel() == [a.channel]
        assert cm.get_consumer_group_info("g") is None
        assert pm.get_available_channel("pg") is None
        assert a.channel.is_closed
    finally:
        await a.client.shutdown()


async def test_producer_unregister_and_channel_close(server: RemotingServer) -> None:
    pm = ProducerManager()
    a = await connect(server)
    try:
        pm.register_producer("pg", ClientChannelInfo(a.channel, "A"))
        pm.register_producer("pg2", ClientChannelInfo(a.channel, "A"))
        pm.unregister_producer("pg", a.channel)
        assert "pg" not in pm.group_channel_table
        pm.do_channel_close_event(a.channel)
        assert pm.group_channel_table == {}
    finally:
        await a.client.shutdown()


def test_rebalance_lock_is_exclusive_renewable_and_expires_after_60_seconds() -> None:
    clock = Clock()
    locks = RebalanceLockManager(lock_max_live_time_ms=60_000, clock=clock)
    mq0, mq1 = ("T", "b", 0), ("T", "b", 1)
    assert locks.try_lock_batch("g", [mq0], "A") == {mq0}
    assert locks.try_lock_batch("g", [mq0, mq1], "B") == {mq1}
    clock.ms += 30_000
    assert locks.try_lock_batch("g", [mq0], "A") == {mq0}  # renewal
    clock.ms += 60_000
    assert locks.is_locked("g", mq0, "A")
    clock.ms += 1
    assert not locks.is_locked("g", mq0, "A")
    assert locks.try_lock_batch("g", [mq0], "B") == {mq0}
    locks.unlock_batch("g", [mq0], "A")  # not A's any more: no effect
    assert locks.is_locked("g", mq0, "B")
    locks.unlock_batch("g", [mq0, mq1], "B")
    assert locks.try_lock_batch("g", [mq0, mq1], "C") == {mq0, mq1}
