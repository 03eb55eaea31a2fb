"""ProxiedChannel: gRPC clients on one proxy connection are separate clients of the broker."""

from __future__ import annotations

import asyncio

from rocketq.broker.client_manager import (
    ClientChannelInfo,
    ConsumerIdsChangeNotifier,
    ConsumerManager,
    ProducerManager,
)
from rocketq.broker.proxied_channel import PROXY_CLIENT_ADDR, ProxiedChannel, client_channel
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, ConsumeType, MessageModel
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.server import RemotingServer
from tests.broker.channel_pair import Clock, connect


def register(cm: ConsumerManager, channel: ProxiedChannel) -> bool:
    return cm.register_consumer(
        "g",
        ClientChannelInfo(channel, channel.client_id, "PYTHON", 437),
        ConsumeType.CONSUME_PASSIVELY,
        MessageModel.CLUSTERING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        [SubscriptionData(topic="T")],
    )


async def test_two_grpc_clients_on_one_connection_are_two_consumers_until_it_closes(
    server: RemotingServer,
) -> None:
    notifier = ConsumerIdsChangeNotifier(asyncio.get_running_loop())
    cm = ConsumerManager(notifier)
    link = await connect(server)
    try:
        a = ProxiedChannel(link.channel, "A", "10.0.0.1:5001")
        b = ProxiedChannel(link.channel, "B", "10.0.0.2:5002")
        assert register(cm, a)
        assert register(cm, b)
        assert not register(cm, ProxiedChannel(link.channel, "A", "10.0.0.1:5001"))
        info = cm.get_consumer_group_info("g")
        assert info is not None
        addrs = {i.client_id: i.channel.remote_addr for i in info.channel_info_table.values()}
        assert addrs == {"A": "10.0.0.1:5001", "B": "10.0.0.2:5002"}
        await notifier.drain()
        assert link.notified.empty()  # a gRPC client has no rebalance to be told about
        cm.unregister_consumer("g", ProxiedChannel(link.channel, "A"))
        assert info.all_client_ids() == ["B"]
        assert cm.do_channel_close_event(link.channel) == ["g"]
        assert cm.get_consumer_group_info("g") is None
    finally:
        await link.client.shutdown()


async def test_an_expired_grpc_client_leaves_without_closing_the_proxys_connection(
    server: RemotingServer,
) -> None:
    clock = Clock()
    pm = ProducerManager(channel_expired_timeout_ms=1000, clock=clock)
    link = await connect(server)
    try:
        old = client_channel(link.channel, "Old", {PROXY_CLIENT_ADDR: "10.0.0.1:1"})
        assert isinstance(old, ProxiedChannel)
        pm.register_producer("T", ClientChannelInfo(old, "Old"))
        clock.ms += 2000
        fresh = client_channel(link.channel, "New", {PROXY_CLIENT_ADDR: "10.0.0.2:2"})
        pm.register_producer("T", ClientChannelInfo(fresh, "New"))
        pm.register_producer("T", ClientChannelInfo(link.channel, "proxy"))
        assert pm.scan_not_active_channel() == [old]
        assert not link.channel.is_closed
        table = pm.group_channel_table["T"]
        assert sorted(i.client_id for i in table.values()) == ["New", "proxy"]
        pm.do_channel_close_event(link.channel)
        assert "T" not in pm.group_channel_table
    finally:
        await link.client.shutdown()


def test_a_heartbeat_without_the_proxy_field_keys_the_connection_itself() -> None:
    carrier = object()
    assert client_channel(carrier, "A", {}) is carrier  # type: ignore[arg-type]
