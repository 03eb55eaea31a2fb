"""The SEND_MESSAGE_V2 header the client writes out equals the generic V2 encoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.api import send_v2_ext_fields
from rocketq.remoting.protocol.headers import SendMessageRequestHeader

ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
text = st.text(max_size=40)

headers = st.builds(
    SendMessageRequestHeader,
    producer_group=text,
    topic=text,
    default_topic=text,
    default_topic_queue_nums=ints,
    queue_id=ints,
    sys_flag=ints,
    born_timestamp=ints,
    flag=ints,
    properties=st.none() | text,
    reconsume_times=st.none() | ints,
    unit_mode=st.booleans(),
    batch=st.booleans(),
    max_reconsume_times=st.none() | ints,
)


@given(headers)
def test_the_written_out_v2_fields_are_the_generic_encoding_key_for_key_in_order(
    header: SendMessageRequestHeader,
) -> None:
    expected = header.to_v2().to_ext_fields()
    got = send_v2_ext_fields(header)
    assert list(got.items()) == list(expected.items())  # the JSON header keeps this order
