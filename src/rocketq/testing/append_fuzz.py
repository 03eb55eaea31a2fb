"""The fuzzer's round for ``append_sends`` (``rocketq._native._record``, append.c): the C
encode and append of pass-through sends, whose topic, body and properties come from the
network.

Each round makes a few ``SendPut``s with random and edge values (ints past their fields,
properties past 32,767 bytes, long and non-ASCII topics, IPv6 and bad hosts, wrong types),
appends them with ``append_sends`` into a buffer of random size from a random position, and
checks every outcome against the Python path, the reference: a put C appended must be, byte
for byte, ``message_decoder.encode_message`` of the same message (C off) with its queue
offset, physical offset and store time patched in, at consecutive positions; a put C
refused must be one the Python encoder refuses too (or a value no SendPut holds); the walk
stops only before a put that does not fit; nothing past the last record is written. Under
``make fuzz`` the sanitizers watch the reads and writes.
"""

from __future__ import annotations

import random
import struct
from array import array
from typing import Any

from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import encode_message
from rocketq.common.message_id import host_to_bytes
from rocketq.common.record_layout import (
    QUEUE_OFFSET_POSITION,
    STORE_TIMESTAMP_STRUCT,
    SYSFLAG_POSITION,
    store_timestamp_position,
)
from rocketq.store.commitlog import OFFSETS_STRUCT, SendPut
from rocketq.store.message_writer import message_of

INTS = (0, 1, -1, 7, 0x7FFFFFFF, -0x80000000, 1 << 31, -(1 << 31) - 1, (1 << 63) - 1, 1 << 64)
HOSTS: tuple[object, ...] = (
    host_to_bytes(("127.0.0.1", 1)),
    host_to_bytes(("::1", 2)),
    host_to_bytes(("10.1.2.3", 65535)),
    b"",
    b"x" * 9,
    "127.0.0.1:1",
)
TOPICS: tuple[object, ...] = ("T", "t" * 127, "t" * 128, "\u4e2d\u6587", "", "\ud800", 7)
NOW = 1_700_000_000_123
_SYSFLAG = struct.Struct(">i")


def _value(rng: random.Random, choices: tuple[object, ...], good: object) -> object:
    return rng.choice(choices) if rng.random() < 0.15 else good


def random_send(rng: random.Random) -> Any:
    if rng.random() < 0.02:
        return ("T", 0)  # not a SendPut
    props = rng.randbytes(rng.choice((0, 3, 40, 32_767, 32_768)))
    return SendPut(
        _value(rng, TOPICS, f"Topic{rng.randrange(3)}"),  # type: ignore[arg-type]
        _value(rng, INTS, rng.randrange(4)),  # type: ignore[arg-type]
        _value(rng, (b"", "str", None), rng.randbytes(rng.choice((0, 1, 300, 5000)))),  # type: ignore[arg-type]
        _value(rng, (b"", None), props),  # type: ignore[arg-type]
        _value(rng, INTS, rng.randrange(-(1 << 31), 1 << 31)),  # type: ignore[arg-type]
        _value(rng, INTS, rng.choice((0, 4, 8, 12, 0x10, 0x20, 0x7F))),  # type: ignore[arg-type]
        _value(rng, INTS, rng.randrange(1 << 62)),  # type: ignore[arg-type]
        _value(rng, HOSTS, HOSTS[0]),  # type: ignore[arg-type]
        _value(rng, HOSTS, HOSTS[1]),  # type: ignore[arg-type]
        _value(rng, INTS, rng.randrange(20)),  # type: ignore[arg-type]
        True,
    )


def reference_record(put: Any) -> bytes | None:
    """The record the Python path writes for ``put`` (offsets and time still to patch), or
    None when it refuses the put (or the put is no SendPut of the right types)."""
    if not isinstance(put, SendPut):
        return None
    fields: tuple[object, ...] = tuple(put)
    topic, _, body, properties, *_ = fields
    hosts = (put.born_host, put.store_host)
    if not all(isinstance(h, bytes) and len(h) in (8, 20) for h in hosts):
        return None
    if not isinstance(topic, str) or not isinstance(body, bytes):
        return None
    if not isinstance(properties, bytes):
        return None
    was = native_record.RECORD is not None
    native_record.use(False)
    try:
        return bytes(encode_message(message_of(put), put.properties))
    except (ValueError, OverflowError, TypeError, UnicodeError, struct.error):
        return None
    finally:
        native_record.use(was)


def check_append_sends(rng: random.Random) -> str | None:
    """One round (the module's docstring): None, or what differs."""
    compiled = native_record.COMPILED
    assert compiled is not None
    puts = [random_send(rng) for _ in range(rng.randrange(1, 6))]
    size = rng.choice((0, 8, 100, 4096, 70_000))
    pos = rng.randrange(size + 1)
    dest = bytearray(size)
    slots = array("q", bytes(32 * len(puts)))
    table: dict[str, int] = {}
    max_record = rng.choice((200, 10_000, 1 << 20))
    nxt, end = compiled.append_sends(dest, pos, size, 4096, puts, 0, table, NOW, max_record, slots)
    at = pos
    model: dict[str, int] = {}  # the queue offset table as the Python path keeps it
    for k, put in enumerate(puts[:nxt]):
        expected = reference_record(put)
        status = slots[4 * k]
        if expected is not None and len(expected) > max_record:
            expected = None
        if status != 0:
            if expected is not None and len(expected) + 8 <= size:
                return f"append_sends refused {put!r:.300} (status {status}), Python encodes it"
            continue
        if expected is None:
            return f"append_sends appended {put!r:.300}, Python refuses it"
        record = bytearray(expected)
        (sys_flag,) = _SYSFLAG.unpack_from(record, SYSFLAG_POSITION)
        queue_offset = 0
        if MessageSysFlag.has_consume_queue_unit(sys_flag):
            key = f"{put.topic}-{put.queue_id}"
            queue_offset = model.get(key, 0)
            model[key] = queue_offset + 1
        OFFSETS_STRUCT.pack_into(record, QUEUE_OFFSET_POSITION, queue_offset, 4096 + at)
        STORE_TIMESTAMP_STRUCT.pack_into(record, store_timestamp_position(sys_flag), NOW)
        got = (slots[4 * k + 1], slots[4 * k + 2], slots[4 * k + 3])
        if got != (4096 + at, len(record), queue_offset) or dest[at : at + len(record)] != record:
            return f"append_sends wrote {put!r:.300} unlike Python at {at}"
        at += len(record)
    if end != at or any(dest[end:]) or any(dest[:pos]) or table != model:
        return f"append_sends ended at {end}, expected {at}, or wrote outside its records"
    if nxt < len(puts):
        expected = reference_record(puts[nxt])
        if (
            expected is None
            or len(expected) > max_record
            or len(expected) + 8 <= size - end
            or end == 0
        ):
            return f"append_sends stopped before {puts[nxt]!r:.300} at {end} of {size}"
    return None
