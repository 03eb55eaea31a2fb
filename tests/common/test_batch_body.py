"""The SEND_BATCH_MESSAGE body codec (MessageDecoder.encodeMessages / decodeMessages)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.message import Message
from rocketq.common.message_decoder import (
    decode_batch_messages,
    encode_batch_message,
    encode_batch_messages,
)
from rocketq.errors import DecodeError


def test_a_batch_record_has_the_documented_layout() -> None:
    msg = Message("T", b"abc", flag=7, keys="k")
    data = encode_batch_message(msg)
    props = b"KEYS\x01k\x02"
    assert data == struct.pack(">iiiii", 22 + 3 + len(props), 0, 0, 7, 3) + b"abc" + (
        struct.pack(">h", len(props)) + props
    )


def test_a_batch_decodes_in_order_with_the_given_topic() -> None:
    msgs = [Message("T", b"one", tags="a"), Message("T", b"", flag=2)]
    decoded = decode_batch_messages(encode_batch_messages(msgs), "T")
    assert [(m.topic, m.body, m.flag, m.properties) for m in decoded] == [
        ("T", b"one", 0, {"TAGS": "a"}),
        ("T", b"", 2, {}),
    ]


def test_an_empty_batch_body_decodes_to_no_messages() -> None:
    assert decode_batch_messages(b"") == []


def test_a_truncated_batch_body_raises_decode_error_at_the_record() -> None:
    data = encode_batch_messages([Message("T", b"first"), Message("T", b"second body")])
    first = len(encode_batch_message(Message("T", b"first")))
    with pytest.raises(DecodeError) as info:
        decode_batch_messages(data[:-3])
    assert info.value.offset == first
    with pytest.raises(DecodeError):
        decode_batch_messages(data[: first + 10])


def test_a_batch_total_size_that_disagrees_raises_decode_error() -> None:
    data = bytearray(encode_batch_message(Message("T", b"abc")))
    struct.pack_into(">i", data, 0, 99)
    with pytest.raises(DecodeError, match="TOTALSIZE 99"):
        decode_batch_messages(bytes(data))


def test_a_batch_body_length_past_the_end_raises_decode_error() -> None:
    data = bytearray(encode_batch_message(Message("T", b"abc")))
    struct.pack_into(">i", data, 16, 1000)
    with pytest.raises(DecodeError, match="BODYLENGTH 1000"):
        decode_batch_messages(bytes(data))


def _message(topic: str, body: bytes, flag: int, properties: dict[str, str]) -> Message:
    """A message with any properties, system names too (as a decoded batch carries them)."""
    msg = Message(topic, body, flag=flag)
    msg.properties = properties
    return msg


_chars = st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",))
_messages = st.builds(
    _message,
    topic=st.just("T"),
    body=st.binary(max_size=300),
    flag=st.integers(-(1 << 31), (1 << 31) - 1),
    properties=st.dictionaries(
        st.text(_chars, min_size=1, max_size=10), st.text(_chars, min_size=1, max_size=20)
    ),
)


@given(st.lists(_messages, max_size=8))
def test_batch_bodies_round_trip(msgs: list[Message]) -> None:
    decoded = decode_batch_messages(encode_batch_messages(msgs), "T")
    assert [(m.body, m.flag, m.properties) for m in decoded] == [
        (m.body, m.flag, m.properties) for m in msgs
    ]
