"""An unknown topic is answered with TBW102's route when a broker auto-creates topics.

ali-ons 3.12.0 does not fall back to TBW102 itself (ali-sdk/ali-ons#90), so without this its
first send to a new topic fails with "No topic route info in name server".
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.namesrv.auto_create_route import is_auto_creatable_topic
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController, start_namesrv
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, decode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv

WAIT = 5.0
AUTO_ROUTE = NamesrvConfig(auto_create_topic_route_enable=True)
FIXTURES = Path(__file__).resolve().parents[1] / "remoting" / "fixtures"


def route_request(topic: str) -> RemotingCommand:
    return RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[NamesrvController, BrokerController]]:
    async with (
        run_namesrv(config=AUTO_ROUTE) as ns,
        run_broker(tmp_path / "store", namesrv_addr=ns.addr, auto_create_topic_enable=True) as b,
    ):
        yield ns, b


async def test_unknown_topic_gets_four_writable_queues_on_the_auto_creating_broker(
    cluster: tuple[NamesrvController, BrokerController],
) -> None:
    ns, broker = cluster
    async with RemotingClient() as client:
        reply = await client.invoke(ns.addr, route_request("FreshTopic"), WAIT)
    assert reply.code == ResponseCode.SUCCESS
    route = TopicRouteData.decode(reply.body)
    assert [
        (q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas
    ] == [(broker.config.broker_name, 4, 4, 6)]
    assert route.broker_datas[0].broker_addrs[0] == broker.broker_addr


async def test_retry_and_system_topics_are_still_unknown(
    cluster: tuple[NamesrvController, BrokerController],
) -> None:
    ns, _ = cluster
    async with RemotingClient() as client:
        for topic in ("%RETRY%G", "%DLQ%G", "RMQ_SYS_TRANS_HALF_TOPIC", "bad topic"):
            reply = await client.invoke(ns.addr, route_request(topic), WAIT)
            assert reply.code == ResponseCode.TOPIC_NOT_EXIST, topic


async def test_route_is_not_made_up_by_default_as_in_rocketmq(tmp_path: Path) -> None:
    ns = await start_namesrv(0)
    try:
        async with (
            run_broker(tmp_path / "store", namesrv_addr=ns.addr, auto_create_topic_enable=True),
            RemotingClient() as client,
        ):
            assert (await client.invoke(ns.addr, route_request("TBW102"), WAIT)).code == 0
            reply = await client.invoke(ns.addr, route_request("FreshTopic"), WAIT)
    finally:
        await ns.shutdown()
    assert reply.code == ResponseCode.TOPIC_NOT_EXIST
    assert reply.remark is not None
    assert reply.remark.startswith("No topic route info in name server for the topic: FreshTopic")


async def test_broker_without_auto_create_gives_no_route(tmp_path: Path) -> None:
    async with (
        run_namesrv(config=AUTO_ROUTE) as ns,
        run_broker(tmp_path / "store", namesrv_addr=ns.addr, auto_create_topic_enable=False),
        RemotingClient() as client,
    ):
        reply = await client.invoke(ns.addr, route_request("FreshTopic"), WAIT)
    assert reply.code == ResponseCode.TOPIC_NOT_EXIST


def test_ordinary_topic_names_are_auto_creatable() -> None:
    assert is_auto_creatable_topic("Orders_2024-x")
    assert not is_auto_creatable_topic("TBW102")
    assert not is_auto_creatable_topic("x" * 128)
    assert not is_auto_creatable_topic("")
    assert not is_auto_creatable_topic("SCHEDULE_TOPIC_XXXX")
    assert not is_auto_creatable_topic("rmq_sys_wheel")
    assert not is_auto_creatable_topic("RMQ_SYS_TRANS_HALF_TOPIC")
    assert not is_auto_creatable_topic("%RETRY%group")
    assert not is_auto_creatable_topic("bad topic")


async def test_ali_ons_route_frame_for_a_new_topic_gets_a_route(
    cluster: tuple[NamesrvController, BrokerController],
) -> None:
    """The bytes ali-ons 3.12.0 wrote (fixture 01-ns-producer) are answered with a route."""
    ns, _ = cluster
    frame = (FIXTURES / "ali-ons" / "01-ns-producer" / "0001-code105.bin").read_bytes()
    request = decode(frame)
    reader, writer = await asyncio.open_connection("127.0.0.1", ns.port)
    try:
        writer.write(frame)
        await writer.drain()
        decoder = FrameDecoder()
        replies: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT):
            while not replies:
                replies = decoder.feed(await reader.read(65536))
    finally:
        writer.close()
    (reply,) = replies
    assert reply.opaque == request.opaque
    assert reply.code == ResponseCode.SUCCESS, reply.remark
    route = TopicRouteData.decode(reply.body)
    assert route.queue_datas[0].write_queue_nums == 4
