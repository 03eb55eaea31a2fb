"""RocketMQ 5's attribute rules (AttributeParser, AttributeUtil, TopicAttributes,
TopicMessageType), with RocketMQ's messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common import message_const as mc
from rocketq.common.attribute import (
    SUBSCRIPTION_GROUP_ATTRIBUTES,
    TOPIC_ATTRIBUTES,
    AttributeRefusedError,
    TopicMessageType,
    alter_current_attributes,
    java_hash_map_order,
    parse_to_map,
    parse_to_string,
)


def alter(create: bool, current: dict[str, str], change: str) -> dict[str, str]:
    return alter_current_attributes(create, TOPIC_ATTRIBUTES, current, parse_to_map(change))


def test_parse_to_map_keeps_the_signs_and_refuses_what_attribute_parser_refuses() -> None:
    assert parse_to_map("+message.type=FIFO,-reserve.time") == {
        "+message.type": "FIFO",
        "-reserve.time": "",
    }
    assert parse_to_map("") == {}
    with pytest.raises(AttributeRefusedError, match="add/alter attribute format is wrong: a"):
        parse_to_map("a=1")
    with pytest.raises(AttributeRefusedError, match="delete attribute format is wrong: b"):
        parse_to_map("b")
    with pytest.raises(AttributeRefusedError, match=r"key duplication: \+a"):
        parse_to_map("+a=1,+a=2")


_KEY = st.text(alphabet="abcdefghij.", min_size=1, max_size=8)


@given(
    st.dictionaries(_KEY, st.text(alphabet="xyz0123456789", min_size=1, max_size=5), max_size=4),
    st.sets(_KEY, max_size=3),
)
def test_parse_to_string_round_trips_through_parse_to_map(
    upserts: dict[str, str], deletes: set[str]
) -> None:
    change = {f"+{k}": v for k, v in upserts.items()} | {f"-{k}": "" for k in deletes}
    assert parse_to_map(parse_to_string(change)) == change


def test_a_new_topic_takes_every_known_attribute_with_a_supported_value() -> None:
    created = alter(
        True,
        {},
        "+message.type=FIFO,+queue.type=SimpleCQ,+reserve.time=72,+cleanup.policy=DELETE",
    )
    # java.util.HashMap's order, as RocketMQ writes the map
    assert list(created) == ["cleanup.policy", "message.type", "queue.type", "reserve.time"]
    assert created["message.type"] == "FIFO"


def test_message_type_and_reserve_time_change_and_delete_after_creation() -> None:
    current = {"message.type": "FIFO", "reserve.time": "72"}
    assert alter(False, current, "+message.type=DELAY,-reserve.time") == {"message.type": "DELAY"}
    assert alter(False, current, "+reserve.time=24")["reserve.time"] == "24"


@pytest.mark.parametrize(
    ("create", "current", "change", "remark"),
    [
        (True, {}, "+color=red", "unsupported key: color"),
        (False, {}, "+message.type=QUEUE", "value is not in set: [UNSPECIFIED, NORMAL, FIFO"),
        (True, {}, "+reserve.time=-2", "value is not in range(-1, 9223372036854775807)"),
        (True, {}, "+reserve.time=soon", 'For input string: "soon"'),
        (True, {}, "-message.type", "only add attribute is supported while creating topic"),
        (False, {}, "-message.type", "attempt to delete a nonexistent key: message.type"),
        (False, {}, "+queue.type=SimpleCQ", "attempt to update an unchangeable attribute"),
        (
            False,
            {"cleanup.policy": "DELETE"},
            "-cleanup.policy",
            "attempt to update an unchangeable attribute. key: cleanup.policy",
        ),
        (True, {}, "+queue.type=BatchCQ", "queue.type=BatchCQ is not supported by rocketq"),
        (True, {}, "+cleanup.policy=COMPACTION", "cleanup.policy=COMPACTION is not supported"),
        (True, {}, "+queue.type=Fancy", "value is not in set: [BatchCQ, SimpleCQ]"),
    ],
)
def test_refused_changes_say_why_in_rocketmq_words(
    create: bool, current: dict[str, str], change: str, remark: str
) -> None:
    with pytest.raises(AttributeRefusedError) as refused:
        alter(create, current, change)
    assert remark in str(refused.value)


def test_rocketmq_5_knows_no_subscription_group_attribute() -> None:
    with pytest.raises(AttributeRefusedError, match="unsupported key: x"):
        alter_current_attributes(True, SUBSCRIPTION_GROUP_ATTRIBUTES, {}, {"+x": "1"})
    assert alter_current_attributes(False, SUBSCRIPTION_GROUP_ATTRIBUTES, {}, {}) == {}


def test_java_hash_map_order_sorts_by_bucket_of_string_hash_code() -> None:
    # "message.type".hashCode() spreads to bucket 4, "cleanup.policy" to 2 (of 16)
    assert list(java_hash_map_order({"message.type": "A", "cleanup.policy": "B"})) == [
        "cleanup.policy",
        "message.type",
    ]


@pytest.mark.parametrize(
    ("properties", "kind"),
    [
        ({mc.PROPERTY_TRANSACTION_PREPARED: "true", mc.PROPERTY_SHARDING_KEY: "g"}, "TRANSACTION"),
        ({mc.PROPERTY_TIMER_DELIVER_MS: "1"}, "DELAY"),
        ({mc.PROPERTY_DELAY_TIME_LEVEL: "3"}, "DELAY"),
        ({mc.PROPERTY_SHARDING_KEY: "g"}, "FIFO"),
        ({mc.PROPERTY_TAGS: "A"}, "NORMAL"),
    ],
)
def test_a_message_type_is_read_from_its_properties(properties: dict[str, str], kind: str) -> None:
    assert TopicMessageType.parse_from_message_property(properties) is TopicMessageType(kind)
