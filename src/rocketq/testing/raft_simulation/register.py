"""``RegisterStore``: the simulator's state machine, one integer register per key changed by
compare-and-set, as the controller's per-group records will be.

A command, big-endian: ``op_id u64 | key u8 | expected i64 | new i64`` (25 bytes). A snapshot
is the sorted ``key u8 | value i64`` pairs.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

COMMAND_STRUCT = struct.Struct(
    ">"
    "Q"  # op id (unique per client operation)
    "B"  # key
    "q"  # expected value
    "q"  # new value
)
COMMAND_SIZE = COMMAND_STRUCT.size
assert COMMAND_SIZE == 25
PAIR_STRUCT = struct.Struct(">Bq")


@dataclass(frozen=True, slots=True)
class CasCommand:
    op_id: int
    key: int
    expected: int
    new: int

    def encode(self) -> bytes:
        return COMMAND_STRUCT.pack(self.op_id, self.key, self.expected, self.new)

    @classmethod
    def decode(cls, data: bytes) -> CasCommand:
        return cls(*COMMAND_STRUCT.unpack(data))


@dataclass(slots=True)
class RegisterStore:
    values: dict[int, int] = field(default_factory=dict)

    def apply(self, command: CasCommand) -> bool:
        if self.values.get(command.key, 0) != command.expected:
            return False
        self.values[command.key] = command.new
        return True

    def read(self, key: int) -> int:
        return self.values.get(key, 0)

    def snapshot(self) -> bytes:
        return b"".join(PAIR_STRUCT.pack(k, v) for k, v in sorted(self.values.items()))

    @classmethod
    def restore(cls, data: bytes) -> RegisterStore:
        return cls(dict(PAIR_STRUCT.iter_unpack(data)))
