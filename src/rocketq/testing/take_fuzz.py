"""The take of a read's sends (``take_sends``, and with the read's split ``split_take``) and a
flush's figures (``count_figures``) in C against their Python references, for ``frame_fuzz``
(issue 22, lever 1).

``check_take_sends`` hands ``take_sends`` the items ``split_sends`` made of a fuzzed read with
a random takes table, topic table, permission and room, and compares the count, the
batcher's queues and the counters with ``take_reference`` (``SendTakes.take``'s remembered
case); ``check_split_take`` does the same for ``split_take`` against ``split_sends`` and
that reference. ``check_count_figures`` counts random values (edges, negatives, huge, not finite,
wrong types) into a real ``BrokerStatsManager`` and ``RpcLatencyStats`` with the C frames on
and off: the figures must be equal.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from typing import Any

from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.broker.config import BrokerConfig
from rocketq.broker.put_batcher import PutBatcher
from rocketq.common.topic_config import PERM_WRITE, TopicConfig
from rocketq.remoting import native_frames
from rocketq.remoting.channel import DeferredReply
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.rpc_stats import RpcLatencyStats
from rocketq.store.message_store import MessageStore
from rocketq.testing.wire import send_request


@dataclasses.dataclass
class TakeBroker:
    """What ``take_sends`` reads of the broker: its config's permission."""

    config: BrokerConfig


@dataclasses.dataclass
class TakeCounters:
    """What ``take_sends`` counts on the processor."""

    native_reads: int = 0
    split_reads: int = 0


_TOPICS = ("T", "U", "%RETRY%g")
_V2 = RequestCode.SEND_MESSAGE_V2
TAKEN: list[int] = []  # the counts taken, for the tests (the fuzzer takes some)


def _no_store() -> MessageStore:
    raise RuntimeError("the fuzzer's batcher never flushes")


def take_reference(
    items: list[Any],
    room: int,
    takes: dict[str, tuple[object, int]],
    table: dict[str, object],
    writable: bool,
) -> int:
    """How many leading items ``SendTakes.take`` takes from its remembered table."""
    if not writable:
        return 0
    taken = 0
    for item in items:
        if taken >= room or type(item) is not tuple or len(item) != 3:
            break
        put = item[1]
        if not isinstance(put, tuple) or len(put) < 2:
            break
        topic, queue_id = put[0], put[1]
        if type(topic) is not str or type(queue_id) is not int:
            break
        entry = takes.get(topic)
        if entry is None or table.get(topic) is not entry[0] or not queue_id < entry[1]:
            break
        taken += 1
    return taken


def _takes_of(
    rng: random.Random, data: bytes, spec: native_frames.SendSpec
) -> tuple[bytes, list[Any], Any, PutBatcher, TakeCounters, int, int]:
    """A fuzzed read (maybe led by sends it can take, maybe cut short), its ``split_sends``
    items, and a random taker (takes table, topic table, permission), batcher and room."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    if rng.random() < 0.7:  # sends it can take first, the fuzzed read after them or not
        good = [
            encode(send_request(rng.choice(_TOPICS), b"x", queue_id=rng.randrange(6), code=_V2))
            for _ in range(rng.randrange(1, 5))
        ]
        data = b"".join(good) + (data if rng.random() < 0.5 else b"")
    if data and rng.random() < 0.1:  # a partial frame at its end
        data = data[: rng.randrange(len(data))]
    items: list[Any] = compiled.split_sends(data, 1 << 24, spec)[0]
    topics = {item[1][0] for item in items if type(item) is tuple and len(item) == 3}
    topics |= {"", *_TOPICS}
    takes: dict[str, tuple[object, int]] = {}
    table: dict[str, object] = {}
    for topic in sorted(topics):  # a set's order moves with PYTHONHASHSEED: the draws must not
        config = TopicConfig(topic_name=topic)
        if rng.random() < 0.8:
            table[topic] = config
        if rng.random() < 0.8:
            same = rng.random() < 0.8
            takes[topic] = (
                config if same else TopicConfig(topic_name=topic),
                rng.choice((0, 1, 4, 8, 1 << 40, 1 << 40)),
            )
    permission = rng.choice((6, 6, 6, 6, 4, 2, 0))
    broker = TakeBroker(BrokerConfig(broker_permission=permission))
    batcher = PutBatcher(_no_store)
    counters = TakeCounters()
    room = rng.choice((0, 1, 2, 3, 100, 100, 100, -5))
    taker = (takes, table, broker, DeferredReply, batcher, counters, PERM_WRITE)
    expected = take_reference(items, room, takes, table, bool(permission & PERM_WRITE))
    TAKEN.append(expected)
    return data, items, taker, batcher, counters, room, expected


def _queued_wrong(
    items: list[Any], expected: int, channel: object, batcher: PutBatcher, counters: TakeCounters
) -> bool:
    """The batcher's queues and the counters are not those of the first ``expected`` items."""
    puts = [item[1] for item in items[:expected]]
    requests = [item[0] for item in items[:expected]]
    dones = batcher._dones
    return (
        batcher._puts != puts
        or len(dones) != expected
        or any(type(d) is not DeferredReply for d in dones)
        or [d.request for d in dones] != requests  # type: ignore[union-attr]
        or any(d.channel is not channel for d in dones)  # type: ignore[union-attr]
        or batcher._lane_count != expected
        or (counters.native_reads, counters.split_reads) != (expected, expected)
    )


def check_take_sends(rng: random.Random, data: bytes, spec: native_frames.SendSpec) -> str | None:
    """``take_sends`` on the items ``split_sends`` reads from ``data`` is ``take_reference``."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    data, items, taker, batcher, counters, room, expected = _takes_of(rng, data, spec)
    channel = object()  # kept in each DeferredReply, nothing more
    got = compiled.take_sends(items, channel, room, taker)
    if got != expected or _queued_wrong(items, expected, channel, batcher, counters):
        return f"take_sends took {got}, the reference {expected} (room {room}, {taker[2]})"
    return None


def _shape(item: Any) -> object:
    """An item of a split, comparable between two splits of the same bytes."""
    if type(item) is tuple:
        return ("send", item[1], item[2], _shape(item[0]))
    if isinstance(item, RemotingCommand):
        return (item.code, item.opaque, item.flag, item.ext_fields, item.body, item.remark)
    return item


def check_split_take(rng: random.Random, data: bytes, spec: native_frames.SendSpec) -> str | None:
    """``split_take`` of a fuzzed read is ``split_sends`` then ``take_reference``: the count
    when the read was whole frames all taken, else the items left, the bytes consumed, the
    reason and the count; None (nothing taken) when the broker's config is not the spec's."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    data, items, taker, batcher, counters, room, expected = _takes_of(rng, data, spec)
    _, consumed, reason = compiled.split_sends(data, 1 << 24, spec)
    channel = object()
    stale = rng.random() < 0.1
    config = BrokerConfig() if stale else taker[2].config
    got = compiled.split_take(data, 1 << 24, spec, channel, room, taker, config)
    if stale:
        if got is not None or batcher._puts or batcher._dones:
            return f"split_take with another config gave {got!r}"
        return None
    if consumed == len(data) and reason is None and len(items) == expected:
        want: object = expected
    else:
        want = ([_shape(i) for i in items[expected:]], consumed, reason, expected)
    shaped = ([_shape(i) for i in got[0]], *got[1:]) if isinstance(got, tuple) else got
    if shaped != want or _queued_wrong(items, expected, channel, batcher, counters):
        return f"split_take gave {shaped!r}, the reference {want!r} (room {room}, {taker[2]})"
    return None


_EDGES_S = (0.0, -0.0, 1e-9, 0.0009999, 0.001, 0.00999, 0.01, 0.05, 0.1, 2.0, 10.0, 1e6, -1.0)
_SIZES = (0, 1, 1023, 1024, 1025, 4096, 512 * 1024, 4 * 1024 * 1024, 1 << 40, -3)


def _values(
    rng: random.Random, edges: tuple[Any, ...], draw: Callable[[], float | int]
) -> list[Any]:
    values = [rng.choice(edges) if rng.random() < 0.5 else draw() for _ in range(rng.randrange(9))]
    if rng.random() < 0.05:  # what C leaves to the Python loop
        values.append(rng.choice((math.inf, -math.inf, 1e300, True, 1 << 70, "x")))
    return values


def _figures(native: bool, puts: list[Any], sizes: list[Any], rpc: list[Any]) -> object:
    native_frames.use(native)
    stats = BrokerStatsManager("C")
    stats.put_message_entire_time_max_ms = 3
    rpc_stats = RpcLatencyStats()
    requests = [RemotingCommand(code=RequestCode.SEND_MESSAGE_V2) for _ in rpc]
    outcome: list[object] = []
    figures: tuple[Callable[[], None], ...] = (
        lambda: stats.record_put_latencies(puts),
        lambda: stats.record_single_puts("T", sizes, "Normal"),
        lambda: rpc_stats.on_responses(requests, RemotingCommand(code=0), rpc),
    )
    for figure in figures:
        try:
            figure()
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 -- the same error both ways is the check
            outcome.append(type(exc))
    histograms = {key: (h.counts, h.sum_ms) for key, h in rpc_stats.snapshot().items()}
    return (
        outcome,
        stats.put_latency_counts,
        stats.put_message_entire_time_max_ms,
        stats.message_sizes,
        histograms,
    )


def check_count_figures(rng: random.Random) -> str | None:
    was = native_frames.FRAMES is not None
    puts = _values(rng, _EDGES_S, lambda: rng.uniform(-1, 20))
    sizes = _values(rng, _SIZES, lambda: rng.randrange(1 << 23))
    rpc = _values(rng, _EDGES_S, lambda: rng.expovariate(100))
    try:
        native, python = _figures(True, puts, sizes, rpc), _figures(False, puts, sizes, rpc)
    finally:
        native_frames.use(was)
    if native != python:
        return f"count_figures {native!r}\nthe Python loops {python!r}\n{puts, sizes, rpc}"
    return None
