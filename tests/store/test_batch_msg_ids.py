"""A batch's msgIds joined in C (``batch_msg_ids``, send_batch.c) against the Python join of
``commitlog_send.append_batch_sends``, its reference."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common import native_record

pytestmark = pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built")


def reference(prefix: str, slots: array[int]) -> str:
    return ",".join([f"{prefix}{phy:016X}" for phy in slots[1::4]])


@given(
    prefix=st.text(max_size=40),
    values=st.lists(
        st.integers(0, (1 << 63) - 1)
        | st.sampled_from([0x0123456789ABCDEF, 0x7EDCBA9876543210, (1 << 63) - 1])
        | st.integers(-(1 << 63), -1),
        min_size=2,
        max_size=70,
    ),
)
def test_batch_msg_ids_join_as_the_python_path_or_leave_it_to_it(
    prefix: str, values: list[int]
) -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    slots = array("q", values)
    got = compiled.batch_msg_ids(prefix, slots)
    if got is None:  # declined: a prefix not ASCII, or a negative offset
        assert not prefix.isascii() or any(v < 0 for v in slots[1::4])
    else:
        assert got == reference(prefix, slots)


def test_a_batch_of_32_offsets_joins_with_the_store_s_prefix() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    slots = array("q", [v for k in range(32) for v in (0, 4096 * k + 0xABC, 1100, k)])
    got = compiled.batch_msg_ids("7F00000100002A9F", slots)
    assert got == reference("7F00000100002A9F", slots)
    assert got is not None
    assert got.split(",")[1] == "7F00000100002A9F0000000000001ABC"


def test_slots_that_are_not_int64_are_refused() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    with pytest.raises(TypeError):
        compiled.batch_msg_ids("P", array("i", [0, 1, 2, 3]))
