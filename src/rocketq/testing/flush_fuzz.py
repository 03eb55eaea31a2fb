"""The fuzz round of ``send_answer_flush`` (``rocketq._native._remoting``, send_flush.c; issue
22): a flush's sends with random statuses, topics, requests, connections and reply values must
give what ``answer_flush_reference`` gives (``frame_fuzz`` runs it)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from rocketq.remoting import native_frames
from rocketq.remoting.protocol.command import RPC_ONEWAY
from rocketq.testing.reply_fuzz import REPLY_INTS, REPLY_PREFIXES, reply_heads_reference

_JSON = object()  # the JSON serialize type of a round
_OTHER = object()


class FuzzRequest:
    """What ``send_answer_flush`` reads of a request."""

    __slots__ = ("flag", "opaque", "serialize_type")

    def __init__(self, opaque: object, flag: object, serialize_type: object) -> None:
        self.opaque = opaque
        self.flag = flag
        self.serialize_type = serialize_type


class FuzzDeferred:
    """What ``send_answer_flush`` reads of a ``DeferredReply``."""

    __slots__ = ("channel", "request", "started")

    def __init__(self, channel: object, request: FuzzRequest, started: object) -> None:
        self.channel = channel
        self.request = request
        self.started = started


def _int_in(v: object, bits: int, low: int | None = None) -> bool:
    lo = -(1 << bits) if low is None else low
    return isinstance(v, int) and lo <= v < 1 << bits


def answer_flush_reference(
    pieces: tuple[bytes, ...],
    prefix: object,
    deferreds: list[FuzzDeferred],
    puts: list[object],
    values: list[object],
    indexes: Sequence[object],
    skip: AbstractSet[object],
    json: object,
    now: float,
) -> tuple[object, ...] | None:
    """What ``send_answer_flush`` must give (its docstring in send_flush.c), or None."""
    if reply_heads_reference(pieces, [], prefix) is None:  # a bad prefix or piece
        return None
    alone: list[object] = []
    channels: list[object] = []
    runs: dict[object, list[tuple[object, ...]]] = {}
    for index in indexes:
        if type(index) is not int or not 0 <= index < min(len(deferreds), len(puts)):
            return None
        if index >= len(values) // 4:
            return None
        put, k = puts[index], 4 * index
        if not isinstance(put, tuple) or len(put) < 2 or type(values[k]) is not int:
            return None
        if values[k] or put[0] in skip:
            alone.append(index)
            continue
        deferred = deferreds[index]
        request = deferred.request
        if not _int_in(request.flag, 63):
            return None
        if request.serialize_type is not json or request.flag & RPC_ONEWAY:  # type: ignore[operator]
            alone.append(index)
            continue
        offset, queue_offset = values[k + 1], values[k + 3]
        if not (
            _int_in(request.opaque, 31)
            and _int_in(offset, 63, 0)
            and _int_in(put[1], 31)
            and _int_in(queue_offset, 63)
            and type(deferred.started) is float
        ):
            return None
        if deferred.channel not in runs:
            runs[deferred.channel] = []
            channels.append(deferred.channel)
        item = (request.opaque, int(offset), put[1], queue_offset)  # type: ignore[call-overload]
        runs[deferred.channel].append(
            (item, request, now - deferred.started, put[0], values[k + 2])
        )
    frames: list[bytes | None] = []
    requests: list[object] = []
    elapsed: list[float] = []
    sizes: dict[object, list[object]] = {}
    for channel in channels:
        run = runs[channel]
        frames.append(reply_heads_reference(pieces, [a[0] for a in run], prefix))
        for answer in run:
            requests.append(answer[1])
            elapsed.append(answer[2])  # type: ignore[arg-type]
            sizes.setdefault(answer[3], []).append(answer[4])
    if None in frames:
        return None
    counts = [len(runs[channel]) for channel in channels]
    return (alone, channels, frames, counts, requests, elapsed, sizes)


FLUSH_TOPICS = ("TopicA", "TopicB", "SCHEDULE_TOPIC_XXXX", "\xe9t\u4e2d")


def check_answer_flush(rng: random.Random) -> str | None:
    """``send_answer_flush`` against its reference on a random flush."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    sizes = (0, 1, 7, 4096, 4097)
    pieces = tuple(
        bytes(rng.randrange(256) for _ in range(rng.choice(sizes) if rng.random() < 0.2 else 9))
        for _ in range(5)
    )
    prefix = rng.choice(REPLY_PREFIXES) if rng.random() < 0.2 else b"7F00000100002A9F"
    channels = [object() for _ in range(rng.randrange(1, 5))]
    n = rng.randrange(8)

    def an_int(bits: int) -> object:
        if rng.random() < 0.02:
            return rng.choice((*REPLY_INTS, -(1 << 63) - 1, 1 << 63, True, "1", 1.0))
        return rng.randrange(1 << bits)

    deferreds: list[FuzzDeferred] = []
    puts: list[object] = []
    values: list[object] = []
    for _ in range(n):
        flag = rng.choice((0, RPC_ONEWAY, 1, 3, 1 << 40, 1 << 64, "0")) if rng.random() < 0.2 else 0
        serialize = _JSON if rng.random() < 0.9 else _OTHER
        request = FuzzRequest(an_int(31), flag, serialize)
        started = 0.5 if rng.random() < 0.99 else rng.choice((1, None))
        deferreds.append(FuzzDeferred(rng.choice(channels), request, started))
        put: object = (rng.choice(FLUSH_TOPICS), an_int(31), b"body")
        if rng.random() < 0.01:
            put = rng.choice(((), ("TopicA",), ["TopicA", 0]))
        puts.append(put)
        status: object = 0 if rng.random() < 0.85 else rng.choice((1, 2, 5, 1, True, None))
        values += [status, an_int(62), rng.randrange(1, 5000), an_int(62)]
    indexes: Sequence[object] = range(n)
    if rng.random() < 0.3:
        some: list[object] = list(rng.sample(range(n), rng.randrange(n + 1)))
        if rng.random() < 0.2:
            some.append(rng.choice((n, -1, "0", 1 << 70)))
        indexes = some
    skip = frozenset(("SCHEDULE_TOPIC_XXXX",))
    args = (pieces, prefix, deferreds, puts, values, indexes, skip, _JSON, 1.25)
    expected = answer_flush_reference(*args)
    got = compiled.send_answer_flush(*args)  # type: ignore[arg-type]
    if got != expected:
        shown = f"send_answer_flush(..., {values!r}, {list(indexes)!r})"
        return f"{shown}: {got!r:.600}, expected {expected!r:.600}"
    return None
