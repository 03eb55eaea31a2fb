"""Fuzz of BrokerStatsManager's put figures in one C call (``rocketq._native._stats``'
``count_puts``, ``count_flush``): random flushes' sizes by topic (new and known topics, edge
and odd sizes, topics deleted between flushes, message types without a pair yet) and
latencies (edge and odd ones) on the C and the Python path must leave the same figures
(``frame_fuzz`` runs it)."""

from __future__ import annotations

import math
import random
from typing import Any

from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.remoting import native_frames

_SIZES = (0, 1, 1023, 1024, 1025, 4096, 512 * 1024, 4 << 20, (4 << 20) + 1, 1 << 52, -3)
_ODD = (1 << 53, -(1 << 60), 1 << 70, True, 1.5, "x", None)
_LATENCIES_S = (0.0, -0.0, 1e-9, 0.0009999, 0.001, 0.00999, 0.01, 0.05, 2.0, 10.0, 1e6, -1.0)
_ODD_S = (math.inf, -math.inf, math.nan, 1e300, 3, True, "x")


def _flushes(rng: random.Random) -> list[tuple[str, Any]]:
    topics = [f"T{i}" for i in range(rng.randrange(1, 5))]
    steps: list[tuple[str, Any]] = []
    for _ in range(rng.randrange(1, 12)):
        kind = rng.random()
        if kind < 0.1:
            steps.append(("delete", rng.choice(topics)))
            continue
        by_topic: dict[str, list[Any]] = {}
        for topic in rng.sample(topics, rng.randrange(1, len(topics) + 1)):
            sizes: list[Any] = [
                rng.choice(_SIZES) if rng.random() < 0.5 else rng.randrange(1 << 24)
                for _ in range(rng.randrange(6))
            ]
            if rng.random() < 0.05:
                sizes.insert(rng.randrange(len(sizes) + 1), rng.choice(_ODD))
            by_topic[topic] = sizes
        elapsed_s: list[Any] | None = None
        if rng.random() < 0.5:  # the flush's latencies too (count_flush)
            elapsed_s = [
                rng.choice(_LATENCIES_S) if rng.random() < 0.5 else rng.uniform(-1, 20)
                for _ in range(rng.randrange(6))
            ]
            if rng.random() < 0.05:
                elapsed_s.insert(rng.randrange(len(elapsed_s) + 1), rng.choice(_ODD_S))
        message_type = rng.choice(("Normal", "Normal", "Delay"))
        steps.append(("puts", (by_topic, message_type, elapsed_s)))
    return steps


def _play(native: bool, steps: list[tuple[str, Any]]) -> object:
    native_frames.use(native)
    stats = BrokerStatsManager("C", clock_ms=lambda: 0)
    outcome: list[object] = []
    for kind, arg in steps:
        if kind == "delete":
            stats.on_topic_deleted(arg)
            continue
        by_topic, message_type, elapsed_s = arg
        copy = {t: list(s) for t, s in by_topic.items()}
        try:
            if elapsed_s is None:
                stats.record_puts_by_topic(copy, message_type)
            else:
                stats.record_flush(list(elapsed_s), copy, message_type)
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 -- the same error both ways is the check
            outcome.append(type(exc))
    items = {
        name: {item.stats_key: (item.value, item.times) for item in stats_set.items()}
        for name, stats_set in stats.sets.items()
    }
    return (
        outcome,
        items,
        stats.put_message_times_total,
        stats.put_message_size_total,
        stats.put_latency_counts,
        stats.put_message_entire_time_max_ms,
        stats.put_by_type,
        stats.message_sizes,
    )


def check_count_puts(rng: random.Random) -> str | None:
    was = native_frames.FRAMES is not None
    steps = _flushes(rng)
    try:
        native, python = _play(True, steps), _play(False, steps)
    finally:
        native_frames.use(was)
    if native != python:
        return f"count_puts {native!r}\nthe Python reference {python!r}\n{steps!r}"
    return None
