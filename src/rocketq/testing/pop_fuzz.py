"""The fuzzer's rounds for the C POP paths (``rocketq._native._pop``, pop.c, and
``rocketq._native._pop_client``, pop_client.c; issue 18).

``check_batch_ack_body``: a BATCH_ACK_MESSAGE body, written as the clients write it (short or
long names) from random BatchAcks and then edited (bytes flipped, cut, JSON pieces put in:
escapes, nulls, numbers in every form, duplicate and unknown keys, bad base64), is read by
``batch_ack_body``; what it returns must be what ``decode_batch_ack_body`` (the reference)
returns, and None is allowed only where the body is not in the plain form the C reader
takes (an unedited body is: C must read it). ``check_pop_answer_fields``: random entries and
values, wrong types among them; the fields C builds must be the reference's, and C may
decline (None) only inputs no pop makes. Under ``make fuzz`` the sanitizers watch the reads.
"""

from __future__ import annotations

import json
import random
from typing import Any

from rocketq.broker.pop import pop_codec
from rocketq.common.extra_info import ExtraInfoError, topic_mark
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.pop_headers import (
    BatchAck,
    decode_batch_ack_body,
    encode_batch_ack_body,
)

EDGE_INTS = (0, 1, -1, 31, 32, 2**31 - 1, -(2**31), 2**62, 10**17, 10**18 - 1, 10**18)
LONG_NAMES = {
    "b": "bitSet", "c": "consumerGroup", "it": "invisibleTime", "pt": "popTime", "q": "queueId",
    "r": "retry", "rq": "reviveQueueId", "so": "startOffset", "t": "topic",
}  # fmt: skip
PIECES = (
    "{", "}", "[", "]", ",", ":", '"', "\\", "\\u0041", " ", "\n", "\t", "null", "true", "-",
    "0", "00", "1.5", "1e3", "-0", "=", "==", "+", "/", "\x00", "\xe9", '"x"', '"b":', '"c":',
    '"acks":', '"brokerName":', '"so":1', '"zz":0', '{"a":[1]}',
)  # fmt: skip
TEXTS = ("G", "T", "%RETRY%G_T", "CID_a-b.c", "", "broker-a", "é", "a b", 'q"', "\\")


def random_batch_ack(rng: random.Random) -> BatchAck:
    bits = rng.choice(
        (
            (),
            tuple(range(rng.randrange(1, 65))),
            tuple(sorted(rng.sample(range(200), rng.randrange(1, 40)))),
        )
    )
    return BatchAck(
        consumer_group=rng.choice(TEXTS),
        topic=rng.choice(TEXTS),
        retry=rng.choice(("0", "1", "2", "")),
        start_offset=rng.choice(EDGE_INTS),
        queue_id=rng.choice(EDGE_INTS),
        revive_queue_id=rng.choice(EDGE_INTS),
        pop_time=rng.choice(EDGE_INTS),
        invisible_time=rng.choice(EDGE_INTS),
        bit_set=bits,
    )


def random_body(rng: random.Random) -> bytes:
    """A body as a client writes it (``encode_batch_ack_body``), or with the long names."""
    acks = [random_batch_ack(rng) for _ in range(rng.randrange(4))]
    broker = rng.choice(TEXTS)
    if rng.random() < 0.7:
        return encode_batch_ack_body(broker, acks)
    items: list[dict[str, Any]] = []
    for ack in acks:
        item = ack.to_json()
        names = list(item)
        for short in names:
            if rng.random() < 0.5:
                item[LONG_NAMES[short]] = item.pop(short)
        for name in list(item):
            if rng.random() < 0.1:
                del item[name]  # a missing field: its default
        items.append(item)
    sep = rng.choice(((",", ":"), (", ", ": ")))
    return json.dumps({"acks": items, "brokerName": broker}, separators=sep).encode()


def _mutate(rng: random.Random, body: bytes) -> bytes:
    buf = bytearray(body)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(buf) + 1)
        choice = rng.randrange(4)
        if choice == 0 and buf:
            buf[min(at, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif choice == 1:
            del buf[at:]
        elif choice == 2:
            buf[at:at] = rng.choice(PIECES).encode("utf-8", "surrogatepass")
        elif buf:
            del buf[at : at + rng.randrange(1, 4)]
    return bytes(buf)


def _reference(body: bytes) -> object:
    try:
        return decode_batch_ack_body(body)
    except (RemotingCommandError, ValueError, OverflowError) as exc:  # 1e999: a float's inf
        return type(exc)


def check_batch_ack_body(rng: random.Random) -> str | None:
    compiled = pop_codec.COMPILED
    assert compiled is not None
    body = random_body(rng)
    plain = all(32 <= c < 127 and c != 0x5C for c in body)  # as written, ASCII and no escape
    if rng.random() < 0.6:
        body, plain = _mutate(rng, body), False
    got = compiled.batch_ack_body(body, BatchAck)
    expected = _reference(body)
    if got is None:
        if plain:
            return f"batch_ack_body({body!r}) declined a plain body"
        return None
    if got != expected:
        return f"batch_ack_body({body!r}): {got!r:.400}, expected {expected!r:.400}"
    return None


def random_entries(rng: random.Random) -> list[Any]:
    entries: list[Any] = []
    for _ in range(rng.randrange(1, 4)):
        offsets: Any = [rng.choice(EDGE_INTS) for _ in range(rng.randrange(0, 40))]
        entry: Any = (rng.choice(TEXTS), rng.choice(EDGE_INTS), rng.choice(EDGE_INTS), offsets)
        if rng.random() < 0.05:
            entry = (entry[0], str(entry[1]), entry[2], offsets)  # a wrong type
        elif rng.random() < 0.05:
            entry = (entry[0], entry[1], 2**64, offsets)  # past 64 bits
        elif rng.random() < 0.05:
            entry = (entry[0], entry[1], entry[2], (*offsets,))  # not a list
        entries.append(entry)
    return entries


def check_pop_answer_fields(rng: random.Random) -> str | None:
    compiled = pop_codec.COMPILED
    assert compiled is not None
    entries = random_entries(rng)
    a, b, c, d = values = [rng.choice(EDGE_INTS) for _ in range(4)]
    order = rng.choice((None, "", "0 1 0;1 2 3", "é"))
    marked = [(topic_mark(e[0]), *e[1:]) for e in entries]
    got = compiled.pop_answer_fields(a, b, c, d, marked, order)
    try:
        expected: object = pop_codec.pop_answer_fields_reference(a, b, c, d, entries, order)
    except (TypeError, ValueError) as exc:
        expected = type(exc)
    plain = all(
        type(e[1]) is int and type(e[2]) is int and type(e[3]) is list and e[2] < 2**63
        for e in entries
    )
    if got is None:
        return None if not plain else f"pop_answer_fields({values}, {entries}) declined"
    if got != expected:
        return f"pop_answer_fields({values}, {entries}, {order!r}): {got!r}, expected {expected!r}"
    return None


HANDLE_PIECES = (" ", "  ", "-", "+", "0", "9", "\t", "\n", "x", "é", "_", "3", "1 2")


def random_handles(rng: random.Random) -> list[str]:
    """The handles of a few pops (the testing client's ``POP_CK`` strings): checkpoints of
    contiguous or sparse offsets, interleaved, marks 0 to 2, offsets near the 64-bit edges."""
    handles: list[str] = []
    for _ in range(rng.randrange(0, 4)):
        ck = rng.choice((0, 100, 2**62, 2**63 - 64))
        prefix = (
            f"{ck} {rng.choice(EDGE_INTS)} {rng.choice(EDGE_INTS)} {rng.randrange(8)} "
            f"{rng.choice('012')} {rng.choice(('broker-a', '', 'b'))} {rng.choice(EDGE_INTS)} "
        )
        diffs = rng.choice(
            (range(rng.randrange(1, 33)), rng.sample(range(64), rng.randrange(1, 9)))
        )
        handles += [f"{prefix}{ck + d}" for d in diffs]
    if rng.random() < 0.2:
        rng.shuffle(handles)
    return handles


def _mutate_handle(rng: random.Random, handle: str) -> str:
    at = rng.randrange(len(handle) + 1)
    if rng.random() < 0.5:
        return handle[:at] + rng.choice(HANDLE_PIECES) + handle[at:]
    return handle[:at] + handle[at + rng.randrange(1, 3) :]


def _handles_reference(broker: str, group: str, topic: str, handles: list[str]) -> object:
    from rocketq.testing.pop import batch_ack_body_reference

    try:
        return batch_ack_body_reference(broker, group, topic, handles)
    except (ExtraInfoError, ValueError, OverflowError) as exc:  # 1 << 10**20
        return type(exc)


def check_batch_ack_handles(rng: random.Random) -> str | None:
    """``_pop_client.batch_ack_body`` of random handles (some edited) against the reference;
    None is allowed only where a handle was edited or a name is not plain."""
    from rocketq.testing import pop

    compiled = pop.COMPILED_CLIENT
    assert compiled is not None
    handles = random_handles(rng)
    plain = True
    if handles and rng.random() < 0.5:
        i = rng.randrange(len(handles))
        handles[i], plain = _mutate_handle(rng, handles[i]), False
    broker, group, topic = (rng.choice(TEXTS) for _ in range(3))
    plain = plain and all(n.isascii() and n.isprintable() and '"' not in n and "\\" not in n
                          for n in (broker, group, topic))  # fmt: skip
    got = compiled.batch_ack_body(broker, group, topic, handles)
    if got is None:
        return f"batch_ack_body of plain handles {handles!r:.400} declined" if plain else None
    expected = _handles_reference(broker, group, topic, handles)
    if got != expected:
        return f"batch_ack_body({handles!r:.400}): {got!r:.400}, expected {expected!r:.400}"
    return None
