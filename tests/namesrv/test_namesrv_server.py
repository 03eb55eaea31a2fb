"""The name server over real sockets: registration, routes, expiry, KV config, C++ frames."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv import NamesrvConfig, NamesrvController, start_namesrv
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, decode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.namesrv_headers import RegisterBrokerRequestHeader
from rocketq.remoting.protocol.register_broker_body import (
    RegisterBrokerBody,
    TopicConfigSerializeWrapper,
)
from rocketq.remoting.protocol.topic_route import ClusterInfo, KVTable, TopicList, TopicRouteData
from rocketq.response_code import ResponseCode
from rocketq.testing import BlockingRemotingClient

FIXTURES = Path(__file__).resolve().parents[1] / "remoting" / "fixtures"
WAIT = 5.0


class FakeClock:
    def __init__(self) -> None:
        self.now_ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def namesrv(clock: FakeClock) -> AsyncIterator[NamesrvController]:
    controller = await start_namesrv(0, clock=clock)
    try:
        yield controller
    finally:
        await controller.shutdown()


@pytest.fixture
async def client() -> AsyncIterator[RemotingClient]:
    async with RemotingClient() as c:
        yield c


def register_request(
    topics: dict[str, int],
    *,
    broker_name: str = "broker-a",
    broker_addr: str = "127.0.0.1:10911",
    broker_id: int = 0,
    counter: int = 1,
    compressed: bool = False,
    crc: bool = True,
) -> RemotingCommand:
    body = RegisterBrokerBody(
        topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
            topic_config_table={
                t: TopicConfig(topic_name=t, read_queue_nums=n, write_queue_nums=n, perm=6)
                for t, n in topics.items()
            },
            data_version=DataVersion(timestamp=1_700_000_000_000, counter=counter),
        )
    )
    data = body.encode_compressed() if compressed else body.encode()
    header = RegisterBrokerRequestHeader(
        broker_name=broker_name,
        broker_addr=broker_addr,
        cluster_name="DefaultCluster",
        ha_server_addr=broker_addr.replace("10911", "10912"),
        broker_id=broker_id,
        compressed=compressed,
        body_crc32=zlib.crc32(data) & 0x7FFFFFFF if crc else 0,
    )
    return RemotingCommand.create_request(RequestCode.REGISTER_BROKER, header.to_ext_fields(), data)


def route_request(topic: str) -> RemotingCommand:
    return RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


async def test_registered_broker_route_is_served_to_a_client(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    resp = await client.invoke(namesrv.addr, register_request({"TopicA": 4}), WAIT)
    assert resp.code == ResponseCode.SUCCESS
    assert resp.body == b""
    route_resp = await client.invoke(namesrv.addr, route_request("TopicA"), WAIT)
    assert route_resp.code == ResponseCode.SUCCESS
    route = TopicRouteData.decode(route_resp.body)
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:10911"}
    assert (route.queue_datas[0].write_queue_nums, route.queue_datas[0].perm) == (4, 6)
    assert b'"brokerAddrs":{"0":"127.0.0.1:10911"}' in route_resp.body


async def test_compressed_registration_is_understood(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    resp = await client.invoke(namesrv.addr, register_request({"Z": 2}, compressed=True), WAIT)
    assert resp.code == ResponseCode.SUCCESS
    route = TopicRouteData.decode(
        (await client.invoke(namesrv.addr, route_request("Z"), WAIT)).body
    )
    assert route.queue_datas[0].read_queue_nums == 2


async def test_registration_with_wrong_crc_is_refused(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    req = register_request({"T": 1})
    req.ext_fields["bodyCrc32"] = "12345"
    resp = await client.invoke(namesrv.addr, req, WAIT)
    assert (resp.code, resp.remark) == (ResponseCode.SYSTEM_ERROR, "crc32 not match")


async def test_slave_registration_is_answered_with_master_addresses(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    await client.invoke(namesrv.addr, register_request({"T": 1}), WAIT)
    resp = await client.invoke(
        namesrv.addr,
        register_request({"T": 1}, broker_addr="127.0.0.1:20911", broker_id=1),
        WAIT,
    )
    assert resp.ext_fields == {"haServerAddr": "127.0.0.1:10912", "masterAddr": "127.0.0.1:10911"}


async def test_unknown_topic_answers_topic_not_exist_with_remark(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    resp = await client.invoke(namesrv.addr, route_request("Nope"), WAIT)
    assert resp.code == ResponseCode.TOPIC_NOT_EXIST
    assert resp.remark is not None
    assert resp.remark.startswith("No topic route info in name server for the topic: Nope")
    assert resp.body == b""


async def test_cpp_client_route_frames_get_correct_answers(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    frames = sorted((FIXTURES / "cpp-client-1.0.1").glob("*/*-code105.bin"))
    assert frames
    topics = {decode(p.read_bytes()).ext_fields["topic"] for p in frames}
    known = sorted(topics)[: len(topics) // 2 + 1]
    await client.invoke(namesrv.addr, register_request(dict.fromkeys(known, 4)), WAIT)
    reader, writer = await asyncio.open_connection("127.0.0.1", namesrv.port)
    try:
        decoder = FrameDecoder()
        for path in frames:
            request = decode(path.read_bytes())
            writer.write(path.read_bytes())
            await writer.drain()
            replies: list[RemotingCommand] = []
            async with asyncio.timeout(WAIT):
                while not replies:
                    replies = decoder.feed(await reader.read(65536))
            (reply,) = replies
            assert reply.opaque == request.opaque
            assert reply.flag == 1
            assert reply.serialize_type == 0
            if request.ext_fields["topic"] in known:
                assert reply.code == ResponseCode.SUCCESS
                route = TopicRouteData.decode(reply.body)
                assert route.queue_datas[0].read_queue_nums == 4
            else:
                assert reply.code == ResponseCode.TOPIC_NOT_EXIST
    finally:
        writer.close()


async def test_broker_that_stops_reporting_expires_after_120_seconds(
    namesrv: NamesrvController, client: RemotingClient, clock: FakeClock
) -> None:
    await client.invoke(namesrv.addr, register_request({"T": 1}), WAIT)
    clock.now_ms += 119_000
    assert namesrv.scan_not_active_broker() == []
    broker_channel = await client.get_channel(namesrv.addr)
    clock.now_ms += 2_000
    assert len(namesrv.scan_not_active_broker()) == 1
    async with RemotingClient() as other:
        resp = await other.invoke(namesrv.addr, route_request("T"), WAIT)
    assert resp.code == ResponseCode.TOPIC_NOT_EXIST
    await asyncio.wait_for(broker_channel.wait_closed(), WAIT)


async def test_broker_connection_close_drops_its_routes(namesrv: NamesrvController) -> None:
    async with RemotingClient() as broker:
        await broker.invoke(namesrv.addr, register_request({"T": 1}), WAIT)
    async with RemotingClient() as c:
        async with asyncio.timeout(WAIT):
            while (await c.invoke(namesrv.addr, route_request("T"), WAIT)).code == 0:  # noqa: ASYNC110 -- the condition is a request
                await asyncio.sleep(0.01)
        assert namesrv.route_info_manager.broker_live_table == {}


async def test_unregister_broker_removes_routes(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    await client.invoke(namesrv.addr, register_request({"T": 1}), WAIT)
    fields = {
        "brokerName": "broker-a",
        "brokerAddr": "127.0.0.1:10911",
        "clusterName": "DefaultCluster",
        "brokerId": "0",
    }
    resp = await client.invoke(
        namesrv.addr, RemotingCommand.create_request(RequestCode.UNREGISTER_BROKER, fields), WAIT
    )
    assert resp.code == ResponseCode.SUCCESS
    assert (await client.invoke(namesrv.addr, route_request("T"), WAIT)).code == 17


async def test_query_data_version_reports_change(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    await client.invoke(namesrv.addr, register_request({"T": 1}, counter=5), WAIT)
    fields = {
        "brokerName": "broker-a",
        "brokerAddr": "127.0.0.1:10911",
        "clusterName": "DefaultCluster",
        "brokerId": "0",
    }
    same = DataVersion(timestamp=1_700_000_000_000, counter=5)
    req = RemotingCommand.create_request(RequestCode.QUERY_DATA_VERSION, fields, same.encode())
    resp = await client.invoke(namesrv.addr, req, WAIT)
    assert resp.ext_fields == {"changed": "false"}
    assert DataVersion.decode(resp.body) == same
    newer = DataVersion(timestamp=1_700_000_000_001, counter=6).encode()
    req = RemotingCommand.create_request(RequestCode.QUERY_DATA_VERSION, fields, newer)
    assert (await client.invoke(namesrv.addr, req, WAIT)).ext_fields == {"changed": "true"}


async def test_kv_config_calls(namesrv: NamesrvController, client: RemotingClient) -> None:
    async def call(code: int, **fields: str) -> RemotingCommand:
        return await client.invoke(namesrv.addr, RemotingCommand.create_request(code, fields), WAIT)

    miss = await call(RequestCode.GET_KV_CONFIG, namespace="ORDER_TOPIC_CONFIG", key="T")
    assert miss.code == ResponseCode.QUERY_NOT_FOUND
    assert miss.remark == "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T"
    assert (await call(RequestCode.GET_KVLIST_BY_NAMESPACE, namespace="NS")).code == 22
    put = await call(RequestCode.PUT_KV_CONFIG, namespace="NS", key="k", value="v")
    assert put.code == ResponseCode.SUCCESS
    got = await call(RequestCode.GET_KV_CONFIG, namespace="NS", key="k")
    assert (got.code, got.ext_fields) == (0, {"value": "v"})
    listed = await call(RequestCode.GET_KVLIST_BY_NAMESPACE, namespace="NS")
    assert KVTable.decode(listed.body).table == {"k": "v"}
    assert (await call(RequestCode.DELETE_KV_CONFIG, namespace="NS", key="k")).code == 0
    assert (await call(RequestCode.GET_KV_CONFIG, namespace="NS", key="k")).code == 22
    missing_header = await call(RequestCode.PUT_KV_CONFIG, namespace="NS")
    assert missing_header.code == ResponseCode.SYSTEM_ERROR
    assert missing_header.remark == "the custom field key is null"


async def test_order_topic_config_is_returned_to_registering_brokers(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    put = RemotingCommand.create_request(
        RequestCode.PUT_KV_CONFIG,
        {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:4"},
    )
    await client.invoke(namesrv.addr, put, WAIT)
    resp = await client.invoke(namesrv.addr, register_request({"T": 4}), WAIT)
    assert KVTable.decode(resp.body).table == {"T": "broker-a:4"}


async def test_kv_config_persists_across_restarts(tmp_path: Path) -> None:
    config = NamesrvConfig(kv_config_path=str(tmp_path / "kvConfig.json"))
    first = await start_namesrv(0, config=config)
    async with RemotingClient() as c:
        put = RemotingCommand.create_request(
            RequestCode.PUT_KV_CONFIG, {"namespace": "NS", "key": "k", "value": "v"}
        )
        await c.invoke(first.addr, put, WAIT)
    await first.shutdown()
    second = await start_namesrv(0, config=config)
    try:
        assert second.kv_config_manager.get_kv_config("NS", "k") == "v"
    finally:
        await second.shutdown()


async def test_cluster_and_topic_list_queries(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    await client.invoke(namesrv.addr, register_request({"T": 1, "U": 2}), WAIT)

    async def call(code: int, **fields: str) -> RemotingCommand:
        return await client.invoke(namesrv.addr, RemotingCommand.create_request(code, fields), WAIT)

    info = ClusterInfo.decode((await call(RequestCode.GET_BROKER_CLUSTER_INFO)).body)
    assert info.cluster_addr_table == {"DefaultCluster": {"broker-a"}}
    assert info.broker_addr_table["broker-a"].broker_addrs == {0: "127.0.0.1:10911"}
    all_topics = TopicList.decode((await call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)).body)
    assert all_topics.topic_list == {"T", "U"}
    by_cluster = await call(RequestCode.GET_TOPICS_BY_CLUSTER, cluster="DefaultCluster")
    assert TopicList.decode(by_cluster.body).topic_list == {"T", "U"}
    system = TopicList.decode((await call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS)).body)
    assert system.topic_list == {"DefaultCluster", "broker-a"}
    assert system.broker_addr == "127.0.0.1:10911"
    assert (await call(RequestCode.DELETE_TOPIC_IN_NAMESRV, topic="U")).code == 0
    wipe = await call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, brokerName="broker-a")
    assert wipe.ext_fields == {"wipeTopicCount": "1"}
    route = TopicRouteData.decode((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="T")).body)
    assert route.queue_datas[0].perm == 4
    assert (await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="U")).code == 17


async def test_blocking_client_reads_routes(namesrv: NamesrvController) -> None:
    async with RemotingClient() as broker:
        await broker.invoke(namesrv.addr, register_request({"T": 3}), WAIT)
        with BlockingRemotingClient(namesrv_addrs=[namesrv.addr]) as blocking:
            resp = await asyncio.to_thread(blocking.invoke, None, route_request("T"), WAIT)
    assert TopicRouteData.decode(resp.body).queue_datas[0].read_queue_nums == 3


async def test_namesrv_config_can_be_read_and_order_topics_switched_on(
    namesrv: NamesrvController, client: RemotingClient
) -> None:
    async def call(code: int, body: bytes = b"") -> RemotingCommand:
        return await client.invoke(
            namesrv.addr, RemotingCommand.create_request(code, None, body), WAIT
        )

    text = (await call(RequestCode.GET_NAMESRV_CONFIG)).body.decode()
    assert "orderMessageEnable=false" in text.splitlines()
    refused = await call(RequestCode.UPDATE_NAMESRV_CONFIG, b"kvConfigPath=/tmp/evil\n")
    assert refused.code == ResponseCode.NO_PERMISSION
    ok = await call(RequestCode.UPDATE_NAMESRV_CONFIG, b"# comment\norderMessageEnable=true\n")
    assert ok.code == ResponseCode.SUCCESS
    put = RemotingCommand.create_request(
        RequestCode.PUT_KV_CONFIG,
        {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:4"},
    )
    await client.invoke(namesrv.addr, put, WAIT)
    await client.invoke(namesrv.addr, register_request({"T": 4}), WAIT)
    route = TopicRouteData.decode(
        (await client.invoke(namesrv.addr, route_request("T"), WAIT)).body
    )
    assert route.order_topic_conf == "broker-a:4"
