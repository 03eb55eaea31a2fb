"""Issue 9's admin and consumer-admin codes over raw sockets, checked against the field names
of RocketMQ 4.9's Java classes (not against our own decoders): every JSON body has exactly the
keys fastjson writes for that class (nulls left out), ``Map<MessageQueue, ...>`` keys are
MessageQueue objects, the GET_ALL_* bodies are compact as the broker sends them, and the
requests the broker starts towards a client (39, 220, 307, 309, 326) carry the headers and
bodies a Java client reads. The clients here are bare RemotingClients speaking frames."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker import BrokerController
from rocketq.common import message_decoder as codec
from rocketq.common.message_const import MessageSysFlag
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.bodies import ConsumeFromWhere
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from rocketq.testing.wire import heartbeat, props_text, send_request

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
WAIT = 10.0
TOPIC = "WireShapes"
GROUP = "WireGroup"
CLIENT_ID = "127.0.0.1@wire-consumer"
PRODUCER_ID = "127.0.0.1@wire-producer"
FIRST = ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET

# field names of RocketMQ 4.9's classes (fastjson writes every non-null field, sorted)
MESSAGE_QUEUE = {"brokerName", "queueId", "topic"}
CONNECTION = {"clientAddr", "clientId", "language", "version"}
SUBSCRIPTION_DATA = {
    "classFilterMode",
    "codeSet",
    "expressionType",
    "subString",
    "subVersion",
    "tagsSet",
    "topic",
}
CONSUMER_CONNECTION = {
    "connectionSet",
    "consumeFromWhere",
    "consumeType",
    "messageModel",
    "subscriptionTable",
}
OFFSET_WRAPPER = {"brokerOffset", "consumerOffset", "lastTimestamp"}
TOPIC_OFFSET = {"lastUpdateTimestamp", "maxOffset", "minOffset"}
SUBSCRIPTION_GROUP_CONFIG = {
    "brokerId",
    "consumeBroadcastEnable",
    "consumeEnable",
    "consumeFromMinEnable",
    "groupName",
    "notifyConsumerIdsChangedEnable",
    "retryMaxTimes",
    "retryQueueNums",
    "whichBrokerWhenConsumeSlowly",
}
CONSUME_QUEUE_DATA = {"eval", "physicOffset", "physicSize", "tagsCode"}  # + 3 nullable
DIRECT_RESULT = {"autoCommit", "consumeResult", "order", "remark", "spentTimeMills"}
CHECK_TRANSACTION_HEADER = {
    "commitLogOffset",
    "msgId",
    "offsetMsgId",
    "tranStateTableOffset",
    "transactionId",
}
REPLY_HEADER = {
    "bornHost",
    "bornTimestamp",
    "defaultTopic",
    "defaultTopicQueueNums",
    "flag",
    "producerGroup",
    "properties",
    "queueId",
    "reconsumeTimes",
    "storeHost",
    "storeTimestamp",
    "sysFlag",
    "topic",
    "unitMode",
}


@dataclass
class Wire:
    broker: BrokerController
    admin: RemotingClient
    client: RemotingClient  # a bare consumer and producer: it answers what the broker asks
    asked: dict[int, list[RemotingCommand]] = field(default_factory=dict)

    @property
    def broker_addr(self) -> str:
        return self.broker.broker_addr

    def max_offset(self, queue_id: int) -> int:
        return self.broker.message_store.get_max_offset_in_queue(TOPIC, queue_id)

    async def call(self, code: int, body: bytes = b"", **fields: object) -> RemotingCommand:
        request = RemotingCommand.create_request(code, {k: str(v) for k, v in fields.items()}, body)
        response = await self.admin.invoke(self.broker_addr, request, WAIT)
        assert response.code == ResponseCode.SUCCESS, (code, response.remark)
        return response

    def answer(self, code: int, reply: Callable[[RemotingCommand], RemotingCommand | None]) -> None:
        async def processor(
            _channel: RemotingChannel, request: RemotingCommand
        ) -> RemotingCommand | None:
            self.asked.setdefault(code, []).append(request)
            return reply(request)

        self.client.register_processor(code, processor)


@pytest.fixture
async def wire(tmp_path: Path) -> AsyncIterator[Wire]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store",
            namesrv_addr=ns.addr,
            store_properties=small_store_properties(messageDelayLevel=" ".join(["1s"] * 18)),
            transaction_check_interval_ms=100,
            transaction_time_out_ms=0,
        ) as broker,
        RemotingClient() as admin,
        RemotingClient() as client,
    ):
        w = Wire(broker, admin, client)
        await w.call(
            RequestCode.UPDATE_AND_CREATE_TOPIC,
            topic=TOPIC,
            defaultTopic="TBW102",
            readQueueNums=2,
            writeQueueNums=2,
            perm=6,
            topicFilterType="SINGLE_TAG",
            order="false",
        )
        for i in range(4):
            sent = await admin.invoke(
                w.broker_addr, send_request(TOPIC, b"m%d" % i, tags="T", queue_id=i % 2), WAIT
            )
            assert sent.code == ResponseCode.SUCCESS, sent.remark
        beat = await client.invoke(
            w.broker_addr, heartbeat(CLIENT_ID, GROUP, TOPIC, consume_from_where=FIRST), WAIT
        )
        assert beat.code == ResponseCode.SUCCESS
        for queue_id in (0, 1):  # the group has consumed one message of each queue
            await w.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                consumerGroup=GROUP,
                topic=TOPIC,
                queueId=queue_id,
                commitOffset=1,
            )
        assert await asyncio.to_thread(broker.message_store.wait_for_dispatch, 5.0)
        yield w


def json_body(response: RemotingCommand) -> Any:
    return fastjson.loads_object_keys(response.body)


def assert_mq_keyed(table: dict[str, Any], values: set[str]) -> None:
    assert table, "an empty table proves nothing"
    for key, value in table.items():
        assert set(json.loads(key)) == MESSAGE_QUEUE
        assert set(value) == values


async def test_connection_stats_and_group_bodies_have_the_java_classes_fields(
    wire: Wire,
) -> None:
    conn = json_body(await wire.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, consumerGroup=GROUP))
    assert set(conn) == CONSUMER_CONNECTION
    assert [set(c) for c in conn["connectionSet"]] == [CONNECTION]
    assert conn["connectionSet"][0]["clientId"] == CLIENT_ID
    assert (conn["consumeType"], conn["messageModel"]) == ("CONSUME_PASSIVELY", "CLUSTERING")
    assert set(conn["subscriptionTable"][TOPIC]) == SUBSCRIPTION_DATA

    producers = json_body(
        await wire.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, producerGroup="PG")
    )
    assert set(producers) == {"connectionSet"}
    assert {c["clientId"] for c in producers["connectionSet"]} == {CLIENT_ID}

    stats = json_body(
        await wire.call(RequestCode.GET_CONSUME_STATS, consumerGroup=GROUP, topic=TOPIC)
    )
    assert set(stats) == {"consumeTps", "offsetTable"}
    assert_mq_keyed(stats["offsetTable"], OFFSET_WRAPPER)
    assert sum(w["consumerOffset"] for w in stats["offsetTable"].values()) == 2
    assert sum(w["brokerOffset"] for w in stats["offsetTable"].values()) == 4

    topic_stats = json_body(await wire.call(RequestCode.GET_TOPIC_STATS_INFO, topic=TOPIC))
    assert set(topic_stats) == {"offsetTable"}
    assert_mq_keyed(topic_stats["offsetTable"], TOPIC_OFFSET)

    who = json_body(await wire.call(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, topic=TOPIC))
    assert who == {"groupList": [GROUP]}

    cq = json_body(
        await wire.call(
            RequestCode.QUERY_CONSUME_QUEUE,
            topic=TOPIC,
            queueId=0,
            index=0,
            count=5,
            consumerGroup=GROUP,
        )
    )
    assert set(cq) <= {
        "filterData",
        "maxQueueIndex",
        "minQueueIndex",
        "queueData",
        "subscriptionData",
    }
    assert (cq["minQueueIndex"], cq["maxQueueIndex"]) == (0, 2)
    assert [set(unit) for unit in cq["queueData"]] == [CONSUME_QUEUE_DATA] * 2
    assert set(cq["subscriptionData"]) == SUBSCRIPTION_DATA
    assert cq["filterData"] == "null"  # a tag subscription has no ConsumerFilterData


async def test_subscription_groups_and_the_get_all_tables_are_compact_fastjson(
    wire: Wire,
) -> None:
    group = json.dumps({"groupName": "WireNew", "retryMaxTimes": 3}).encode()
    await wire.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, group)
    groups = await wire.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
    assert b"\n" not in groups.body  # encode(false): what 4.9's broker sends (files are pretty)
    wrapper = json_body(groups)
    assert set(wrapper) == {"dataVersion", "subscriptionGroupTable"}
    assert set(wrapper["dataVersion"]) == {"counter", "timestamp"}
    created = wrapper["subscriptionGroupTable"]["WireNew"]
    assert set(created) == SUBSCRIPTION_GROUP_CONFIG
    assert created["retryMaxTimes"] == 3
    await wire.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="WireNew")
    after = json_body(await wire.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
    assert "WireNew" not in after["subscriptionGroupTable"]

    offsets = await wire.call(RequestCode.GET_ALL_CONSUMER_OFFSET)
    assert f'"{TOPIC}@{GROUP}":{{0:1,1:1}}'.encode() in offsets.body  # bare integer keys
    assert b"\n" not in offsets.body
    delay = await wire.call(RequestCode.GET_ALL_DELAY_OFFSET)
    assert delay.body.startswith(b'{"offsetTable":{')
    assert b"\n" not in delay.body


async def test_broker_config_is_properties_text_with_a_data_version_header(wire: Wire) -> None:
    got = await wire.call(RequestCode.GET_BROKER_CONFIG)
    version = json.loads(got.ext_fields["version"])
    assert set(version) == {"counter", "timestamp"}
    assert version["timestamp"] > 1_600_000_000_000  # stamped at creation, as Java's
    lines = got.body.decode().splitlines()
    assert all("=" in line for line in lines)
    assert "brokerName=broker-a" in lines
    await wire.call(RequestCode.UPDATE_BROKER_CONFIG, b"transactionCheckMax=7\n")
    again = await wire.call(RequestCode.GET_BROKER_CONFIG)
    assert "transactionCheckMax=7" in again.body.decode().splitlines()
    assert (
        json.loads(again.ext_fields["version"])["counter"]
        > json.loads(got.ext_fields["version"])["counter"]
    )


async def test_running_info_and_consume_directly_reach_the_client_with_java_headers(
    wire: Wire,
) -> None:
    java_running_info = (
        '{"mqTable":{{"brokerName":"broker-a","queueId":0,"topic":"' + TOPIC + '"}:'
        '{"commitOffset":1,"droped":false}},"properties":{"PROP_CONSUME_TYPE":'
        '"CONSUME_PASSIVELY"},"statusTable":{},"subscriptionSet":[]}'
    ).encode()
    java_direct = (
        b'{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":2}'
    )
    wire.answer(
        RequestCode.GET_CONSUMER_RUNNING_INFO,
        lambda _r: RemotingCommand.create_response(ResponseCode.SUCCESS, body=java_running_info),
    )
    wire.answer(
        RequestCode.CONSUME_MESSAGE_DIRECTLY,
        lambda _r: RemotingCommand.create_response(ResponseCode.SUCCESS, body=java_direct),
    )
    info = await wire.call(
        RequestCode.GET_CONSUMER_RUNNING_INFO,
        consumerGroup=GROUP,
        clientId=CLIENT_ID,
        jstackEnable="false",
    )
    assert info.body == java_running_info  # the client's answer, passed through untouched
    [asked] = wire.asked[RequestCode.GET_CONSUMER_RUNNING_INFO]
    assert asked.ext_fields == {
        "consumerGroup": GROUP,
        "clientId": CLIENT_ID,
        "jstackEnable": "false",
    }
    view = await wire.call(RequestCode.VIEW_MESSAGE_BY_ID, offset=0)
    first = codec.decode_message(view.body)
    direct = await wire.call(
        RequestCode.CONSUME_MESSAGE_DIRECTLY,
        consumerGroup=GROUP,
        clientId=CLIENT_ID,
        msgId=first.msg_id,
        brokerName="broker-a",
    )
    assert set(json_body(direct)) <= DIRECT_RESULT
    assert direct.body == java_direct
    [pushed] = wire.asked[RequestCode.CONSUME_MESSAGE_DIRECTLY]
    assert set(pushed.ext_fields) == {"brokerName", "clientId", "consumerGroup", "msgId"}
    assert codec.decode_message(pushed.body).body == first.body  # the message itself


async def test_reset_by_time_sends_the_java_reset_body_to_the_live_consumer(wire: Wire) -> None:
    wire.answer(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, lambda _r: None)  # oneway
    answer = await wire.call(
        RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
        topic=TOPIC,
        group=GROUP,
        timestamp=0,
        isForce="true",
    )
    table = json_body(answer)
    assert set(table) == {"offsetTable"}
    assert {json.loads(k)["queueId"]: v for k, v in table["offsetTable"].items()} == {0: 0, 1: 0}
    assert await until(lambda: RequestCode.RESET_CONSUMER_CLIENT_OFFSET in wire.asked, WAIT)
    [reset] = wire.asked[RequestCode.RESET_CONSUMER_CLIENT_OFFSET]
    assert reset.is_oneway
    assert reset.ext_fields == {"topic": TOPIC, "group": GROUP, "timestamp": "0", "isForce": "true"}
    assert reset.body == answer.body  # ResetOffsetBody, MessageQueue object keys


async def test_check_transaction_state_carries_the_java_header_and_the_half_as_a_message(
    wire: Wire,
) -> None:
    ended: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()

    def on_check(request: RemotingCommand) -> None:
        if not ended.done():
            ended.set_result(request)

    wire.answer(RequestCode.CHECK_TRANSACTION_STATE, lambda r: on_check(r))
    before = wire.max_offset(1)
    uniq = "7F0000010001AAAA0000000000000001"  # a Java client's UNIQ_KEY
    half = send_request(
        TOPIC,
        b"half",
        queue_id=1,
        sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE,
        extra={"UNIQ_KEY": uniq},
    )
    sent = await wire.client.invoke(wire.broker_addr, half, WAIT)  # the producer's own channel
    assert sent.code == ResponseCode.SUCCESS, sent.remark
    check = await asyncio.wait_for(ended, 20)
    assert check.is_oneway
    assert set(check.ext_fields) == CHECK_TRANSACTION_HEADER
    assert check.ext_fields["msgId"] == check.ext_fields["transactionId"] == uniq
    msg = codec.decode_message(check.body)
    assert (msg.topic, msg.queue_id, msg.body) == (TOPIC, 1, b"half")  # the real topic and queue
    end = RemotingCommand.create_request(
        RequestCode.END_TRANSACTION,
        {
            "producerGroup": "PG",
            "tranStateTableOffset": check.ext_fields["tranStateTableOffset"],
            "commitLogOffset": check.ext_fields["commitLogOffset"],
            "commitOrRollback": str(MessageSysFlag.TRANSACTION_COMMIT_TYPE),
            "fromTransactionCheck": "true",
            "msgId": check.ext_fields["msgId"],
            "transactionId": check.ext_fields["transactionId"],
        },
    )
    await wire.client.invoke_oneway(wire.broker_addr, end)  # as the Java client ends a check
    assert await until(lambda: wire.max_offset(1) == before + 1, WAIT)  # committed once


async def test_a_reply_is_pushed_to_the_requester_with_the_java_reply_header(wire: Wire) -> None:
    wire.answer(
        RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT,
        lambda _r: RemotingCommand.create_response(ResponseCode.SUCCESS),
    )
    props = {
        "CLUSTER": "DefaultCluster",
        "REPLY_TO_CLIENT": CLIENT_ID,
        "CORRELATION_ID": "corr-1",
        "MSG_TYPE": "reply",
    }
    as_send = send_request("DefaultCluster_REPLY_TOPIC", b"the answer", extra=props)
    reply = RemotingCommand.create_request(
        RequestCode.SEND_REPLY_MESSAGE, as_send.ext_fields, as_send.body
    )
    answered = await wire.admin.invoke(wire.broker_addr, reply, WAIT)  # from another client
    assert answered.code == ResponseCode.SUCCESS, answered.remark
    [pushed] = wire.asked[RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT]
    assert set(pushed.ext_fields) <= REPLY_HEADER
    assert {"bornHost", "storeHost", "storeTimestamp", "properties"} <= set(pushed.ext_fields)
    assert pushed.body == b"the answer"
    assert "CORRELATION_ID\x01corr-1\x02" in pushed.ext_fields["properties"]
    assert props_text({"MSG_TYPE": "reply"}) in pushed.ext_fields["properties"]


# AdminBrokerProcessor codes of 4.9 this broker does not serve (and one no broker knows)
NOT_SERVED = [223, 301, 303, 305, 306, 308, 314, 316, 317, 329, 9999]  # 328: RocketMQ 5's


@pytest.mark.parametrize("code", NOT_SERVED)
async def test_a_code_the_broker_does_not_serve_is_refused_naming_it(wire: Wire, code: int) -> None:
    request = RemotingCommand.create_request(code, {"topic": TOPIC, "group": GROUP}, b"{}")
    response = await wire.admin.invoke(wire.broker_addr, request, WAIT)
    assert response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert response.remark == f" request type {code} not supported"  # RocketMQ's remark
