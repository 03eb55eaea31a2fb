"""The PULL_MESSAGE header the client writes out equals the generic header encoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.pull_api import pull_ext_fields
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData

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
