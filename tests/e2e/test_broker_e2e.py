"""Producer -> broker -> consumer over raw remoting commands, against a real name server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketq.common import message_decoder as codec
from rocketq.common.message import Message
from rocketq.common.message_id import decode_message_id
from rocketq.common.pull_sys_flag import FLAG_COMMIT_OFFSET, FLAG_SUBSCRIPTION, FLAG_SUSPEND
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.bodies import ConsumerListBody
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker, until
from rocketq.testing.cluster import Cluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import heartbeat, pull_request, request, send_request

pytestmark = pytest.mark.e2e
WAIT = 10.0


async def test_send_auto_creates_the_topic_and_registers_its_route(cluster: Cluster) -> None:
    first = await cluster.send_raw("AutoTopic", b"one", tags="TagA")
    second = await cluster.send_raw("AutoTopic", b"two", tags="TagA")
    assert len(first["msgId"]) == 32
    assert (first["queueId"], first["queueOffset"], second["queueOffset"]) == ("0", "0", "1")
    host, _offset = decode_message_id(first["msgId"])
    assert host == ("127.0.0.1", cluster.broker.port)
    topic = cluster.broker.topic_config_manager.select_topic_config("AutoTopic")
    assert topic is not None
    assert topic.write_queue_nums == 4
    route_req = request(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="AutoTopic")
    for _ in range(50):  # registration runs in the background right after the create
        route = await cluster.client.invoke(cluster.namesrv.addr, route_req, WAIT)
        if route.code == ResponseCode.SUCCESS:
            break
        await asyncio.sleep(0.05)
        route_req = request(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="AutoTopic")
    assert route.code == ResponseCode.SUCCESS
    data = TopicRouteData.decode(route.body)
    assert data.broker_datas[0].broker_addrs[0] == cluster.broker_addr


async def test_pulled_records_keep_body_tags_keys_and_properties(cluster: Cluster) -> None:
    await cluster.send_raw("T1", b"hello", tags="TagA", keys="k1 k2", extra={"color": "red"})
    response = await cluster.client.invoke(
        cluster.broker_addr, pull_request("G1", "T1", 0, 0), WAIT
    )
    assert response.code == ResponseCode.SUCCESS
    assert response.ext_fields["nextBeginOffset"] == "1"
    assert response.ext_fields["maxOffset"] == "1"
    (msg,) = codec.decode_messages(response.body)
    assert msg.body == b"hello"
    assert msg.topic == "T1"
    assert msg.properties["TAGS"] == "TagA"
    assert msg.properties["KEYS"] == "k1 k2"
    assert msg.properties["color"] == "red"
    assert msg.properties["CLUSTER"] == "DefaultCluster"
    assert "WAIT" not in msg.properties
    assert msg.store_host == ("127.0.0.1", cluster.broker.port)


async def test_tag_filter_returns_only_matching_tags(cluster: Cluster) -> None:
    for i in range(6):
        await cluster.send_raw("T2", f"m{i}".encode(), tags="TagA" if i % 2 else "TagB")
    response = await cluster.client.invoke(
        cluster.broker_addr, pull_request("G2", "T2", 0, 0, expression="TagA"), WAIT
    )
    assert response.code == ResponseCode.SUCCESS
    assert [m.body for m in codec.decode_messages(response.body)] == [b"m1", b"m3", b"m5"]
    assert response.ext_fields["nextBeginOffset"] == "6"


async def test_pull_status_codes_follow_rocketmq(cluster: Cluster) -> None:
    await cluster.send_raw("T3", b"x")
    at_end = await cluster.client.invoke(cluster.broker_addr, pull_request("G3", "T3", 0, 1), WAIT)
    assert at_end.code == ResponseCode.PULL_NOT_FOUND
    assert at_end.ext_fields["nextBeginOffset"] == "1"
    beyond = await cluster.client.invoke(cluster.broker_addr, pull_request("G3", "T3", 0, 9), WAIT)
    assert beyond.code == ResponseCode.PULL_OFFSET_MOVED
    assert beyond.ext_fields["nextBeginOffset"] == "1"
    missing = await cluster.client.invoke(
        cluster.broker_addr, pull_request("G3", "NoSuchTopic", 0, 0), WAIT
    )
    assert missing.code == ResponseCode.TOPIC_NOT_EXIST


async def test_long_polling_answers_as_soon_as_a_message_arrives(cluster: Cluster) -> None:
    await cluster.send_raw("T4", b"first")
    # held far longer than the client waits: an answer at all is the arrival's wake-up
    held = pull_request(
        "G4", "T4", 0, 1, sys_flag=FLAG_SUBSCRIPTION | FLAG_SUSPEND, suspend_ms=600_000
    )
    pending = asyncio.ensure_future(cluster.client.invoke(cluster.broker_addr, held, WAIT))
    hold = cluster.broker.pull_request_hold_service
    assert await until(lambda: len(hold.held_pulls()) == 1, 5)  # suspended in the broker
    assert [(p.topic, p.queue_id, p.pull_from_this_offset) for p in hold.held_pulls()] == [
        ("T4", 0, 1)
    ]
    assert not pending.done()
    await cluster.send_raw("T4", b"second")
    response = await asyncio.wait_for(pending, WAIT)
    assert response.code == ResponseCode.SUCCESS
    assert [m.body for m in codec.decode_messages(response.body)] == [b"second"]
    assert hold.held_pulls() == []


async def test_long_polling_times_out_with_pull_not_found(cluster: Cluster) -> None:
    await cluster.send_raw("T5", b"only")
    held = pull_request("G5", "T5", 0, 1, sys_flag=FLAG_SUBSCRIPTION | FLAG_SUSPEND, suspend_ms=300)
    start = time.monotonic()
    response = await cluster.client.invoke(cluster.broker_addr, held, WAIT)
    assert response.code == ResponseCode.PULL_NOT_FOUND
    assert time.monotonic() - start >= 0.25  # at the suspension's end (within WAIT), not before


async def test_new_group_starts_at_zero_and_committed_offsets_persist(cluster: Cluster) -> None:
    await cluster.send_raw("T6", b"a")
    query = request(RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="G6", topic="T6", queueId=0)
    response = await cluster.client.invoke(cluster.broker_addr, query, WAIT)
    assert (response.code, response.ext_fields["offset"]) == (ResponseCode.SUCCESS, "0")
    update = request(
        RequestCode.UPDATE_CONSUMER_OFFSET,
        consumerGroup="G6",
        topic="T6",
        queueId=0,
        commitOffset=1,
    )
    assert (
        await cluster.client.invoke(cluster.broker_addr, update, WAIT)
    ).code == ResponseCode.SUCCESS
    query = request(RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="G6", topic="T6", queueId=0)
    assert (await cluster.client.invoke(cluster.broker_addr, query, WAIT)).ext_fields[
        "offset"
    ] == "1"
    piggy = pull_request(
        "G6", "T6", 0, 1, sys_flag=FLAG_SUBSCRIPTION | FLAG_COMMIT_OFFSET, commit_offset=1
    )
    await cluster.client.invoke(cluster.broker_addr, piggy, WAIT)
    max_offset = request(RequestCode.GET_MAX_OFFSET, topic="T6", queueId=0)
    assert (await cluster.client.invoke(cluster.broker_addr, max_offset, WAIT)).ext_fields[
        "offset"
    ] == "1"
    cluster.broker.consumer_offset_manager.persist()
    saved = fastjson.loads((cluster.store_root / "config" / "consumerOffset.json").read_text())
    assert saved["offsetTable"]["T6@G6"] == {"0": 1}


async def test_heartbeat_creates_retry_topic_and_lists_the_group(cluster: Cluster) -> None:
    async with RemotingClient() as other:  # the broker keys clients by connection
        for client, cid in ((cluster.client, "cid-b"), (other, "cid-a")):
            response = await client.invoke(cluster.broker_addr, heartbeat(cid, "G7", "T7"), WAIT)
            assert response.code == ResponseCode.SUCCESS
        assert cluster.broker.topic_config_manager.select_topic_config("%RETRY%G7") is not None
        listing = request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="G7")
        response = await cluster.client.invoke(cluster.broker_addr, listing, WAIT)
        assert response.code == ResponseCode.SUCCESS
        ids = ConsumerListBody.decode(response.body).consumer_id_list
        assert sorted(ids) == ["cid-a", "cid-b"]
        unregister = request(
            RequestCode.UNREGISTER_CLIENT, clientID="cid-a", producerGroup="", consumerGroup="G7"
        )
        assert (
            await other.invoke(cluster.broker_addr, unregister, WAIT)
        ).code == ResponseCode.SUCCESS
    listing = request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="G7")
    response = await cluster.client.invoke(cluster.broker_addr, listing, WAIT)
    assert ConsumerListBody.decode(response.body).consumer_id_list == ["cid-b"]


async def test_bad_sends_are_rejected_with_rocketmq_codes(cluster: Cluster) -> None:
    big = b"x" * (4 * 1024 * 1024 + 1)
    response = await cluster.client.invoke(cluster.broker_addr, send_request("T8", big), WAIT)
    assert response.code == ResponseCode.MESSAGE_ILLEGAL
    response = await cluster.client.invoke(
        cluster.broker_addr, send_request("bad topic", b"x"), WAIT
    )
    assert response.code == ResponseCode.SYSTEM_ERROR
    assert "illegal" in (response.remark or "")
    response = await cluster.client.invoke(
        cluster.broker_addr, send_request("SCHEDULE_TOPIC_XXXX", b"x"), WAIT
    )
    assert response.code == ResponseCode.NO_PERMISSION


async def test_view_message_by_id_returns_the_stored_record(cluster: Cluster) -> None:
    fields = await cluster.send_raw("T9", b"look at me", tags="TagZ")
    _host, offset = decode_message_id(fields["msgId"])
    response = await cluster.client.invoke(
        cluster.broker_addr, request(RequestCode.VIEW_MESSAGE_BY_ID, offset=offset), WAIT
    )
    assert response.code == ResponseCode.SUCCESS
    (msg,) = codec.decode_messages(response.body)
    assert msg.body == b"look at me"
    assert msg.commitlog_offset == offset


async def test_cpp_style_batch_is_stored_as_separate_messages(cluster: Cluster) -> None:
    inner = [Message(topic="T10", body=f"b{i}".encode(), tags="TagA") for i in range(3)]
    response = await cluster.client.invoke(
        cluster.broker_addr,
        send_request("T10", codec.encode_batch_messages(inner), batch=True),
        WAIT,
    )
    assert response.code == ResponseCode.SUCCESS, response.remark
    assert len(response.ext_fields["msgId"].split(",")) == 3
    await cluster.dispatched()
    pulled = await cluster.client.invoke(
        cluster.broker_addr, pull_request("G10", "T10", 0, 0), WAIT
    )
    assert [m.body for m in codec.decode_messages(pulled.body)] == [b"b0", b"b1", b"b2"]


async def test_delayed_message_is_delivered_to_its_topic_when_due(cluster: Cluster) -> None:
    await cluster.send_raw("T11", b"later", extra={"DELAY": "1"})
    now = await cluster.client.invoke(cluster.broker_addr, pull_request("G11", "T11", 0, 0), WAIT)
    assert now.code in (ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED)
    held = pull_request(
        "G11", "T11", 0, 0, sys_flag=FLAG_SUBSCRIPTION | FLAG_SUSPEND, suspend_ms=6000
    )
    response = await cluster.client.invoke(cluster.broker_addr, held, WAIT)
    assert response.code == ResponseCode.SUCCESS
    (msg,) = codec.decode_messages(response.body)
    assert msg.body == b"later"
    assert msg.properties["REAL_TOPIC"] == "T11"


async def test_send_back_goes_to_the_retry_schedule(cluster: Cluster) -> None:
    fields = await cluster.send_raw("T12", b"fail me")
    _host, offset = decode_message_id(fields["msgId"])
    back = request(RequestCode.CONSUMER_SEND_MSG_BACK, offset=offset, group="G12", delayLevel=0)
    response = await cluster.client.invoke(cluster.broker_addr, back, WAIT)
    assert response.code == ResponseCode.SUCCESS, response.remark
    await cluster.dispatched()
    level3 = request(RequestCode.GET_MAX_OFFSET, topic="SCHEDULE_TOPIC_XXXX", queueId=2)
    assert (await cluster.client.invoke(cluster.broker_addr, level3, WAIT)).ext_fields[
        "offset"
    ] == "1"
    assert cluster.broker.topic_config_manager.select_topic_config("%RETRY%G12") is not None


async def test_sync_flush_send_is_answered_after_the_group_commit(tmp_path: Path) -> None:
    props = small_store_properties(flushDiskType="SYNC_FLUSH")
    async with (
        run_broker(tmp_path / "store", store_properties=props) as broker,
        RemotingClient() as c,
    ):
        responses = await asyncio.gather(
            *(
                c.invoke(broker.broker_addr, send_request("SyncT", b"%d" % i), WAIT)
                for i in range(20)
            )
        )
        assert [r.code for r in responses] == [ResponseCode.SUCCESS] * 20
        assert sorted(int(r.ext_fields["queueOffset"]) for r in responses) == list(range(20))
