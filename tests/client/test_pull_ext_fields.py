"""The PULL_MESSAGE header the client writes out equals the generic header encoding; a
pulled body's messages as the push consumer gets them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.pull_api import PullFields, process_pull_body, pull_ext_fields
from rocketq.client.status import PullResult, PullStatus
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData, build_subscription_data

ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
text = st.text(max_size=40)


@given(text, text, ints, ints, ints, ints, ints, ints, ints, text, text)
def test_the_written_out_pull_fields_are_the_generic_encoding_key_for_key_in_order(
    group: str,
    topic: str,
    queue_id: int,
    offset: int,
    max_nums: int,
    sys_flag: int,
    commit_offset: int,
    suspend_ms: int,
    sub_version: int,
    expression: str,
    expression_type: str,
) -> None:
    sub = SubscriptionData(
        topic=topic, sub_string=expression, sub_version=sub_version, expression_type=expression_type
    )
    expected = PullMessageRequestHeader(
        consumer_group=group,
        topic=topic,
        queue_id=queue_id,
        queue_offset=offset,
        max_msg_nums=max_nums,
        sys_flag=sys_flag,
        commit_offset=commit_offset,
        suspend_timeout_millis=suspend_ms,
        sub_version=sub_version,
        subscription=expression,
        expression_type=expression_type,
    ).to_ext_fields()
    got = pull_ext_fields(
        group, topic, queue_id, offset, max_nums, sys_flag, commit_offset, suspend_ms, sub
    )
    assert list(got.items()) == list(expected.items())  # the JSON header keeps this order


_pull_args = st.tuples(
    st.sampled_from(["G1", "G2"]),
    st.sampled_from(["T1", "T2"]),
    st.integers(0, 3),
    ints,
    st.integers(1, 64),
    st.integers(0, 15),
    ints,
    st.sampled_from([0, 15000]),
    st.sampled_from([0, 7]),
    st.sampled_from(["*", "a || b"]),
    st.sampled_from(["TAG", "SQL92"]),
)


@given(st.lists(_pull_args, min_size=1, max_size=8))
def test_successive_pull_fields_from_the_last_ones_equal_the_written_out_fields(
    pulls: list[tuple[str, str, int, int, int, int, int, int, int, str, str]],
) -> None:
    made = PullFields()
    for group, topic, qid, offset, nums, flag, commit, suspend, version, expr, etype in pulls:
        sub = SubscriptionData(
            topic=topic, sub_string=expr, sub_version=version, expression_type=etype
        )
        args = (group, topic, qid, offset, nums, flag, commit, suspend, sub)
        got = made.fields(*args)
        assert list(got.items()) == list(pull_ext_fields(*args).items())
        got["signature"] = "added by a hook"  # the next pull's fields are not this one's
    assert "signature" not in made.fields(*args)


def test_a_pulled_body_keeps_the_subscribed_tags_with_their_client_id_and_the_queue_offsets() -> (
    None
):
    records = b""
    for i, tags in enumerate(("a", "b", "a")):
        msg = MessageExt(topic="T", body=b"x%d" % i, queue_offset=i, commitlog_offset=100 * i)
        msg.tags = tags
        if i != 2:  # the last one has no UNIQ_KEY: its offset id stays
            msg.put_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, f"UNIQ{i}")
        records += bytes(encode_message(msg))
    result = PullResult(status=PullStatus.FOUND, next_begin_offset=3, min_offset=0, max_offset=17)
    kept = process_pull_body(records, build_subscription_data("T", "a"), result)
    assert [m.body for m in kept] == [b"x0", b"x2"]
    assert kept[0].msg_id == "UNIQ0"
    assert kept[1].msg_id == kept[1].offset_msg_id
    for msg in kept:
        assert msg.properties[mc.PROPERTY_MIN_OFFSET] == "0"
        assert msg.properties[mc.PROPERTY_MAX_OFFSET] == "17"
