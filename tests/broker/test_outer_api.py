from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.broker import BrokerConfig, outer_api
from rocketq.broker.outer_api import BrokerIdentity, BrokerOuterAPI, RegisterBodyCache
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.register_broker_body import RegisterBrokerBody
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode
from rocketq.testing import run_namesrv

WHO = BrokerIdentity(
    cluster_name="DefaultCluster",
    broker_name="broker-x",
    broker_addr="127.0.0.1:10999",
    broker_id=0,
    ha_server_addr="127.0.0.1:11000",
)


async def route(client: RemotingClient, addr: str, topic: str) -> RemotingCommand:
    request = RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
    return await client.invoke(addr, request, 5.0)


async def test_registered_topics_are_routed_and_unregister_removes_them(tmp_path: Path) -> None:
    topics = TopicConfigManager(BrokerConfig(broker_name="broker-x"), tmp_path)
    topics.update_topic_config(
        TopicConfig(topic_name="Orders", read_queue_nums=3, write_queue_nums=3)
    )
    async with run_namesrv() as ns, RemotingClient() as client:
        api = BrokerOuterAPI(client)
        assert await api.register_broker_all([ns.addr], WHO, topics.build_serialize_wrapper()) == {
            ns.addr: True
        }
        response = await route(client, ns.addr, "Orders")
        assert response.code == ResponseCode.SUCCESS
        data = TopicRouteData.decode(response.body)
        assert [q.write_queue_nums for q in data.queue_datas] == [3]
        assert data.broker_datas[0].broker_addrs[0] == "127.0.0.1:10999"
        assert (await route(client, ns.addr, "TBW102")).code == ResponseCode.SUCCESS
        assert await api.unregister_broker_all([ns.addr], WHO) == {ns.addr: True}
        assert (await route(client, ns.addr, "Orders")).code == ResponseCode.TOPIC_NOT_EXIST


async def test_an_unreachable_name_server_does_not_stop_the_others(tmp_path: Path) -> None:
    topics = TopicConfigManager(BrokerConfig(broker_name="broker-x"), tmp_path)
    async with run_namesrv() as ns, RemotingClient(connect_timeout_s=1.0) as client:
        api = BrokerOuterAPI(client, timeout_s=2.0)
        dead = "127.0.0.1:1"
        result = await api.register_broker_all(
            [dead, ns.addr], WHO, topics.build_serialize_wrapper()
        )
        assert result == {dead: False, ns.addr: True}


def many_topics(tmp_path: Path, count: int) -> TopicConfigManager:
    topics = TopicConfigManager(BrokerConfig(broker_name="broker-x"), tmp_path)
    topics.update_topic_config_list(
        TopicConfig(topic_name=f"Many{i:05d}", read_queue_nums=8, write_queue_nums=8)
        for i in range(count)
    )
    return topics


async def test_split_registration_sends_parts_and_every_topic_is_routed(tmp_path: Path) -> None:
    topics = many_topics(tmp_path, 2000)
    table_size = len(topics.topic_config_table)
    async with run_namesrv() as ns, RemotingClient() as client:
        api = BrokerOuterAPI(client)
        wrapper = topics.build_serialize_wrapper()
        assert await api.register_broker_all([ns.addr], WHO, wrapper, split_size=800) == {
            ns.addr: True
        }
        assert len(api.last_register_body_sizes) == -(-table_size // 800)
        for name in ("Many00000", "Many01999", "TBW102"):
            assert (await route(client, ns.addr, name)).code == ResponseCode.SUCCESS
        assert len(ns.route_info_manager.topic_queue_table) == table_size


async def test_a_body_past_the_bound_goes_split_even_with_splitting_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outer_api, "MAX_REGISTER_BODY_BYTES", 64 * 1024)
    topics = many_topics(tmp_path, 1000)
    async with run_namesrv() as ns, RemotingClient() as client:
        api = BrokerOuterAPI(client)
        await api.register_broker_all([ns.addr], WHO, topics.build_serialize_wrapper())
        assert len(api.last_register_body_sizes) == 2  # 800 topics, then the rest
        assert max(api.last_register_body_sizes) < 64 * 1024 * 4
        assert (await route(client, ns.addr, "Many00999")).code == ResponseCode.SUCCESS


def test_the_cached_register_body_equals_the_encoded_one(tmp_path: Path) -> None:
    topics = many_topics(tmp_path, 50)
    topics.update_topic_config(
        TopicConfig(topic_name="Typé", attributes={"message.type": "FIFO"}, perm=4)
    )
    cache = RegisterBodyCache()
    for _ in range(2):  # encoded, then from the cache
        wrapper = topics.build_serialize_wrapper()
        expected = RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()
        assert cache.encode(wrapper) == expected
    topics.update_topic_config(TopicConfig(topic_name="Many00007", read_queue_nums=3))
    wrapper = topics.build_serialize_wrapper()  # a changed config is encoded again
    assert (
        cache.encode(wrapper) == RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()
    )
