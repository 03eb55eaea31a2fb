"""RocketMQ 5's POP headers on the wire (their extFields names and values) and the
BATCH_ACK_MESSAGE body with its BitSet as fastjson writes a byte[] (base64 of toByteArray)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.pop_headers import (
    AckMessageRequestHeader,
    BatchAck,
    ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader,
    NotificationRequestHeader,
    NotificationResponseHeader,
    PopMessageRequestHeader,
    PopMessageResponseHeader,
    decode_batch_ack_body,
    decode_bit_set,
    encode_batch_ack_body,
    encode_bit_set,
)


def test_pop_request_header_fields() -> None:
    h = PopMessageRequestHeader(
        consumer_group="g", topic="T", queue_id=-1, max_msg_nums=32, invisible_time=60000,
        poll_time=15000, born_time=1764264000000, init_mode=1, exp_type="TAG", exp="A || B",
        order=False, attempt_id="a-1",
    )  # fmt: skip
    fields = h.to_ext_fields()
    assert fields == {
        "consumerGroup": "g", "topic": "T", "queueId": "-1", "maxMsgNums": "32",
        "invisibleTime": "60000", "pollTime": "15000", "bornTime": "1764264000000",
        "initMode": "1", "expType": "TAG", "exp": "A || B", "order": "false", "attemptId": "a-1",
    }  # fmt: skip
    assert PopMessageRequestHeader.from_ext_fields(fields) == h
    assert h.is_timeout_too_much(1764264000000 + 15000 + 501)
    assert not h.is_timeout_too_much(1764264000000 + 15000 + 500)


def test_pop_response_and_the_other_headers() -> None:
    r = PopMessageResponseHeader(
        pop_time=1, invisible_time=2, revive_qid=3, rest_num=4, start_offset_info="0 0 5",
        msg_offset_info="0 0 5,6",
    )  # fmt: skip
    assert r.to_ext_fields() == {
        "popTime": "1", "invisibleTime": "2", "reviveQid": "3", "restNum": "4",
        "startOffsetInfo": "0 0 5", "msgOffsetInfo": "0 0 5,6",
    }  # fmt: skip
    ack = AckMessageRequestHeader(
        consumer_group="g", topic="T", queue_id=0, extra_info="0 1 2 3 0 b 0 5", offset=5
    )
    assert set(ack.to_ext_fields()) == {"consumerGroup", "topic", "queueId", "extraInfo", "offset"}
    change = ChangeInvisibleTimeRequestHeader(
        consumer_group="g", topic="T", queue_id=0, extra_info="x", offset=5, invisible_time=9
    )
    assert change.to_ext_fields()["invisibleTime"] == "9"
    assert ChangeInvisibleTimeResponseHeader(pop_time=1, invisible_time=2, revive_qid=3)
    n = NotificationRequestHeader(
        consumer_group="g", topic="T", queue_id=-1, poll_time=1, born_time=2
    )
    assert set(n.to_ext_fields()) == {"consumerGroup", "topic", "queueId", "pollTime", "bornTime"}
    assert NotificationResponseHeader(has_msg=True).to_ext_fields() == {
        "hasMsg": "true",
        "pollingFull": "false",
    }
    with pytest.raises(RemotingCommandError, match="extraInfo"):
        AckMessageRequestHeader.from_ext_fields(
            {"consumerGroup": "g", "topic": "T", "queueId": "0"}
        )


def test_bit_set_is_java_bit_set_to_byte_array_in_base64() -> None:
    # BatchAckTest's offsets: start + 1, + 3, + 5 -> 0b101010
    assert encode_bit_set([1, 3, 5]) == "Kg=="
    assert decode_bit_set("Kg==") == [1, 3, 5]
    assert encode_bit_set([0, 8]) == "AQE="  # two bytes, little-endian
    assert encode_bit_set([]) == ""


def test_batch_ack_body() -> None:
    b = BatchAck(
        consumer_group="DEFAULT_CONSUMER", topic="myTopic", retry="0", start_offset=100,
        queue_id=1, revive_queue_id=2, pop_time=1764264000000, invisible_time=5000,
        bit_set=(1, 3, 5),
    )  # fmt: skip
    body = encode_batch_ack_body("broker-a", [b])
    assert body == (
        b'{"acks":[{"b":"Kg==","c":"DEFAULT_CONSUMER","it":5000,"pt":1764264000000,"q":1,'
        b'"r":"0","rq":2,"so":100,"t":"myTopic"}],"brokerName":"broker-a"}'
    )
    assert decode_batch_ack_body(body) == ("broker-a", [b])
    long = (
        b'{"acks":[{"bitSet":"Kg==","consumerGroup":"g","invisibleTime":1,"popTime":2,'
        b'"queueId":0,"retry":"1","reviveQueueId":3,"startOffset":4,"topic":"T"}]}'
    )
    _, (parsed,) = decode_batch_ack_body(long)
    assert (parsed.retry, parsed.bit_set, parsed.start_offset) == ("1", (1, 3, 5), 4)


@given(st.sets(st.integers(0, 500), max_size=40))
def test_bit_set_round_trip(bits: set[int]) -> None:
    assert decode_bit_set(encode_bit_set(bits)) == sorted(bits)


_texts = st.text(max_size=12)  # any text: quotes, backslashes, control and non-ASCII characters
_longs = st.integers(-(2**63), 2**63 - 1)
_batch_acks = st.builds(
    BatchAck,
    consumer_group=_texts,
    topic=_texts,
    retry=st.sampled_from(["0", "1", "2"]) | _texts,
    start_offset=_longs,
    queue_id=st.integers(-(2**31), 2**31 - 1),
    revive_queue_id=st.integers(-(2**31), 2**31 - 1),
    pop_time=_longs,
    invisible_time=_longs,
    bit_set=st.lists(st.integers(0, 300), max_size=40).map(tuple),
)


@given(_texts, st.lists(_batch_acks, max_size=4))
def test_batch_ack_body_is_fastjsons_text_of_its_objects(
    broker_name: str, acks: list[BatchAck]
) -> None:
    """The body written directly is byte for byte ``fastjson.dumps`` of the items' JSON."""
    reference = fastjson.dumps({"acks": [a.to_json() for a in acks], "brokerName": broker_name})
    assert encode_batch_ack_body(broker_name, acks) == reference
