"""The fuzzer's round for the C batch read (``batch_puts``, send_batch.c, issue 22).

``check_batch_puts``: a MessageBatch body (``encode_batch_messages`` of random messages:
bodies of edge sizes, random properties with non-ASCII text, WAIT, refused names, empty and
duplicate names put in raw) is edited (bytes flipped, cut, TOTALSIZE / BODYLENGTH /
PROPERTIESLENGTH set to edge values, bad UTF-8) and read by ``batch_puts``. What it returns
must be what the Python path makes of the body (``decode_batch_messages``, the checks and
the record properties of ``BatchSender.send_batch``), and None is allowed only where the
Python path refuses the body or the body is not in the plain form C takes (an unedited body
of plain properties is: C must read it). Under ``make fuzz`` the sanitizers watch the reads.
"""

from __future__ import annotations

import random
import struct

from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message import Message
from rocketq.common.message_decoder import decode_batch_messages, encode_batch_messages
from rocketq.common.properties import encode_properties
from rocketq.errors import DecodeError
from rocketq.store.commitlog_send import SendPut
from rocketq.store.timer.timer_hook import TIMER_PROPERTIES

MAX_BODY = 512
CLUSTER = "DefaultCluster"
REFUSED = (
    mc.PROPERTY_DELAY_TIME_LEVEL,
    mc.PROPERTY_TRANSACTION_PREPARED,
    mc.PROPERTY_CLUSTER,
    *TIMER_PROPERTIES,
)
RULES = (
    tuple(name.encode() for name in REFUSED),
    mc.PROPERTY_WAIT_STORE_MSG_OK.encode(),
    encode_properties({mc.PROPERTY_CLUSTER: CLUSTER}),
    MAX_BODY,
)
HEAD = ("T", 3, 0, 1_700_000_000_000, bytes(8), bytes(20), 0, True)
NAMES = (
    mc.PROPERTY_KEYS,
    mc.PROPERTY_TAGS,
    mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    mc.PROPERTY_WAIT_STORE_MSG_OK,
    "a",
    "é",
    "中",
    "x" * 40,
)
VALUES = ("v", "true", "false", "0", "é文", "y" * 300)
EDGE_INT32 = (0, 1, -1, 20, 21, 22, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000)


def random_batch(rng: random.Random) -> tuple[bytes, bool]:
    """A batch body and whether C must take it (plain properties, nothing refused)."""
    msgs: list[Message] = []
    plain = True
    for _ in range(rng.randrange(1, 6)):
        m = Message("T", bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 7, MAX_BODY)))))
        m.flag = rng.choice(EDGE_INT32)
        for _ in range(rng.randrange(0, 4)):
            name = rng.choice(REFUSED if rng.random() < 0.05 else NAMES)
            if name in REFUSED:
                plain = False
            m.properties[name] = rng.choice(VALUES)
        msgs.append(m)
    body = encode_batch_messages(msgs)
    if rng.random() < 0.2:  # raw properties only a hand could write: C declines, or agrees
        plain = False
        raw = rng.choice((b"\x02", b"a\x01\x02", b"\x01v\x02", b"a\x01v", b"a\x01v\x02a\x01w\x02"))
        one = struct.pack(">iiiii", 22 + len(raw), 0, 0, 0, 0) + struct.pack(">h", len(raw)) + raw
        body += one
    return body, plain


def mutate(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    if not data:
        return bytes(data)
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        del data[rng.randrange(len(data)) :]
    elif kind == 2 and len(data) >= 22:
        where = rng.choice((0, 16))
        struct.pack_into(">i", data, where, rng.choice(EDGE_INT32))
    else:
        data[rng.randrange(len(data))] = rng.choice((0x80, 0xC3, 0xE4, 0xFF, 0x01, 0x02))
    return bytes(data)


def reference(body: bytes) -> list[tuple[bytes, bytes, int]] | None:
    """What the Python path stores of the body, per message (body, properties, flag); None
    where it refuses the batch."""
    try:
        msgs = decode_batch_messages(body)
    except (DecodeError, ValueError):
        return None
    if not msgs:
        return None
    out = []
    for m in msgs:
        props = dict(m.properties)
        if len(m.body) > MAX_BODY or any(name in props for name in REFUSED):
            return None
        props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
        props[mc.PROPERTY_CLUSTER] = CLUSTER
        record_props = encode_properties(props)
        if len(record_props) > 32767:
            return None
        out.append((m.body, record_props, m.flag))
    return out


def check_batch_puts(rng: random.Random) -> str | None:
    """One round: a difference between C and the reference, or None."""
    compiled = native_record.COMPILED
    if compiled is None:
        return None
    body, plain = random_batch(rng)
    edited = rng.random() < 0.7
    if edited:
        body = mutate(rng, body)
    puts = compiled.batch_puts(body, HEAD, RULES, SendPut)
    expected = reference(body)
    if puts is None:
        if expected is not None and plain and not edited:
            return f"batch_puts declined a plain batch: {body!r}"
        return None
    got = [(p.body, p.properties, p.flag) for p in puts]
    if got != expected:
        return f"batch_puts {got!r} != reference {expected!r} for {body!r}"
    if any(tuple(p[i] for i in (0, 1, 5, 6, 7, 8, 9, 10)) != HEAD for p in puts):
        return f"batch_puts put the wrong shared fields: {puts!r}"
    return None
