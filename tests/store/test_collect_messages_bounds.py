"""``collect_messages`` (get_message.c) on a commitlog file whose start is not on its size's
boundary: a unit's offset inside that file but before the position ``offset % size`` maps to
is declined (the Python walk answers), never read before the buffer (a ``frame_fuzz``
finding under AddressSanitizer: one byte to the left of the buffer)."""

from __future__ import annotations

import pytest

from rocketq.common import native_record
from rocketq.store.format import CQ_STORE_UNIT_STRUCT
from rocketq.testing.collect_fuzz import FakeFile

pytestmark = pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built")


def test_a_unit_before_its_file_s_mapped_position_is_declined() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    cq = bytearray(20)
    CQ_STORE_UNIT_STRUCT.pack_into(cq, 0, -1, 1, 0)  # offset -1, in a file from -64
    cq_files = [FakeFile(memoryview(cq), 0, 20)]
    cl_files = [FakeFile(memoryview(bytearray(64)), -64, 64)]
    walked = compiled.collect_messages(
        cq_files, 20, 0, cl_files, 64, -1, 0, 1, 16000, 32, 1 << 20, None, False
    )
    assert walked is None
