from __future__ import annotations

from pathlib import Path

from rocketq.broker import BrokerConfig
from rocketq.broker.outer_api import BrokerIdentity, BrokerOuterAPI
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
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
