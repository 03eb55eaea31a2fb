"""Frame mutations for fuzz tests: flipped bytes, truncation, bad lengths."""

from __future__ import annotations

import random
import struct

_LENGTH = struct.Struct(">i")
_HEADER_WORD = struct.Struct(">I")


def mutate_frame(rng: random.Random, frame: bytes) -> bytes:
    """One random corruption of a whole remoting frame (length word included)."""
    data = bytearray(frame)
    choice = rng.randrange(4)
    if choice == 0:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif choice == 1:
        data = data[: rng.randrange(1, len(data))]
    elif choice == 2:
        _HEADER_WORD.pack_into(data, 4, rng.getrandbits(32))
    else:
        _LENGTH.pack_into(data, 0, rng.randint(-(2**31), 2**31 - 1))
    return bytes(data)
