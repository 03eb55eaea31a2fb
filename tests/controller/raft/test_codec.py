"""The Raft message codec: explicit bytes both ways, validated on decode."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.controller.raft import (
    Entry,
    Message,
    MessageDecodeError,
    MessageType,
    Snapshot,
    decode_message,
    encode_message,
)
from rocketq.controller.raft.codec import HEADER_SIZE

U64 = st.integers(0, 2**64 - 1)
entries = st.builds(Entry, U64, U64, st.binary(max_size=64))
snapshots = st.builds(Snapshot, U64, U64, st.binary(max_size=64))
messages = st.builds(
    Message,
    st.sampled_from(MessageType),
    U64,
    U64,
    U64,
    U64,
    U64,
    st.lists(entries, max_size=5).map(tuple),
    U64,
    st.booleans(),
    U64,
    st.binary(max_size=16),
    st.none() | snapshots,
)


@given(messages)
def test_every_message_round_trips(message: Message) -> None:
    assert decode_message(encode_message(message)) == message


@given(messages, st.data())
def test_a_truncated_message_is_refused_with_its_offset(
    message: Message, data: st.DataObject
) -> None:
    encoded = encode_message(message)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(MessageDecodeError) as caught:
        decode_message(encoded[:cut])
    assert 0 <= caught.value.offset <= cut


def test_the_header_layout_is_byte_exact() -> None:
    message = Message(MessageType.APPEND, to=2, sender=1, term=3, log_term=2, index=9, commit=8,
                      entries=(Entry(10, 3, b"ab"),), context=b"c")  # fmt: skip
    encoded = encode_message(message)
    assert encoded[:3] == bytes([1, MessageType.APPEND, 0])
    assert encoded[3:11] == (2).to_bytes(8, "big")  # to
    assert encoded[11:19] == (1).to_bytes(8, "big")  # sender
    assert encoded[59:67] == (1).to_bytes(4, "big") + (1).to_bytes(4, "big")  # counts
    assert encoded[HEADER_SIZE:] == (
        (10).to_bytes(8, "big") + (3).to_bytes(8, "big") + (2).to_bytes(4, "big") + b"ab" + b"c"
    )


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ((0, 9), "unknown version"),
        ((1, 0), "unknown message type"),
        ((2, 0x80), "unknown flags"),
    ],
)
def test_a_malformed_header_is_refused(patch: tuple[int, int], reason: str) -> None:
    encoded = bytearray(encode_message(Message(MessageType.HEARTBEAT, 1, 2, 3)))
    encoded[patch[0]] = patch[1]
    with pytest.raises(MessageDecodeError, match=reason):
        decode_message(bytes(encoded))


def test_trailing_bytes_are_refused() -> None:
    encoded = encode_message(Message(MessageType.HEARTBEAT, 1, 2, 3)) + b"x"
    with pytest.raises(MessageDecodeError, match="trailing"):
        decode_message(encoded)
