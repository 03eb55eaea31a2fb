"""Message building: keywords, system names refused, UNIQ_KEY, compression, tag expressions."""

from __future__ import annotations

import zlib

import pytest

from rocketq.client import Message
from rocketq.client.message import (
    COMPRESSED_SYS_FLAG,
    check_message,
    compress_body,
    prepare_for_send,
    restore_retry_topic,
)
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.errors import ClientError, FilterExpressionError
from rocketq.remoting.protocol.subscription import (
    build_subscription_data,
    is_tag_matched,
    parse_tags,
)


def test_message_keywords_become_rocketmq_properties() -> None:
    msg = Message("Orders", b"x", tags="TagA", keys=["k1", "k2"], properties={"a": "1"})
    assert msg.properties == {"a": "1", "TAGS": "TagA", "KEYS": "k1 k2"}
    assert msg.keys == ["k1", "k2"]
    assert Message("T", b"x", keys="one").keys == ["one"]
    assert Message("T", b"x", delay_time_level=3).delay_time_level == 3
    assert Message("T", b"x", wait_store_msg_ok=False).wait_store_msg_ok is False


def test_a_user_property_with_a_system_name_is_refused() -> None:
    with pytest.raises(ClientError):
        Message("T", b"x", properties={"UNIQ_KEY": "mine"})
    with pytest.raises(ClientError):
        Message("T", b"x", properties={"a": ""})


@pytest.mark.parametrize("topic", ["", "a b", "x" * 128, "t/1"])
def test_an_illegal_topic_is_refused_before_sending(topic: str) -> None:
    with pytest.raises(ClientError):
        check_message(Message(topic, b"x"), 1024)


def test_an_empty_or_oversized_body_is_refused_before_sending() -> None:
    with pytest.raises(ClientError):
        check_message(Message("T", b""), 1024)
    with pytest.raises(ClientError):
        check_message(Message("T", b"x" * 1025), 1024)


def test_prepare_gives_a_java_layout_uniq_key_once() -> None:
    msg = Message("T", b"x")
    prepare_for_send(msg, max_size=1024, compress_over=4096, level=5)
    first = msg.uniq_key
    assert first is not None
    assert len(first) == 32
    assert int(first, 16) >= 0
    prepare_for_send(msg, max_size=1024, compress_over=4096, level=5)
    assert msg.uniq_key == first


def test_a_body_of_four_kib_or_more_is_zlib_compressed_and_flagged() -> None:
    body = b"abcd" * 1024
    sent, flag = compress_body(body, 4096, 5)
    assert flag == COMPRESSED_SYS_FLAG
    assert flag & MessageSysFlag.COMPRESSED_FLAG
    assert zlib.decompress(sent) == body
    assert sent[:2] == b"\x78\x5e"  # zlib header of level 5
    assert compress_body(body[:-1], 4096, 5) == (body[:-1], 0)


def test_tag_expressions_split_on_double_bars_and_trim() -> None:
    assert parse_tags("*") == []
    assert parse_tags(" ") == []
    assert parse_tags("TagA || TagB ||  ") == ["TagA", "TagB"]
    sub = build_subscription_data("T", "TagA || TagB")
    assert sub.tags_set == ["TagA", "TagB"]
    assert sub.code_set == [2598919, 2598920]
    assert sub.sub_string == "TagA || TagB"
    assert build_subscription_data("T", "*").sub_string == "*"
    with pytest.raises(FilterExpressionError, match="has no tag"):
        build_subscription_data("T", "||")


def test_the_client_filter_drops_tags_outside_the_set() -> None:
    sub = build_subscription_data("T", "TagA")
    assert is_tag_matched(sub, "TagA")
    assert not is_tag_matched(sub, "TagB")
    assert not is_tag_matched(sub, None)
    assert is_tag_matched(build_subscription_data("T", "*"), None)


def test_a_redelivered_message_shows_its_original_topic() -> None:
    msg = MessageExt(topic="%RETRY%G", body=b"x", properties={"RETRY_TOPIC": "Orders"})
    restore_retry_topic(msg, "G")
    assert msg.topic == "Orders"
    other = MessageExt(topic="%RETRY%H", body=b"x", properties={"RETRY_TOPIC": "Orders"})
    restore_retry_topic(other, "G")
    assert other.topic == "%RETRY%H"


def test_the_client_message_is_the_common_message() -> None:
    from rocketq.common.message import Message as CommonMessage

    assert Message is CommonMessage
    msg = Message("T", b"x", tags="A")
    assert msg == CommonMessage("T", b"x", tags="A")
    assert msg != CommonMessage("T", b"x", tags="B")
