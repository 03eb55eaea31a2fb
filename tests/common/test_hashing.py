"""Java String.hashCode, ConsumeQueue tag codes and IndexFile key hashes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.hashing import (
    INT32_MIN,
    index_key_hash,
    java_string_hash,
    tags_string_to_tags_code,
)
from rocketq.testing.vectors import INDEX_ENTRIES


def reference_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units with unbounded ints, wrapped once at the end."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = h * 31 + int.from_bytes(units[i : i + 2], "big")
    h &= 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_tag_a_hashes_to_the_consume_queue_code_of_vector_one() -> None:
    assert java_string_hash("TagA") == 84 * 31**3 + 97 * 31**2 + 103 * 31 + 65 == 2598919
    assert tags_string_to_tags_code("TagA") == 2598919


def test_tag_cancel_hashes_to_a_negative_code() -> None:
    assert java_string_hash("TagCancel") == -1018732908
    assert tags_string_to_tags_code("TagCancel") == -1018732908


def test_absent_or_empty_tags_have_code_zero() -> None:
    assert tags_string_to_tags_code(None) == 0
    assert tags_string_to_tags_code("") == 0
    assert java_string_hash("") == 0


def test_non_ascii_strings_hash_over_utf16_code_units() -> None:
    assert java_string_hash("é") == 0xE9
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16.
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("标签") == reference_hash("标签")


def test_polygenelubricants_hashes_to_int_min_and_gets_index_key_hash_zero() -> None:
    assert java_string_hash("polygenelubricants") == INT32_MIN
    assert index_key_hash("polygenelubricants") == 0


@pytest.mark.parametrize(("key", "key_hash", "phy", "diff", "prev"), INDEX_ENTRIES)
def test_index_key_hash_matches_the_vector_entries(
    key: str, key_hash: int, phy: int, diff: int, prev: int
) -> None:
    assert index_key_hash(key) == key_hash


def test_index_key_hash_is_the_absolute_value_of_a_negative_hash() -> None:
    assert index_key_hash("TagCancel") == 1018732908


@given(st.text(max_size=60))
def test_java_string_hash_matches_the_reference_on_any_text(s: str) -> None:
    h = java_string_hash(s)
    assert h == reference_hash(s)
    assert INT32_MIN <= h < 1 << 31
    assert 0 <= index_key_hash(s) < 1 << 31


def test_a_lone_surrogate_hashes_like_java() -> None:
    assert java_string_hash("\ud800") == 0xD800
    assert java_string_hash("a\udc00") == 97 * 31 + 0xDC00
