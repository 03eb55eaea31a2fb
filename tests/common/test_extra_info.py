"""The POP handle (ExtraInfoUtil) and the POP retry topic names (KeyBuilder), against RocketMQ
5's own tests (KeyBuilderTest, ExtraInfoUtilTest) and the handle example of the gRPC spec."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rocketq.common.extra_info import (
    ExtraInfo,
    ExtraInfoError,
    build_extra_info,
    build_msg_offset_info,
    build_pop_handle,
    build_pop_retry_topic,
    build_start_offset_info,
    group_handles,
    is_pop_retry_topic_v2,
    parse_extra_info,
    parse_msg_offset_info,
    parse_normal_topic,
    parse_start_offset_info,
    pop_handle_prefix,
    real_topic,
    topic_mark,
)


def test_retry_topic_names_v1_and_v2() -> None:
    assert build_pop_retry_topic("test-topic", "test-group") == "%RETRY%test-group_test-topic"
    assert build_pop_retry_topic("test-topic", "test-group", v2=True) == (
        "%RETRY%test-group+test-topic"
    )
    for v2 in (False, True):
        retry = build_pop_retry_topic("test-topic", "test-group", v2)
        assert parse_normal_topic(retry, "test-group") == "test-topic"
        assert is_pop_retry_topic_v2(retry) is v2
    assert parse_normal_topic("test-topic", "test-group") == "test-topic"


def test_extra_info_is_space_separated_in_rocketmqs_order() -> None:
    text = build_extra_info(0, 1764264000123, 60000, 3, "T", "broker-a", 2, 17)
    assert text == "0 1764264000123 60000 3 0 broker-a 2 17"
    e = parse_extra_info(text)
    assert (e.ck_queue_offset, e.pop_time, e.invisible_time, e.revive_qid) == (
        0, 1764264000123, 60000, 3,
    )  # fmt: skip
    assert (e.mark, e.broker_name, e.queue_id, e.queue_offset) == ("0", "broker-a", 2, 17)
    assert e.next_visible_time == 1764264060123
    assert not e.is_order
    assert e.encode() == text
    assert parse_extra_info("0 1 2 999 0 b 0 0").is_order


def test_topic_marks_say_where_the_message_really_is() -> None:
    assert topic_mark("T") == "0"
    assert topic_mark("%RETRY%g_T") == "1"
    assert topic_mark("%RETRY%g+T") == "2"
    assert real_topic("T", "g", "0") == "T"
    assert real_topic("T", "g", "1") == "%RETRY%g_T"
    assert real_topic("T", "g", "2") == "%RETRY%g+T"
    with pytest.raises(ExtraInfoError, match="getRetry fail, format is wrong"):
        real_topic("T", "g", "3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "getPopTime fail, extraInfoStrs length 1"),
        ("12 34", "getInvisibleTime fail, extraInfoStrs length 2"),
        ("0 1 2 3 0 b 1", "getQueueOffset fail, extraInfoStrs length 7"),
        ("x 1 2 3 0 b 1 2", "getCkQueueOffset fail, not a number: 'x'"),
        ("0 1 2 3 7 b 1 2", "getRetry fail, format is wrong"),
    ],
)
def test_a_malformed_handle_says_which_field_failed(text: str, message: str) -> None:
    with pytest.raises(ExtraInfoError) as info:
        parse_extra_info(text)
    assert str(info.value) == message


def test_offset_infos_of_a_pop_response() -> None:
    starts = build_start_offset_info([("T", 0, 5), ("%RETRY%g_T", 0, 9)])
    assert starts == "0 0 5;1 0 9"
    msgs = build_msg_offset_info([("T", 0, [5, 7]), ("%RETRY%g_T", 0, [9])])
    assert msgs == "0 0 5,7;1 0 9"
    assert parse_start_offset_info(starts) == {"0@0": 5, "1@0": 9}
    assert parse_msg_offset_info(msgs) == {"0@0": [5, 7], "1@0": [9]}
    assert parse_start_offset_info(None) == {}
    handle = build_pop_handle(parse_start_offset_info(starts), 100, 30, 1, "T", "b", 0, 7)
    assert handle == "5 100 30 1 0 b 0 7"


@given(
    st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**40), st.integers(0, 999),
    st.sampled_from(["T", "%RETRY%g_T", "%RETRY%g+T"]),
    st.text(st.characters(codec="ascii", exclude_characters=" "), min_size=1, max_size=10),
    st.integers(0, 1023), st.integers(0, 2**62),
)  # fmt: skip
def test_extra_info_round_trip(
    ck: int, pop_time: int, invisible: int, rqid: int, topic: str, bn: str, qid: int, off: int
) -> None:
    text = build_extra_info(ck, pop_time, invisible, rqid, topic, bn, qid, off)
    assert parse_extra_info(text).encode() == text


# ------------------------------------------------- the per-pop prefix against the old builders

TOPICS = st.sampled_from(["T", "%RETRY%g_T", "%RETRY%g+T"])
NAMES = st.text(st.characters(codec="ascii", exclude_characters=" "), min_size=1, max_size=10)


def old_build_pop_handle(
    starts: dict[str, int], pop_time: int, invisible: int, rqid: int, topic: str, bn: str,
    qid: int, off: int,
) -> str:  # fmt: skip
    """The builder before the prefix: every field of every handle through ExtraInfo.encode."""
    start = starts[f"{topic_mark(topic)}@{qid}"]
    return ExtraInfo(start, pop_time, invisible, rqid, topic_mark(topic), bn, qid, off).encode()


@given(
    st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**40), st.integers(0, 999),
    TOPICS, NAMES, st.integers(0, 1023), st.lists(st.integers(0, 2**62), min_size=1, max_size=40),
)  # fmt: skip
def test_a_pops_prefix_plus_each_offset_is_the_old_handle_byte_for_byte(
    start: int, pop_time: int, invisible: int, rqid: int, topic: str, bn: str, qid: int,
    offsets: list[int],
) -> None:  # fmt: skip
    starts = {f"{topic_mark(topic)}@{qid}": start}
    prefix = pop_handle_prefix(starts, pop_time, invisible, rqid, topic, bn, qid)
    for off in offsets:
        old = old_build_pop_handle(starts, pop_time, invisible, rqid, topic, bn, qid, off)
        assert f"{prefix}{off}" == old
        assert build_pop_handle(starts, pop_time, invisible, rqid, topic, bn, qid, off) == old
        assert old == build_extra_info(start, pop_time, invisible, rqid, topic, bn, qid, off)


def old_group_handles(handles: list[str]) -> list[tuple[ExtraInfo, list[int]]]:
    """The batch ack's grouping before the prefix: every handle parsed whole."""
    groups: dict[tuple[str, int, int, int], list[ExtraInfo]] = {}
    for handle in handles:
        e = parse_extra_info(handle)
        groups.setdefault((e.mark, e.queue_id, e.ck_queue_offset, e.pop_time), []).append(e)
    return [(es[0], [e.queue_offset for e in es]) for es in groups.values()]


def outcome(fn: object, handles: list[str]) -> object:
    try:
        return fn(handles)  # type: ignore[operator]
    except ExtraInfoError as exc:
        return ("ExtraInfoError", str(exc))


# handles as pops and changes of invisible time write them, and the odd ones a client could
# send: signs, a ninth field, digits int() refuses, a missing offset
ODD_OFFSETS = st.sampled_from(["+5", "-1", "5 9", "\u00b2", "\u0663", "1_0", "", "x", " 7"])
PREFIXES = st.sampled_from([
    "5 100 30 1 0 a 0 ", "5 100 30 1 0 a 1 ", "5 100 60 1 0 a 0 ",  # same checkpoint, other time
    "17 200 30 999 2 b 0 ", "0 1 2 3 7 b 1 ", "0 1 ", "x 1 2 3 0 b 1 ",
])  # fmt: skip
HANDLES = st.lists(
    st.builds(str.__add__, PREFIXES, st.one_of(st.integers(0, 50).map(str), ODD_OFFSETS)),
    max_size=40,
)


@given(HANDLES)
@example(["5 100 30 1 0 a 0 1", "5 100 30 1 0 a 0 \u00b2", "5 100 30 1 0 a 0 \u0663"])
def test_grouping_by_prefix_gives_the_old_groups_and_errors(handles: list[str]) -> None:
    assert outcome(group_handles, handles) == outcome(old_group_handles, handles)


def test_handles_of_one_pop_group_into_one_checkpoint_per_queue() -> None:
    handles = [f"5 100 30 1 0 b {q} {off}" for off in range(5, 9) for q in (0, 1)]
    handles.append("7 300 30 1 0 b 0 7")  # changed invisible time: a checkpoint of its own
    groups = group_handles(handles)
    assert [(e.queue_id, e.ck_queue_offset, e.pop_time, offs) for e, offs in groups] == [
        (0, 5, 100, [5, 6, 7, 8]),
        (1, 5, 100, [5, 6, 7, 8]),
        (0, 7, 300, [7]),
    ]
