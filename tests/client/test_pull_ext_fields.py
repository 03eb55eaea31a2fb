"""The PULL_MESSAGE header the client writes out equals the generic header encoding; a
pulled body's messages as the push consumer gets them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.pull_api import process_pull_body, pull_ext_fields
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
