"""RecallMessageHandle v1 as RocketMQ 5.3.2 builds and reads it (RecallMessageHandleTest):
URL-safe base64 of ``v1 <topic> <brokerName> <timestamp> <messageId>``."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.recall_message_handle import (
    RecallHandleError,
    RecallMessageHandleV1,
    build_handle,
    decode_handle,
)


def test_a_handle_is_the_url_safe_base64_of_five_space_separated_parts() -> None:
    handle = build_handle("topic", "broker-0", "1700000000001", "7F0000010001")
    assert handle == "djEgdG9waWMgYnJva2VyLTAgMTcwMDAwMDAwMDAwMSA3RjAwMDAwMTAwMDE="
    assert decode_handle(handle) == RecallMessageHandleV1(
        "topic", "broker-0", "1700000000001", "7F0000010001"
    )


@pytest.mark.parametrize(
    "handle",
    [
        "",
        None,
        base64.urlsafe_b64encode(b"v1 a b c").decode(),  # four parts
        base64.urlsafe_b64encode(b"v2 a b c d").decode(),  # another version
        "v1 a b c d",  # not base64
    ],
)
def test_what_java_refuses_is_refused(handle: str | None) -> None:
    with pytest.raises(RecallHandleError, match="recall handle is invalid"):
        decode_handle(handle)


def test_an_unpadded_handle_decodes_as_javas_decoder_takes_it() -> None:
    handle = build_handle("t", "b", "1", "m").rstrip("=")
    assert decode_handle(handle).message_id == "m"


names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=" "), min_size=1)


@given(names, names, st.integers(0, 2**62).map(str), names)
def test_a_handle_round_trips(topic: str, broker: str, timestamp: str, msg_id: str) -> None:
    handle = RecallMessageHandleV1(topic, broker, timestamp, msg_id)
    assert decode_handle(handle.encode()) == handle
