"""decode_record_properties: a record's properties without decoding the rest."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import (
    decode_message,
    decode_record_properties,
    encode_message,
)
from rocketq.errors import DecodeError
from rocketq.testing.strategies import messages


@given(st.one_of(messages(), messages(topic=st.text("ab", min_size=128, max_size=300))))
def test_properties_read_alone_equal_the_full_decode(msg: MessageExt) -> None:
    record = bytes(encode_message(msg))
    assert decode_record_properties(record) == decode_message(record).properties


def test_a_properties_length_that_disagrees_with_the_record_size_raises() -> None:
    record = bytearray(encode_message(MessageExt(topic="T", body=b"x", properties={"a": "1"})))
    props_len_at = len(record) - len(b"a\x011\x02") - 2
    record[props_len_at : props_len_at + 2] = (500).to_bytes(2, "big")
    with pytest.raises(DecodeError, match="PROPERTIESLENGTH 500 disagrees with TOTALSIZE"):
        decode_record_properties(bytes(record))
