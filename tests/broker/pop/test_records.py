"""PopCheckPoint, AckMsg and BatchAckMsg as RocketMQ 5 writes and reads them (store/pop; fastjson
writes the properties sorted by their JSON names, compactly, nulls left out), their unique ids
(PopMessageProcessor.genCkUniqueId / genAckUniqueId / genBatchAckUniqueId) and the revive-topic
messages that carry them as timer messages."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.broker.pop.records import (
    AckMsg,
    BatchAckMsg,
    PopCheckPoint,
    build_revive_message,
    dumps,
    loads_record,
    revive_topic,
)
from rocketq.common import message_const as mc

CK = PopCheckPoint(
    start_offset=5,
    pop_time=1764264000123,
    invisible_time=60000,
    num=2,
    queue_id=1,
    topic="T",
    cid="g",
    broker_name="broker-a",
    queue_offset_diff=[0, 2],
)
CK_JSON = (
    b'{"bm":0,"bn":"broker-a","c":"g","d":[0,2],"it":60000,"n":2,"pt":1764264000123,"q":1,'
    b'"reviveTime":1764264060123,"ro":0,"so":5,"t":"T"}'
)
ACK = AckMsg(
    ack_offset=7,
    start_offset=5,
    consumer_group="g",
    topic="T",
    queue_id=1,
    pop_time=1764264000123,
    broker_name="broker-a",
)
ACK_JSON = b'{"ao":7,"bn":"broker-a","c":"g","pt":1764264000123,"q":1,"so":5,"t":"T"}'


def test_checkpoint_json_is_fastjsons_sorted_short_names() -> None:
    assert dumps(CK) == CK_JSON
    back = loads_record("ck", CK_JSON)
    assert back == CK
    assert isinstance(back, PopCheckPoint)
    assert back.revive_time == 1764264060123


def test_checkpoint_finds_an_ack_by_its_offset_diff() -> None:
    assert CK.index_of_ack(5) == 0
    assert CK.index_of_ack(7) == 1
    assert CK.index_of_ack(6) == -1  # filtered out, not in the checkpoint
    assert CK.index_of_ack(4) == -1
    old = PopCheckPoint(
        start_offset=5, pop_time=1, invisible_time=1, num=3, queue_id=0, topic="T", cid="g",
        broker_name="b",
    )  # fmt: skip
    assert [old.index_of_ack(o) for o in (5, 7, 8)] == [0, 2, -1]  # a checkpoint without diffs
    assert CK.ack_offset_by_index(1) == 7


def test_ack_json_and_rocketmqs_long_names() -> None:
    assert dumps(ACK) == ACK_JSON
    assert loads_record("ack", ACK_JSON) == ACK
    # AckMsgTest's string: the alternate names fastjson also reads
    long = (
        b'{"ackOffset":100,"brokerName":"brokerName","consumerGroup":"group",'
        b'"popTime":1670212915531,"queueId":3,"startOffset":200,"topic":"topic"}'
    )
    assert loads_record("ack", long) == AckMsg(
        ack_offset=100,
        start_offset=200,
        consumer_group="group",
        topic="topic",
        queue_id=3,
        pop_time=1670212915531,
        broker_name="brokerName",
    )


def test_batch_ack_json_and_rocketmqs_long_names() -> None:
    batch = BatchAckMsg(
        ack_offset=-1, start_offset=5, consumer_group="g", topic="T", queue_id=1,
        pop_time=1764264000123, broker_name="broker-a", ack_offset_list=[5, 7],
    )  # fmt: skip
    assert dumps(batch) == (
        b'{"ao":-1,"aol":[5,7],"bn":"broker-a","c":"g","pt":1764264000123,"q":1,"so":5,"t":"T"}'
    )
    assert loads_record("bAck", dumps(batch)) == batch
    # BatchAckMsgTest's string
    long = (
        b'{"ackOffsetList":[100, 101],"consumerGroup":"group",'
        b'"popTime":1679454922000,"queueId":3,"startOffset":200,"topic":"topic"}'
    )
    parsed = loads_record("bAck", long)
    assert isinstance(parsed, BatchAckMsg)
    assert parsed.ack_offsets() == [100, 101]
    assert (parsed.start_offset, parsed.queue_id, parsed.pop_time) == (200, 3, 1679454922000)


def test_unique_ids_are_rocketmqs() -> None:
    assert CK.unique_id() == "T@1@5@g@1764264000123@broker-a@ck"
    assert ACK.unique_id() == "T@1@7@g@1764264000123@broker-a@ack"
    batch = BatchAckMsg(
        ack_offset=-1, start_offset=5, consumer_group="g", topic="T", queue_id=1, pop_time=9,
        broker_name="b", ack_offset_list=[5, 7],
    )  # fmt: skip
    assert batch.unique_id() == "T@1@[5, 7]@g@9@bAck"  # Java's List.toString


def test_revive_messages_are_timer_messages_to_the_revive_topic() -> None:
    host = ("127.0.0.1", 10911)
    ck_msg = build_revive_message(
        CK, topic=revive_topic("DefaultCluster"), revive_qid=3, store_host=host, now_ms=1
    )
    assert ck_msg.topic == "rmq_sys_REVIVE_LOG_DefaultCluster"
    assert ck_msg.queue_id == 3
    assert ck_msg.body == CK_JSON
    assert ck_msg.properties == {
        mc.PROPERTY_TAGS: "ck",
        mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "T@1@5@g@1764264000123@broker-a@ck",
        mc.PROPERTY_TIMER_DELIVER_MS: str(1764264060123 - 1000),  # reviveTime - ackTimeInterval
    }
    ack_msg = build_revive_message(
        ACK, topic="R", revive_qid=3, store_host=host, now_ms=1, ack_deliver_ms=1764264060123
    )
    assert ack_msg.properties[mc.PROPERTY_TAGS] == "ack"
    assert ack_msg.properties[mc.PROPERTY_TIMER_DELIVER_MS] == "1764264060123"
    assert ack_msg.born_host == host


def test_a_record_without_a_pop_tag_is_not_a_record() -> None:
    assert loads_record("other", b"{}") is None


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
offsets = st.integers(0, 2**40)


@given(
    start=offsets,
    diffs=st.lists(st.integers(0, 2**20), min_size=1, max_size=32, unique=True),
    pop_time=offsets,
    invisible=st.integers(0, 2**31),
    qid=st.integers(0, 1023),
    topic=names,
    group=names,
    bn=names,
    bits=st.integers(0, 2**32 - 1),
)
def test_checkpoint_round_trip(
    start: int, diffs: list[int], pop_time: int, invisible: int, qid: int, topic: str,
    group: str, bn: str, bits: int,
) -> None:  # fmt: skip
    ck = PopCheckPoint(
        start_offset=start, pop_time=pop_time, invisible_time=invisible, num=len(diffs),
        queue_id=qid, topic=topic, cid=group, broker_name=bn, queue_offset_diff=sorted(diffs),
        bit_map=bits,
    )  # fmt: skip
    assert loads_record("ck", dumps(ck)) == ck


@given(offs=st.lists(offsets, max_size=32), topic=names, group=names, pop_time=offsets)
def test_batch_ack_round_trip(offs: list[int], topic: str, group: str, pop_time: int) -> None:
    batch = BatchAckMsg(
        ack_offset=-1, start_offset=0, consumer_group=group, topic=topic, queue_id=0,
        pop_time=pop_time, broker_name="b", ack_offset_list=offs,
    )  # fmt: skip
    assert loads_record("bAck", dumps(batch)) == batch
