"""Typed headers and JSON bodies against captured client frames and round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RemotingCommandError
from rocketq.remoting.codec import decode
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol import namesrv_headers as nh
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumerData,
    ConsumeType,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    MessageModel,
    MessageQueueData,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.register_broker_body import (
    RegisterBrokerBody,
    TopicConfigSerializeWrapper,
)
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.protocol.topic_route import BrokerData, ClusterInfo, QueueData, TopicRouteData

FIXTURES = Path(__file__).resolve().parent / "fixtures"

HEADER_OF_CODE: dict[int, type[h.CommandCustomHeader]] = {
    RequestCode.SEND_MESSAGE: h.SendMessageRequestHeader,
    RequestCode.SEND_MESSAGE_V2: h.SendMessageRequestHeaderV2,
    RequestCode.PULL_MESSAGE: h.PullMessageRequestHeader,
    RequestCode.QUERY_CONSUMER_OFFSET: h.QueryConsumerOffsetRequestHeader,
    RequestCode.UPDATE_CONSUMER_OFFSET: h.UpdateConsumerOffsetRequestHeader,
    RequestCode.GET_MAX_OFFSET: h.GetMaxOffsetRequestHeader,
    RequestCode.UNREGISTER_CLIENT: h.UnregisterClientRequestHeader,
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: h.GetConsumerListByGroupRequestHeader,
    RequestCode.GET_ROUTEINFO_BY_TOPIC: nh.GetRouteInfoRequestHeader,
    RequestCode.CONSUMER_SEND_MSG_BACK: h.ConsumerSendMsgBackRequestHeader,
}


def _frames() -> list[Path]:
    return sorted(FIXTURES.glob("*/*/*.bin"))


def test_every_fixture_request_header_parses_into_its_typed_header() -> None:
    parsed: set[int] = set()
    for path in _frames():
        cmd = decode(path.read_bytes())
        header_cls = HEADER_OF_CODE.get(cmd.code)
        if header_cls is None:
            continue
        header = header_cls.from_ext_fields(cmd.ext_fields)
        again = header_cls.from_ext_fields(header.to_ext_fields())
        assert again == header, path
        parsed.add(cmd.code)
    assert {10, 11, 14, 15, 35, 38, 105, 310} <= parsed


def test_cpp_send_header_reads_one_as_true_for_batch() -> None:
    frames = [decode(p.read_bytes()) for p in _frames()]
    sends = [c for c in frames if c.code == RequestCode.SEND_MESSAGE]
    headers = [h.SendMessageRequestHeader.from_ext_fields(c.ext_fields) for c in sends]
    assert any(x.batch for x in headers) or all(c.ext_fields["batch"] == "0" for c in sends)
    assert all(x.default_topic == "TBW102" and x.default_topic_queue_nums == 4 for x in headers)


def test_v2_send_header_converts_to_v1_and_back() -> None:
    v2 = next(
        h.SendMessageRequestHeaderV2.from_ext_fields(c.ext_fields)
        for c in (decode(p.read_bytes()) for p in _frames())
        if c.code == RequestCode.SEND_MESSAGE_V2
    )
    v1 = v2.to_v1()
    assert v1.topic == v2.b
    assert v1.unit_mode is False
    assert v1.to_v2() == v2


def test_missing_required_field_names_the_field() -> None:
    with pytest.raises(RemotingCommandError, match="the custom field topic is null"):
        h.GetMaxOffsetRequestHeader.from_ext_fields({"queueId": "1"})


def test_malformed_integer_field_names_the_field() -> None:
    with pytest.raises(RemotingCommandError, match="queueId is not an integer"):
        h.GetMaxOffsetRequestHeader.from_ext_fields({"topic": "t", "queueId": "x1"})


def test_malformed_boolean_field_names_the_field() -> None:
    with pytest.raises(RemotingCommandError, match="compressed is not a boolean"):
        nh.RegisterBrokerRequestHeader.from_ext_fields(
            {
                "brokerName": "b",
                "brokerAddr": "a",
                "clusterName": "c",
                "haServerAddr": "h",
                "brokerId": "0",
                "compressed": "maybe",
            }
        )


def test_headers_write_booleans_as_java_text_and_skip_none() -> None:
    header = h.UnregisterClientRequestHeader(client_id="c1", consumer_group="g")
    assert header.to_ext_fields() == {"clientID": "c1", "consumerGroup": "g"}
    end = h.EndTransactionRequestHeader(
        producer_group="p",
        tran_state_table_offset=1,
        commit_log_offset=2,
        commit_or_rollback=8,
        msg_id="m",
        from_transaction_check=True,
    )
    assert end.to_ext_fields()["fromTransactionCheck"] == "true"


@given(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**31), 2**31 - 1),
    st.text(min_size=1, max_size=20),
    st.one_of(st.none(), st.text(max_size=20)),
)
def test_pull_request_header_round_trips(
    offset: int, queue_id: int, group: str, subscription: str | None
) -> None:
    header = h.PullMessageRequestHeader(
        consumer_group=group,
        topic="T",
        queue_id=queue_id,
        queue_offset=offset,
        max_msg_nums=32,
        sys_flag=6,
        commit_offset=-1,
        suspend_timeout_millis=15000,
        sub_version=0,
        subscription=subscription,
    )
    assert h.PullMessageRequestHeader.from_ext_fields(header.to_ext_fields()) == header


def test_cpp_heartbeat_body_reads_enums_by_ordinal() -> None:
    body = (
        b'{"clientID":"11813-127.0.0.1@DEFAULT","consumerDataSet":[{"consumeFromWhere":0,'
        b'"consumeType":1,"groupName":"CG_TEST","messageModel":1,"subscriptionDataSet":'
        b'[{"subString":"*","subVersion":"1795353444586","topic":"%RETRY%CG_TEST"},'
        b'{"codeSet":[0,0],"subString":"TagA || TagB","subVersion":"1795353444586",'
        b'"tagsSet":["TagA","TagB"],"topic":"TopicTest"}]}]}\n'
    )
    data = HeartbeatData.decode(body)
    consumer = data.consumer_data_set[0]
    assert consumer.consume_type == ConsumeType.CONSUME_PASSIVELY
    assert consumer.message_model == MessageModel.CLUSTERING
    assert consumer.consume_from_where == ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    assert consumer.subscription_data_set[1].tags_set == ["TagA", "TagB"]
    assert consumer.subscription_data_set[1].sub_version == 1795353444586
    assert HeartbeatData.decode(data.encode()) == data


def test_every_fixture_heartbeat_and_lock_body_decodes() -> None:
    seen = {34: 0, 41: 0, 42: 0}
    for path in _frames():
        cmd = decode(path.read_bytes())
        if cmd.code == RequestCode.HEART_BEAT:
            beat = HeartbeatData.decode(cmd.body)
            assert beat.client_id
            assert HeartbeatData.decode(beat.encode()) == beat
        elif cmd.code in (RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ):
            lock = LockBatchRequestBody.decode(cmd.body)
            assert lock.mq_set
            assert lock.consumer_group
        else:
            continue
        seen[cmd.code] += 1
    assert all(seen.values()), seen


def test_ali_ons_heartbeat_reads_enums_by_name() -> None:
    beats = [
        HeartbeatData.decode(c.body)
        for c in (decode(p.read_bytes()) for p in sorted(FIXTURES.glob("ali-ons/*/*.bin")))
        if c.code == RequestCode.HEART_BEAT
    ]
    consumers = [c for b in beats for c in b.consumer_data_set]
    assert consumers
    assert {c.message_model for c in consumers} == {
        MessageModel.CLUSTERING,
        MessageModel.BROADCASTING,
    }


def test_lock_response_body_writes_queue_ids_as_numbers() -> None:
    body = LockBatchResponseBody(
        lock_ok_mq_set=[MessageQueueData(topic="T", broker_name="b", queue_id=1)]
    )
    assert body.encode() == b'{"lockOKMQSet":[{"brokerName":"b","queueId":1,"topic":"T"}]}'


def test_route_body_matches_the_worked_example() -> None:
    route = TopicRouteData(
        queue_datas=[
            QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6)
        ],
        broker_datas=[
            BrokerData(
                cluster="DefaultCluster",
                broker_name="broker-a",
                broker_addrs={0: "127.0.0.1:10911"},
            )
        ],
    )
    assert route.encode() == (
        b'{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a",'
        b'"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":'
        b'"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}'
    )
    assert TopicRouteData.decode(route.encode()) == route


def test_route_body_accepts_fastjson_bare_numeric_keys() -> None:
    text = (
        b'{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},'
        b'"brokerName":"b","cluster":"c"}],"queueDatas":[],"filterServerTable":{}}'
    )
    route = TopicRouteData.decode(text)
    assert route.broker_datas[0].broker_addrs == {0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}
    info = ClusterInfo.decode(
        b'{"brokerAddrTable":{"b":{"brokerAddrs":{0:"x:1"},"brokerName":"b"}},"clusterAddrTable":{"c":["b"]}}'
    )
    assert info.broker_addr_table["b"].select_broker_addr() == "x:1"


def _register_body() -> RegisterBrokerBody:
    return RegisterBrokerBody(
        topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
            topic_config_table={
                "T1": TopicConfig(topic_name="T1", read_queue_nums=4, write_queue_nums=4, perm=6),
                "TBW102": TopicConfig(
                    topic_name="TBW102", read_queue_nums=8, write_queue_nums=8, perm=7
                ),
            },
            data_version=DataVersion(timestamp=1700000000000, counter=3),
        ),
        filter_server_list=[],
    )


def test_register_broker_body_round_trips_as_json_and_compressed() -> None:
    body = _register_body()
    assert RegisterBrokerBody.decode(body.encode()) == body
    compressed = body.encode_compressed()
    assert compressed[:1] == b"\x78"
    assert RegisterBrokerBody.decode_compressed(compressed) == body


def test_corrupt_compressed_register_body_raises() -> None:
    with pytest.raises(RemotingCommandError):
        RegisterBrokerBody.decode_compressed(b"\x78\x9c garbage")


def test_subscription_data_defaults_expression_type_to_tag() -> None:
    sub = SubscriptionData.from_json({"topic": "T", "subString": "a"})
    assert sub.expression_type == "TAG"
    consumer = ConsumerData.from_json({"groupName": "g", "consumeType": "CONSUME_ACTIVELY"})
    assert consumer.consume_type == ConsumeType.CONSUME_ACTIVELY


def test_compressed_register_body_that_inflates_too_far_is_refused() -> None:
    import zlib

    from rocketq.remoting.protocol import register_broker_body

    bomb = zlib.compress(b"\0" * (register_broker_body.MAX_INFLATED_BODY_BYTES + 1), 9)
    with pytest.raises(RemotingCommandError, match="inflates past"):
        RegisterBrokerBody.decode_compressed(bomb)


def test_deeply_nested_json_body_raises_remoting_command_error() -> None:
    with pytest.raises(RemotingCommandError, match="nested too deeply"):
        HeartbeatData.decode(b"[" * 100_000)


_name = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_count = st.integers(min_value=0, max_value=1024)


@given(
    st.lists(st.tuples(_name, _count, _count, st.integers(0, 15), st.integers(0, 3)), max_size=4),
    st.dictionaries(st.integers(0, 3), _name, max_size=3),
    st.one_of(st.none(), _name),
)
def test_topic_route_data_round_trips(
    queues: list[tuple[str, int, int, int, int]], addrs: dict[int, str], order: str | None
) -> None:
    route = TopicRouteData(
        queue_datas=[
            QueueData(
                broker_name=n, read_queue_nums=r, write_queue_nums=w, perm=p, topic_sys_flag=f
            )
            for n, r, w, p, f in queues
        ],
        broker_datas=[
            BrokerData(cluster="c", broker_name=n, broker_addrs=addrs) for n, *_ in queues
        ],
        order_topic_conf=order,
    )
    assert TopicRouteData.decode(route.encode()) == route


@given(
    _name,
    st.lists(_name, max_size=3),
    st.lists(
        st.tuples(
            _name,
            st.sampled_from(ConsumeType),
            st.sampled_from(MessageModel),
            st.sampled_from(ConsumeFromWhere),
            st.lists(st.tuples(_name, _name, st.integers(0, 2**62)), max_size=3),
        ),
        max_size=3,
    ),
)
def test_heartbeat_data_round_trips(
    client_id: str,
    producers: list[str],
    consumers: list[
        tuple[str, ConsumeType, MessageModel, ConsumeFromWhere, list[tuple[str, str, int]]]
    ],
) -> None:
    from rocketq.remoting.protocol.bodies import ProducerData

    data = HeartbeatData(
        client_id=client_id,
        producer_data_set=[ProducerData(group_name=p) for p in producers],
        consumer_data_set=[
            ConsumerData(
                group_name=g,
                consume_type=ct,
                message_model=mm,
                consume_from_where=cfw,
                subscription_data_set=[
                    SubscriptionData(
                        topic=t, sub_string=s, tags_set=[s], code_set=[v % 1000], sub_version=v
                    )
                    for t, s, v in subs
                ],
            )
            for g, ct, mm, cfw, subs in consumers
        ],
    )
    assert HeartbeatData.decode(data.encode()) == data


@given(
    msg_id=st.text(max_size=40),
    queue_id=st.integers(-(2**31), 2**31 - 1),
    queue_offset=st.integers(-(2**63), 2**63 - 1),
    transaction_id=st.none() | st.text(max_size=40),
    recall_handle=st.none() | st.text(max_size=40),
)
def test_send_response_header_s_written_out_fields_match_the_generic_walk(
    msg_id: str,
    queue_id: int,
    queue_offset: int,
    transaction_id: str | None,
    recall_handle: str | None,
) -> None:
    header = h.SendMessageResponseHeader(
        msg_id=msg_id,
        queue_id=queue_id,
        queue_offset=queue_offset,
        transaction_id=transaction_id,
        recall_handle=recall_handle,
    )
    fast = header.to_ext_fields()
    generic = h.CommandCustomHeader.to_ext_fields(header)
    assert list(fast.items()) == list(generic.items())
    assert h.SendMessageResponseHeader.from_ext_fields(fast) == header


def test_the_recall_headers_use_rocketmqs_wire_names() -> None:
    header = h.RecallMessageRequestHeader(
        topic="T", recall_handle="aGFuZGxl", producer_group="pg", broker_name="broker-a"
    )
    assert header.to_ext_fields() == {
        "topic": "T",
        "recallHandle": "aGFuZGxl",
        "producerGroup": "pg",
        "bname": "broker-a",  # RpcRequestHeader.bname
    }
    assert h.RecallMessageRequestHeader.from_ext_fields(header.to_ext_fields()) == header
    assert h.RecallMessageResponseHeader(msg_id="M").to_ext_fields() == {"msgId": "M"}


_V2_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(
    fields=st.fixed_dictionaries(
        {k: st.integers(-(2**31), 2**31).map(str) for k in "defgh"}
        | {"a": _V2_TEXT, "b": _V2_TEXT, "c": _V2_TEXT},
        optional={
            "i": _V2_TEXT,
            "j": st.sampled_from(["", "3", "x"]),
            "k": st.sampled_from(["true", "false", "1", "0", "", "maybe"]),
            "l": st.sampled_from(["", "16", "-1"]),
            "m": st.sampled_from(["true", "false"]),
            "n": _V2_TEXT,
        },
    ).flatmap(lambda d: st.sampled_from([d, {k: v for k, v in d.items() if k != "b"}]))
)
def test_v2_send_header_decodes_as_v1_as_from_ext_fields_then_to_v1_does(
    fields: dict[str, str],
) -> None:
    try:
        expected: object = h.SendMessageRequestHeaderV2.from_ext_fields(fields).to_v1()
    except RemotingCommandError as exc:
        expected = str(exc)
    try:
        got: object = h.SendMessageRequestHeaderV2.decode_as_v1(fields)
    except RemotingCommandError as exc:
        got = str(exc)
    assert got == expected
