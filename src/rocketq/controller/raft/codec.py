"""The binary form of a Raft ``Message``: explicit ``struct`` layouts, validated on decode; no
pickle, no eval (a controller port is reachable by anyone on the network).

A message, big-endian::

    +--------+------+--------+-----+--------+------+----------+-------+-------+--------+-------+
    | version| type | flags  | to  | sender | term | log_term | index | commit| hint   | counts|
    | 1      | 1    | 1      | 8   | 8      | 8    | 8        | 8     | 8     | 8      | 4+4   |
    +--------+------+--------+-----+--------+------+----------+-------+-------+--------+-------+
    = 67 bytes of header, then ``entry_count`` entries, the context, and the snapshot when
    flags bit 1 is set. flags bit 0 is ``reject``.

An entry (and the snapshot) is ``index u64 | term u64 | data_length u32 | data`` (20 + n bytes).
"""

from __future__ import annotations

import struct

from rocketq.controller.raft.message import Entry, Message, MessageType, Snapshot

VERSION = 1
FLAG_REJECT = 0x01
FLAG_SNAPSHOT = 0x02

HEADER_STRUCT = struct.Struct(
    ">"
    "B"  # version
    "B"  # message type
    "B"  # flags: reject, has snapshot
    "Q"  # to
    "Q"  # sender
    "Q"  # term
    "Q"  # log_term
    "Q"  # index
    "Q"  # commit
    "Q"  # reject_hint
    "I"  # entry count
    "I"  # context length
)
HEADER_SIZE = HEADER_STRUCT.size
assert HEADER_SIZE == 67

ENTRY_STRUCT = struct.Struct(
    ">"
    "Q"  # index
    "Q"  # term
    "I"  # data length
)
ENTRY_SIZE = ENTRY_STRUCT.size
assert ENTRY_SIZE == 20

_TYPES = {int(t): t for t in MessageType}


class MessageDecodeError(ValueError):
    """Peer bytes that are not a valid message; ``offset`` says where decoding failed."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(f"{reason} at offset {offset}")
        self.reason = reason
        self.offset = offset


def encode_message(message: Message) -> bytes:
    flags = (FLAG_REJECT if message.reject else 0) | (FLAG_SNAPSHOT if message.snapshot else 0)
    parts = [
        HEADER_STRUCT.pack(
            VERSION,
            message.type,
            flags,
            message.to,
            message.sender,
            message.term,
            message.log_term,
            message.index,
            message.commit,
            message.reject_hint,
            len(message.entries),
            len(message.context),
        )
    ]
    for entry in message.entries:
        parts += (ENTRY_STRUCT.pack(entry.index, entry.term, len(entry.data)), entry.data)
    parts.append(message.context)
    if message.snapshot is not None:
        snapshot = message.snapshot
        parts += (
            ENTRY_STRUCT.pack(snapshot.index, snapshot.term, len(snapshot.data)),
            snapshot.data,
        )
    return b"".join(parts)


def decode_message(data: bytes) -> Message:
    view = memoryview(data)
    if len(view) < HEADER_SIZE:
        raise MessageDecodeError(f"truncated header ({len(view)} bytes)", 0)
    (version, type_byte, flags, to, sender, term, log_term, index, commit, hint, count, ctx_len) = (
        HEADER_STRUCT.unpack_from(view, 0)
    )
    if version != VERSION:
        raise MessageDecodeError(f"unknown version {version}", 0)
    message_type = _TYPES.get(type_byte)
    if message_type is None:
        raise MessageDecodeError(f"unknown message type {type_byte}", 1)
    if flags & ~(FLAG_REJECT | FLAG_SNAPSHOT):
        raise MessageDecodeError(f"unknown flags {flags:#x}", 2)
    offset = HEADER_SIZE
    entries = []
    for _ in range(count):
        entry_index, entry_term, entry_data, offset = _read_record(view, offset)
        entries.append(Entry(entry_index, entry_term, entry_data))
    context, offset = _read_bytes(view, offset, ctx_len)
    snapshot = None
    if flags & FLAG_SNAPSHOT:
        snapshot_index, snapshot_term, snapshot_data, offset = _read_record(view, offset)
        snapshot = Snapshot(snapshot_index, snapshot_term, snapshot_data)
    if offset != len(view):
        raise MessageDecodeError(f"{len(view) - offset} trailing bytes", offset)
    return Message(
        message_type,
        to,
        sender,
        term,
        log_term,
        index,
        tuple(entries),
        commit,
        bool(flags & FLAG_REJECT),
        hint,
        context,
        snapshot,
    )


def _read_record(view: memoryview, offset: int) -> tuple[int, int, bytes, int]:
    if offset + ENTRY_SIZE > len(view):
        raise MessageDecodeError("truncated entry header", offset)
    index, term, length = ENTRY_STRUCT.unpack_from(view, offset)
    data, end = _read_bytes(view, offset + ENTRY_SIZE, length)
    return index, term, data, end


def _read_bytes(view: memoryview, offset: int, length: int) -> tuple[bytes, int]:
    end = offset + length
    if end > len(view):
        raise MessageDecodeError(f"{length} bytes announced, {len(view) - offset} left", offset)
    return bytes(view[offset:end]), end
