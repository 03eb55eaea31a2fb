"""The commitlog warm-up's C entry point (``populate``, populate.c) on random and wrong
arguments, a round of ``frame_fuzz``: ranges inside, across and outside the buffer, negative and
huge offsets and lengths, read-only buffers asked to be populated for writing, slices that start
and end inside a page, released views, non-buffers. A valid call must leave every byte as it
was and answer a bool; an invalid one must raise, never touch memory outside the buffer.
"""

from __future__ import annotations

import mmap
import random
from typing import Any

from rocketq.common import native_record

PAGE = mmap.PAGESIZE
EXPECTED_ERRORS = (ValueError, TypeError, BufferError, OverflowError)


def _buffer(rng: random.Random, data: bytes) -> tuple[Any, Any]:
    """A buffer over ``data`` of a random kind, and what must be closed after (or None)."""
    kind = rng.randrange(6)
    if kind == 0:
        mm = mmap.mmap(-1, len(data))
        mm[:] = data
        return mm, mm
    if kind == 1:
        return bytearray(data), None
    if kind == 2:
        return data, None  # read-only: write=True must raise BufferError
    if kind == 3:
        start = rng.randrange(len(data))
        return memoryview(bytearray(data))[start : rng.randrange(start, len(data) + 1)], None
    if kind == 4:
        view = memoryview(bytearray(data))
        view.release()
        return view, None
    return rng.choice((None, 7, "text", [1, 2])), None


def check_populate(rng: random.Random) -> str | None:
    """One call of ``populate`` with random arguments; a finding's description, or None."""
    compiled = native_record.COMPILED
    if compiled is None:
        return None
    size = PAGE * rng.randrange(1, 6) + rng.choice((0, 0, rng.randrange(PAGE)))
    data = rng.randbytes(size)
    buf, owner = _buffer(rng, data)
    before = bytes(buf) if isinstance(buf, (bytes, bytearray, mmap.mmap)) else None
    length_of = len(buf) if isinstance(buf, (bytes, bytearray, mmap.mmap)) else size
    offset = rng.choice((0, rng.randrange(length_of + 1), -1, length_of, 1 << 62, -(1 << 62)))
    length = rng.choice(
        (length_of, rng.randrange(length_of + 1), 0, -1, length_of + 1, 1 << 62, 1 << 70)
    )
    write = rng.random() < 0.5
    try:
        try:
            answer: object = compiled.populate(buf, offset, length, write)
        except EXPECTED_ERRORS:
            return None
        if not isinstance(answer, bool):
            return f"populate answered {answer!r}"
        if before is not None and bytes(buf) != before:
            return f"populate changed bytes (offset {offset}, length {length}, write {write})"
        return None
    finally:
        if owner is not None:
            owner.close()
