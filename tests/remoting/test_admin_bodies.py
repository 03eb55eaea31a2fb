"""Admin and consumer-admin bodies, socket-free: byte-exact fastjson shapes (object keys for
``Map<MessageQueue, ...>``, bare integer keys, enums by name), lenient decoding of what Java
and C++ write, and Hypothesis round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.admin_bodies import (
    Connection,
    ConsumerConnection,
    ConsumeStats,
    GroupList,
    OffsetWrapper,
    TopicOffset,
    TopicStatsTable,
)
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    MessageQueueData,
)
from rocketq.remoting.protocol.consumer_bodies import (
    CMResult,
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ResetOffsetBody,
)
from rocketq.remoting.protocol.group_bodies import (
    ConsumerOffsetSerializeWrapper,
    DelayOffsetSerializeWrapper,
    QueryConsumeQueueResponseBody,
    SubscriptionGroupConfig,
)
from rocketq.remoting.protocol.subscription import SubscriptionData

MQ0 = MessageQueueData(topic="T", broker_name="broker-a", queue_id=0)
MQ1 = MessageQueueData(topic="T", broker_name="broker-a", queue_id=1)
MQ_KEY = '{"brokerName":"broker-a","queueId":0,"topic":"T"}'


def test_consume_stats_is_written_with_message_queue_object_keys() -> None:
    stats = ConsumeStats(
        offset_table={MQ0: OffsetWrapper(broker_offset=10, consumer_offset=7, last_timestamp=9)},
        consume_tps=1.5,
    )
    assert stats.encode() == (
        b'{"consumeTps":1.5,"offsetTable":{' + MQ_KEY.encode() + b':{"brokerOffset":10,'
        b'"consumerOffset":7,"lastTimestamp":9}}}'
    )
    assert ConsumeStats.decode(stats.encode()) == stats
    assert stats.compute_total_diff() == 3


def test_topic_stats_table_orders_queues_and_round_trips() -> None:
    table = TopicStatsTable(
        offset_table={
            MQ1: TopicOffset(min_offset=0, max_offset=3, last_update_timestamp=5),
            MQ0: TopicOffset(),
        }
    )
    text = table.encode().decode()
    assert text.index('"queueId":0') < text.index('"queueId":1')
    assert '"lastUpdateTimestamp":5,"maxOffset":3,"minOffset":0' in text
    assert TopicStatsTable.decode(text.encode()) == table


def test_offset_tables_write_integer_keys_bare_as_fastjson() -> None:
    offsets = ConsumerOffsetSerializeWrapper(offset_table={"T@G": {1: 3, 0: 5}})
    assert offsets.encode() == b'{"offsetTable":{"T@G":{0:5,1:3}}}'
    assert ConsumerOffsetSerializeWrapper.decode(offsets.encode()) == offsets
    delay = DelayOffsetSerializeWrapper(offset_table={2: 0, 1: 10})
    assert delay.encode() == b'{"offsetTable":{1:10,2:0}}'
    assert DelayOffsetSerializeWrapper.decode(b'{"offsetTable":{"1":10}}').offset_table == {1: 10}


def test_consumer_connection_has_rocketmq_keys_and_enum_names() -> None:
    conn = ConsumerConnection(
        connection_set=[Connection(client_id="c@1", client_addr="127.0.0.1:5", version=409)],
        subscription_table={"T": SubscriptionData(topic="T", sub_version=1)},
        consume_type=ConsumeType.CONSUME_PASSIVELY,
        message_model=MessageModel.CLUSTERING,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    )
    obj = json.loads(conn.encode())
    assert list(obj) == [
        "connectionSet",
        "consumeFromWhere",
        "consumeType",
        "messageModel",
        "subscriptionTable",
    ]
    assert obj["connectionSet"] == [
        {"clientAddr": "127.0.0.1:5", "clientId": "c@1", "language": "JAVA", "version": 409}
    ]
    assert obj["consumeType"] == "CONSUME_PASSIVELY"
    assert ConsumerConnection.decode(conn.encode()) == conn
    by_ordinal = ConsumerConnection.decode(b'{"consumeType":1,"messageModel":0}')
    assert by_ordinal.message_model is MessageModel.BROADCASTING


def test_running_info_from_a_java_client_decodes() -> None:
    java = (
        '{"jstack":null,"mqTable":{' + MQ_KEY + ':{"cachedMsgCount":2,"cachedMsgMaxOffset":9,'
        '"cachedMsgMinOffset":8,"cachedMsgSizeInMiB":0,"commitOffset":8,"droped":false,'
        '"lastConsumeTimestamp":1,"lastLockTimestamp":0,"lastPullTimestamp":2,"locked":true,'
        '"transactionMsgCount":0,"transactionMsgMaxOffset":0,"transactionMsgMinOffset":0,'
        '"tryUnlockTimes":0}},\n "properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY",'
        '"consumerGroup":"G"},"statusTable":{"T":{"consumeFailedMsgs":0,"consumeFailedTPS":0.0,'
        '"consumeOKTPS":12.5,"consumeRT":1.0,"pullRT":2.0,"pullTPS":3.0}},'
        '"subscriptionSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG",'
        '"subString":"*","subVersion":7,"tagsSet":[],"topic":"T"}]}'
    )
    info = ConsumerRunningInfo.decode(java.encode())
    pq = info.mq_table[MQ0]
    assert (pq.commit_offset, pq.cached_msg_count, pq.locked) == (8, 2, True)
    assert info.properties["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY"
    assert info.status_table["T"].consume_ok_tps == 12.5
    assert info.subscription_set[0].sub_version == 7
    assert ConsumerRunningInfo.decode(info.encode()) == info


def test_reset_offset_body_reads_both_the_java_map_and_the_cpp_list() -> None:
    body = ResetOffsetBody(offset_table={MQ0: 4, MQ1: 0})
    assert ResetOffsetBody.decode(body.encode()) == body
    as_c = json.dumps(body.to_json_for_c()).encode()
    assert json.loads(as_c)["offsetTable"][0] == {
        "brokerName": "broker-a",
        "offset": 4,
        "queueId": 0,
        "topic": "T",
    }
    assert ResetOffsetBody.decode(as_c) == body


def test_small_bodies_have_rocketmq_field_names() -> None:
    result = ConsumeMessageDirectlyResult(consume_result=CMResult.CR_SUCCESS, spent_time_mills=3)
    assert result.encode() == (
        b'{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":3}'
    )
    assert GroupList(group_list=["b", "a"]).encode() == b'{"groupList":["a","b"]}'
    cfg = SubscriptionGroupConfig(group_name="G")
    assert json.loads(cfg.encode())["whichBrokerWhenConsumeSlowly"] == 1
    assert (
        SubscriptionGroupConfig.decode(b'{"groupName":"G","retryMaxTimes":"3"}').retry_max_times
        == 3
    )
    cq = QueryConsumeQueueResponseBody(max_queue_index=2)
    assert b"subscriptionData" not in cq.encode()  # fastjson leaves nulls out


@pytest.mark.parametrize(
    "text", [b"{", b'{"a":1,}', b'{"a" 1}', b'{{"x":1}}', b"[1,2", b'{"a":1} x', b"\xff"]
)
def test_malformed_object_key_json_is_a_remoting_command_error(text: bytes) -> None:
    with pytest.raises(RemotingCommandError):
        fastjson.loads_object_keys(text)


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(RemotingCommandError, match="nested"):
        fastjson.loads_object_keys(b"[" * 100 + b"]" * 100)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner.filter(lambda v: v is not None), max_size=4)
    ),
    max_leaves=12,
)


@given(_json)
def test_object_key_json_reads_back_what_it_writes(value: object) -> None:
    assert fastjson.loads_object_keys(fastjson.dumps_object_keys(value)) == value


_mqs = st.builds(
    MessageQueueData,
    topic=st.text(min_size=1, max_size=8),
    broker_name=st.text(min_size=1, max_size=8),
    queue_id=st.integers(min_value=0, max_value=1023),
)
_wrappers = st.builds(
    OffsetWrapper,
    broker_offset=st.integers(min_value=0, max_value=2**62),
    consumer_offset=st.integers(min_value=0, max_value=2**62),
    last_timestamp=st.integers(min_value=0, max_value=2**62),
)


@given(st.dictionaries(_mqs, _wrappers, max_size=6), st.floats(0, 1e6))
def test_consume_stats_round_trips(
    table: dict[MessageQueueData, OffsetWrapper], tps: float
) -> None:
    stats = ConsumeStats(offset_table=table, consume_tps=tps)
    assert ConsumeStats.decode(stats.encode()) == stats
