"""The properties string codec: RocketMQ's string2messageProperties rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.properties import (
    decode_properties,
    encode_properties,
    properties_to_string,
    string_to_properties,
)

VECTOR_ONE = (
    b"UNIQ_KEY\x017F00000130391B6D358647B760000000\x02CLUSTER\x01DefaultCluster\x02"
    b"TAGS\x01TagA\x02KEYS\x01k1 k2\x02WAIT\x01true\x02"
)


def test_vector_one_properties_encode_in_insertion_order_with_a_trailing_separator() -> None:
    props = {
        "UNIQ_KEY": "7F00000130391B6D358647B760000000",
        "CLUSTER": "DefaultCluster",
        "TAGS": "TagA",
        "KEYS": "k1 k2",
        "WAIT": "true",
    }
    assert encode_properties(props) == VECTOR_ONE
    assert len(VECTOR_ONE) == 96
    assert decode_properties(VECTOR_ONE) == props


def test_the_trailing_separator_is_optional_when_decoding() -> None:
    assert decode_properties(VECTOR_ONE[:-1]) == decode_properties(VECTOR_ONE)
    assert string_to_properties("A\x01b") == {"A": "b"}


def test_pairs_with_an_empty_value_or_name_are_dropped() -> None:
    assert string_to_properties("A\x01\x02B\x01x\x02\x01yy\x02") == {"B": "x"}


def test_segments_shorter_than_three_characters_are_skipped() -> None:
    # "A\x01" (2 chars) would be an empty value anyway; "ab" has no separator.
    assert string_to_properties("ab\x02A\x01\x02K\x01v\x02") == {"K": "v"}
    assert string_to_properties("\x02\x02\x02") == {}


def test_a_value_may_hold_a_name_value_separator_after_the_first() -> None:
    assert string_to_properties("K\x01a\x01b\x02") == {"K": "a\x01b"}


def test_none_values_are_skipped_and_empty_maps_encode_to_nothing() -> None:
    assert properties_to_string({"A": None, "B": "1"}) == "B\x011\x02"
    assert encode_properties({}) == b""
    assert encode_properties(None) == b""
    assert decode_properties(b"") == {}


def test_utf8_names_and_values_survive() -> None:
    props = {"键": "值 ✓"}
    data = encode_properties(props)
    assert data == "键\x01值 ✓\x02".encode()
    assert decode_properties(data) == props


_chars = st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",))
_props = st.dictionaries(
    st.text(_chars, min_size=1, max_size=12),
    st.text(_chars, min_size=1, max_size=30),
    max_size=10,
)


@given(_props)
def test_properties_round_trip_when_names_and_values_are_non_empty(props: dict[str, str]) -> None:
    # A one-character name with a one-character value still makes a 3-character segment.
    data = encode_properties(props)
    assert decode_properties(data) == props
    assert list(decode_properties(data)) == list(props)


@given(_props)
def test_decoding_without_the_trailing_separator_gives_the_same_map(props: dict[str, str]) -> None:
    text = properties_to_string(props)
    assert string_to_properties(text.removesuffix("\x02")) == string_to_properties(text)
