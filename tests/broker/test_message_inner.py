"""The two builders of the messages a broker writes: from a send request, and a stored copy."""

from __future__ import annotations

from rocketq.broker.message_inner import born_host, copy_message, message_from_request
from rocketq.common.message import MessageExt
from rocketq.remoting.protocol.headers import SendMessageRequestHeader

STORE_HOST = ("10.0.0.9", 10911)


def _stored() -> MessageExt:
    return MessageExt(
        topic="%RETRY%G",
        queue_id=3,
        body=b"payload",
        flag=7,
        properties={"TAGS": "A"},
        sys_flag=4,
        born_timestamp=1_700_000_000_000,
        born_host=("10.0.0.1", 50000),
        store_host=("10.0.0.2", 10911),
        reconsume_times=2,
        queue_offset=41,
        commitlog_offset=9000,
        store_timestamp=1_700_000_000_500,
        msg_id="0A00000200002AA70000000000002328",
    )


def test_a_copy_carries_body_flag_born_time_and_hosts_but_no_stored_position() -> None:
    props = {"REAL_TOPIC": "Orders"}
    copy = copy_message(_stored(), topic="Orders", queue_id=1, properties=props)
    assert (copy.topic, copy.queue_id, copy.body, copy.flag) == ("Orders", 1, b"payload", 7)
    assert copy.properties is props
    assert (copy.sys_flag, copy.born_timestamp, copy.reconsume_times) == (4, 1_700_000_000_000, 2)
    assert (copy.born_host, copy.store_host) == (("10.0.0.1", 50000), ("10.0.0.2", 10911))
    assert (copy.queue_offset, copy.commitlog_offset, copy.store_timestamp) == (0, 0, 0)
    assert copy.msg_id == ""


def test_a_copy_takes_the_sysflag_store_host_and_reconsume_count_it_is_given() -> None:
    copy = copy_message(
        _stored(),
        topic="%DLQ%G",
        queue_id=0,
        properties={},
        sys_flag=8,
        store_host=STORE_HOST,
        reconsume_times=3,
    )
    assert (copy.sys_flag, copy.store_host, copy.reconsume_times) == (8, STORE_HOST, 3)
    assert copy.born_host == ("10.0.0.1", 50000)


def _header(reconsume_times: int | None) -> SendMessageRequestHeader:
    return SendMessageRequestHeader(
        producer_group="PG",
        topic="Orders",
        default_topic="TBW102",
        default_topic_queue_nums=4,
        queue_id=2,
        sys_flag=1,
        born_timestamp=1_700_000_000_123,
        flag=5,
        reconsume_times=reconsume_times,
    )


def test_a_sent_message_takes_the_header_the_sender_and_this_broker() -> None:
    msg = message_from_request(
        _header(None), "10.1.2.3:40000", STORE_HOST, topic="Orders", queue_id=2, body=b"b"
    )
    assert (msg.topic, msg.queue_id, msg.body, msg.properties) == ("Orders", 2, b"b", {})
    assert (msg.flag, msg.sys_flag, msg.born_timestamp) == (5, 1, 1_700_000_000_123)
    assert (msg.born_host, msg.store_host, msg.reconsume_times) == (
        ("10.1.2.3", 40000),
        STORE_HOST,
        0,
    )


def test_a_batch_member_keeps_its_own_flag_and_the_sysflag_it_is_given() -> None:
    msg = message_from_request(
        _header(4),
        "10.1.2.3:40000",
        STORE_HOST,
        topic="Orders",
        queue_id=2,
        body=b"m",
        properties={"KEYS": "k"},
        flag=9,
        sys_flag=0,
    )
    assert (msg.flag, msg.sys_flag, msg.reconsume_times) == (9, 0, 4)
    assert msg.properties == {"KEYS": "k"}


def test_the_born_host_is_the_senders_address_or_loopback_when_unknown() -> None:
    assert born_host("10.1.2.3:40000") == ("10.1.2.3", 40000)
    assert born_host("::1:40000") == ("::1", 40000)
    assert born_host("") == ("127.0.0.1", 0)
