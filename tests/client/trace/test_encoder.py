"""TraceDataEncoder's format: golden records as RocketMQ's Java client writes them
(client/trace/TraceDataEncoder.java, TraceConstants' \\x01 and \\x02), decoded and re-encoded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.trace import (
    MessageType,
    TraceBean,
    TraceContext,
    TraceType,
    decode_trace_data,
    decode_trace_views,
    encode_trace_context,
)

MSG_ID = "7F00000100002A9F0000000000000000"
OFFSET_ID = "C0A8000100002A9F0000000000001A2B"
PUB = (
    "Pub\x011700000000000\x01DefaultRegion\x01pg\x01TopicTest\x01" + MSG_ID + "\x01TagA\x01"
    "k1 k2\x01127.0.0.1:10911\x015\x0112\x010\x01" + OFFSET_ID + "\x01true\x02"
)
SUB_BEFORE = (
    "SubBefore\x011700000000100\x01DefaultRegion\x01cg\x01REQ1\x01" + MSG_ID + "\x012\x01k1\x02"
)
SUB_AFTER = "SubAfter\x01REQ1\x01" + MSG_ID + "\x017\x01false\x01k1\x014\x011700000000107\x01cg\x02"
END_TX = (
    "EndTransaction\x011700000000200\x01DefaultRegion\x01pg\x01TopicTest\x01" + MSG_ID
    + "\x01null\x01null\x01127.0.0.1:10911\x011\x01TX1\x01COMMIT_MESSAGE\x01true\x02"
)  # fmt: skip
RECALL = "Recall\x011700000000300\x01DefaultRegion\x01pg\x01TopicTest\x01" + MSG_ID + "\x01true\x02"


def test_java_pub_record_decodes_and_encodes_back_byte_for_byte() -> None:
    [ctx] = decode_trace_data(PUB)
    bean = ctx.trace_beans[0]
    assert (ctx.trace_type, ctx.timestamp_ms, ctx.group_name) == (
        TraceType.Pub,
        1700000000000,
        "pg",
    )
    assert (bean.topic, bean.msg_id, bean.tags, bean.keys) == ("TopicTest", MSG_ID, "TagA", "k1 k2")
    assert (bean.store_host, bean.body_length, ctx.cost_time_ms) == ("127.0.0.1:10911", 5, 12)
    assert (bean.msg_type, bean.offset_msg_id, ctx.success) == (
        MessageType.Normal_Msg,
        OFFSET_ID,
        True,
    )
    assert encode_trace_context(ctx) == PUB
    assert ctx.trans_keys() == {MSG_ID, "k1", "k2"}


def test_java_sub_records_decode_with_group_request_and_context_code() -> None:
    before, after = decode_trace_data(SUB_BEFORE + SUB_AFTER)
    assert (before.trace_type, before.request_id, before.group_name) == (
        TraceType.SubBefore,
        "REQ1",
        "cg",
    )
    assert before.trace_beans[0].retry_times == 2
    assert (after.trace_type, after.request_id, after.cost_time_ms) == (
        TraceType.SubAfter,
        "REQ1",
        7,
    )
    assert (after.success, after.context_code, after.timestamp_ms) == (False, 4, 1700000000107)
    assert after.group_name == "cg"
    assert encode_trace_context(before) + encode_trace_context(after) == SUB_BEFORE + SUB_AFTER


def test_java_end_transaction_and_recall_records_round_trip() -> None:
    end, recall = decode_trace_data(END_TX + RECALL)
    assert end.trace_beans[0].transaction_state == "COMMIT_MESSAGE"
    assert end.trace_beans[0].from_transaction_check is True
    assert end.trace_beans[0].msg_type is MessageType.Trans_Msg_Half
    assert (recall.trace_type, recall.success) == (TraceType.Recall, True)
    assert encode_trace_context(end) + encode_trace_context(recall) == END_TX + RECALL


def test_older_java_layouts_decode() -> None:
    """A Pub of 13 fields (no offsetMsgId) or 15 (clientHost), a SubAfter of 6 fields (no
    context code) and one written for AccessChannel.CLOUD (no timestamp or group)."""
    short_pub = PUB.replace(OFFSET_ID + "\x01", "")
    assert decode_trace_data(short_pub)[0].success is True
    long_pub = PUB[:-1] + "\x0110.0.0.9\x02"
    assert decode_trace_data(long_pub)[0].trace_beans[0].client_host == "10.0.0.9"
    old, cloud = decode_trace_data(
        "SubAfter\x01R\x01M\x013\x01true\x01k\x02SubAfter\x01R\x01M\x013\x01true\x01k\x010\x01\x02"
    )
    assert (old.cost_time_ms, old.context_code, old.group_name) == (3, 0, "null")
    assert (cloud.success, cloud.timestamp_ms) == (True, 0)


def test_unknown_types_are_skipped_and_views_keep_the_asked_message_only() -> None:
    other = PUB.replace(MSG_ID, "OTHER")
    body = ("Nope\x011\x02" + PUB + other + SUB_BEFORE + SUB_AFTER).encode()
    views = decode_trace_views(MSG_ID, body, "10.0.0.7")
    assert [v.msg_type for v in views] == ["Pub", "SubBefore", "SubAfter"]
    assert {v.client_host for v in views} == {"10.0.0.7"}
    assert views[2].status == "failed"
    assert views[1].request_id == views[2].request_id == "REQ1"


_text = st.text(
    st.characters(blacklist_characters="\x01\x02 ", blacklist_categories=["Cs"]), min_size=1
)


@given(
    topic=_text,
    group=_text,
    msg_id=_text,
    keys=st.lists(_text, min_size=1, max_size=3),
    cost=st.integers(0, 2**31 - 1),
    ok=st.booleans(),
    msg_type=st.sampled_from(MessageType),
)
def test_pub_round_trip(
    topic: str, group: str, msg_id: str, keys: list[str], cost: int, ok: bool, msg_type: MessageType
) -> None:
    bean = TraceBean(topic=topic, msg_id=msg_id, keys=" ".join(keys), msg_type=msg_type)
    ctx = TraceContext(trace_type=TraceType.Pub, group_name=group, cost_time_ms=cost, success=ok)
    ctx.trace_beans = [bean]
    [back] = decode_trace_data(encode_trace_context(ctx))
    assert back == ctx


# RocketMQ's TraceDataEncoderTest: its Pub record, and the number of fields Java's
# String.split finds in each type's record (trailing empties dropped, as Java drops them)
JAVA_TEST_PUB = (
    "Pub\x011625883640000\x01DefaultRegion\x01PID-test\x01topic-test\x01"
    "AC1415116D1418B4AAC217FE1B4E0000\x01Tags\x01Keys\x01127.0.0.1:10911\x0126\x01245\x010\x01"
    "0A9A002600002A9F0000000000002329\x01true\x02"
)
JAVA_ID = "AC1415116D1418B4AAC217FE1B4E0000"


def _java_split_count(data: str) -> int:
    items = data.split("\x01")
    while items and not items[-1]:
        items.pop()
    return len(items)


def test_rocketmq_test_suite_pub_record_decodes_and_re_encodes() -> None:
    [ctx] = decode_trace_data(JAVA_TEST_PUB)
    assert (ctx.group_name, ctx.cost_time_ms, ctx.trace_beans[0].body_length) == (
        "PID-test",
        245,
        26,
    )
    assert ctx.trace_beans[0].offset_msg_id == "0A9A002600002A9F0000000000002329"
    assert encode_trace_context(ctx) == JAVA_TEST_PUB
    assert len(ctx.trans_keys()) == 2  # the msgId and "Keys"


def test_each_record_has_the_field_count_of_rocketmq_s_format_tests() -> None:
    bean = TraceBean(topic="topic-test", msg_id=JAVA_ID, tags="tags", keys="keys")
    bean.store_host, bean.body_length, bean.offset_msg_id = "127.0.0.1:10911", 100, JAVA_ID
    counts = {}
    for kind in TraceType:
        ctx = TraceContext(trace_type=kind, group_name="GroupName-test", request_id="3455848576927")
        ctx.trace_beans = [bean]
        counts[kind] = _java_split_count(encode_trace_context(ctx))
    assert counts[TraceType.Pub] == 14
    assert counts[TraceType.SubBefore] == 8
    assert counts[TraceType.SubAfter] == 9
    assert counts[TraceType.EndTransaction] == 13


def test_trace_keys_split_a_message_s_keys() -> None:
    ctx = TraceContext(trace_type=TraceType.EndTransaction)
    ctx.trace_beans = [TraceBean(msg_id=JAVA_ID, keys="Keys Keys2")]
    assert ctx.trans_keys() == {JAVA_ID, "Keys", "Keys2"}
