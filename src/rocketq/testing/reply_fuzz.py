"""The fuzz round of ``send_reply_heads`` (``rocketq._native._remoting``, send_reply.c; issue 22):
random pieces and reply values, with and without the store's msgId prefix, must give what
``reply_heads_reference`` gives; ``send_reply_runs`` (a flush's runs in one call) must give the
reference of each run, or None when the runs do not cover the items or one run is None
(``frame_fuzz`` runs both)."""

from __future__ import annotations

import random

from rocketq.remoting import native_frames
from rocketq.remoting.codec import FRAME_PREFIX_STRUCT


def random_text(rng: random.Random, size: int) -> str:
    """Up to ``size`` characters: ASCII, JSON's specials, controls and non-ASCII."""
    alphabet = 'abcXYZ019 _-."\\/\x00\x01\x02\x1f\x7f\xe9\u4e2d\U0001f600'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(size + 1)))


REPLY_INTS = (0, 1, -1, 9, 0x7FFFFFFF, -0x80000000, 1 << 31, -(1 << 31) - 1, (1 << 63) - 1)
REPLY_INTS_MORE = (-(1 << 63), 1 << 63, -(1 << 63) - 1, 1 << 64, True)
REPLY_IDS = ("7F000001000027100000000000000000", "a", "Z" * 64, "Z" * 65, "", "A,B", 'A"', "\xe9")


def reply_heads_reference(
    pieces: tuple[bytes, ...], items: list[object], prefix: object = None
) -> bytes | None:
    """What ``send_reply_heads`` must give: each item's JSON head between the pieces, or None
    for the whole list when a value is outside what it writes. With ``prefix`` (the store's
    msgId prefix) an item's msgId may be a commitlog offset: the prefix and 16 hex digits."""
    if prefix is not None and not (
        isinstance(prefix, bytes) and len(prefix) <= 48 and (not prefix or prefix.isalnum())
    ):
        return None
    if any(len(p) > 4096 for p in pieces):
        return None
    out: list[bytes] = []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 4:
            return None
        opaque, msg_id, queue_id, queue_offset = item
        ints = ((opaque, 31), (queue_id, 31), (queue_offset, 63))
        if any(not isinstance(v, int) or not -(1 << b) <= v < 1 << b for v, b in ints):
            return None
        if type(msg_id) is int and isinstance(prefix, bytes) and 0 <= msg_id < 1 << 63:
            msg_id = prefix.decode() + f"{msg_id:016X}"
        if not isinstance(msg_id, str) or not 1 <= len(msg_id) <= 64:
            return None
        if not (msg_id.isascii() and msg_id.isalnum()):
            return None
        values = (msg_id, *(str(int(v)) for v in (queue_id, queue_offset, opaque)))  # True: 1
        header = pieces[0] + b"".join(
            v.encode() + p for v, p in zip(values, pieces[1:], strict=True)
        )
        out.append(FRAME_PREFIX_STRUCT.pack(len(header) + 4, len(header)) + header)
    return b"".join(out)


REPLY_PREFIXES = (b"", b"7F00000100002A9F", b"A" * 48, b"A" * 49, b"7F-0", b"\xe9", "7F")


def check_send_replies(rng: random.Random) -> str | None:
    """``send_reply_heads`` against its reference on random pieces and values, with and
    without a msgId prefix (the msgIds then offsets, some of them)."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    sizes = (0, 1, 7, 4096, 4097)
    pieces = tuple(bytes(rng.randrange(256) for _ in range(rng.choice(sizes))) for _ in range(5))
    ints = REPLY_INTS + (REPLY_INTS_MORE if rng.random() < 0.1 else ())
    prefix = rng.choice(REPLY_PREFIXES) if rng.random() < 0.5 else None
    items: list[object] = []
    for _ in range(rng.randrange(6)):
        msg_id: object
        if prefix is not None and rng.random() < 0.6:  # an offset (or a value near one)
            msg_id = rng.choice(ints) if rng.random() < 0.3 else rng.randrange(1 << 63)
        else:
            msg_id = rng.choice(REPLY_IDS) if rng.random() < 0.5 else random_text(rng, 70)
        item: object = (
            rng.choice(ints) if rng.random() < 0.7 else rng.randrange(-(1 << 31), 1 << 31),
            msg_id,
            rng.choice(ints),
            rng.choice(ints) if rng.random() < 0.5 else rng.randrange(1 << 62),
        )
        if rng.random() < 0.03:
            item = item[:3] if isinstance(item, tuple) else item  # a short tuple
        elif rng.random() < 0.03:
            item = [0, "A", 0, 0]  # not a tuple
        items.append(item)
    args: tuple[object, ...] = (pieces, items) if prefix is None else (pieces, items, prefix)
    got = compiled.send_reply_heads(*args)  # type: ignore[arg-type]
    expected = reply_heads_reference(pieces, items, prefix)
    short = [p[:40] for p in pieces]
    if got != expected:
        return (
            f"send_reply_heads({short!r}..., {items!r}, {prefix!r}): {got!r:.300}, "
            f"expected {expected!r:.300}"
        )
    if prefix is None:
        return None
    ends = sorted(rng.randrange(len(items) + 1) for _ in range(rng.randrange(4)))
    ends.append(len(items))
    if rng.random() < 0.1:  # runs that do not cover the items
        ends = ends[:-1] if rng.random() < 0.5 else [*ends, len(items) + 1]
    got_runs = compiled.send_reply_runs(pieces, items, prefix, ends)  # type: ignore[arg-type]
    expected_runs = reply_runs_reference(pieces, items, prefix, ends)
    if got_runs != expected_runs:
        return (
            f"send_reply_runs({short!r}..., {items!r}, {prefix!r}, {ends!r}): "
            f"{got_runs!r:.300}, expected {expected_runs!r:.300}"
        )
    return None


def reply_runs_reference(
    pieces: tuple[bytes, ...], items: list[object], prefix: object, ends: list[int]
) -> list[bytes] | None:
    """What ``send_reply_runs`` must give: ``reply_heads_reference`` of each run the
    increasing ``ends`` mark (from 0 to the last item), or None."""
    if reply_heads_reference(pieces, [], prefix) is None:  # a bad prefix or piece
        return None
    if items and (not ends or ends[-1] != len(items)):
        return None
    out: list[bytes] = []
    start = 0
    for end in ends:
        if not start <= end <= len(items):
            return None
        heads = reply_heads_reference(pieces, items[start:end], prefix)
        if heads is None:
            return None
        out.append(heads)
        start = end
    return out
