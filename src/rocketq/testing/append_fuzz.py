"""The fuzzer's rounds for the C send path: ``append_sends`` (``rocketq._native._record``,
append.c), the encode and append of pass-through sends, whose topic, body and properties
come from the network, and ``send_put_of`` (``rocketq._native._remoting``, send_put.c), a
SEND_MESSAGE_V2's put read from its extFields (``check_send_put``: random and malformed
fields; a put C gives must be the one the Python path's header reader and pass-through give).

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

from rocketq.broker.send_properties import native_rules, pass_through
from rocketq.common import message_const as mc
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
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX
from rocketq.remoting import native_frames
from rocketq.remoting.protocol.headers import SendMessageRequestHeaderV2
from rocketq.store.commitlog import OFFSETS_STRUCT
from rocketq.store.commitlog_send import SendPut
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


# ---------------------------------------------------------------- send_put_of (send_put.c)

NUMBER_FORMS = ("0", "-0", "00", "07", "+7", " 7", "7 ", "1e3", "1.0", "2147483647",
                "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
                "9223372036854775808", "-9223372036854775808", "-", "", "x", "\u0661")  # fmt: skip
PROPERTY_PIECES = ("TAGS\x01t\x02", "KEYS\x01k\x02", "WAIT\x01true\x02", "WAIT\x01false\x02",
                   "WAIT\x01false", "XWAIT\x01false\x02", "DELAY\x012\x02", "CLUSTER\x01c\x02",
                   "TIMER_DELAY_SEC\x015\x02", "TRAN_MSG\x01true\x02", "\x02", "\x01",
                   mc.PROPERTY_WAIT_STORE_MSG_OK, "\x01false\x02", "\u4e2d", "\ud800",
                   "UNIQ_KEY\x01ABC\x02")  # fmt: skip
RULES = native_rules("DefaultCluster", RETRY_GROUP_TOPIC_PREFIX, 4096)
BORN, STORE = host_to_bytes(("127.0.0.1", 1)), host_to_bytes(("::1", 2))


def random_fields(rng: random.Random) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "a": "PG", "b": rng.choice(("T", "%RETRY%g", "\u4e2d")), "c": "TBW102", "d": "4",
        "e": str(rng.randrange(8)), "f": str(rng.choice((0, 0, 4, 8, 12, 1))),
        "g": str(rng.randrange(1 << 41)), "h": str(rng.randrange(4)),
    }  # fmt: skip
    if rng.random() < 0.9:
        pieces = [rng.choice(PROPERTY_PIECES) for _ in range(rng.randrange(5))]
        fields["i"] = "".join(pieces)
    for key in ("j", "l"):
        if rng.random() < 0.5:
            fields[key] = str(rng.randrange(20))
    for key in ("k", "m"):
        if rng.random() < 0.3:
            fields[key] = rng.choice(("true", "false", "TRUE", "1", ""))
    for _ in range(rng.randrange(3) if rng.random() < 0.3 else 0):
        key = rng.choice("abcdefghijklmn")
        fields[key] = rng.choice((*NUMBER_FORMS, None, 7, b"7"))
    if rng.random() < 0.05:
        fields.pop(rng.choice("abcdefgh"), None)
    return fields


def send_put_reference(fields: dict[str, Any], body: bytes) -> SendPut | None:
    """What ``send_put_of`` must give when it gives a put: the Python path's reading."""
    try:
        h = SendMessageRequestHeaderV2.decode_as_v1(fields)
    except Exception:  # noqa: BLE001 -- a refusal: C must have declined it too
        return None
    topic: object = h.topic  # the header takes what the extFields hold
    text: object = h.properties or ""
    if not isinstance(topic, str) or not isinstance(text, str):
        return None
    if h.batch or h.queue_id < 0 or len(body) > RULES[4]:
        return None
    try:
        raw = text.encode()
    except UnicodeEncodeError:
        return None
    if len(raw) > 32767 or topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return None
    if MessageSysFlag.get_transaction_value(h.sys_flag) != MessageSysFlag.TRANSACTION_NOT_TYPE:
        return None
    passed = pass_through(text, "DefaultCluster")
    if passed is None:
        return None
    props, wait = passed
    return SendPut(h.topic, h.queue_id, body, props, h.flag, h.sys_flag, h.born_timestamp,
                   BORN, STORE, h.reconsume_times or 0, wait)  # fmt: skip


def check_send_put(rng: random.Random) -> str | None:
    """``send_put_of`` on random V2 extFields: a put it gives must be the Python path's."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    fields = random_fields(rng)
    body = rng.randbytes(rng.choice((0, 10, 4096, 4097)))
    got = compiled.send_put_of(fields, body, RULES, SendPut, BORN, STORE)
    if got is None:
        return None
    was = native_frames.FRAMES is not None
    native_frames.use(False)
    try:
        expected = send_put_reference(fields, body)
    finally:
        native_frames.use(was)
    if type(got) is not SendPut or got != expected:
        return f"send_put_of({fields!r}) gave {got!r:.300}, the Python path {expected!r:.300}"
    return None
