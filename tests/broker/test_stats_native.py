"""BrokerStatsManager's put figures of a flush in one C call (stats.c's ``count_puts``) and
their Python reference: the same values for every reader, through the manager and through a
real broker's sends."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq._native import _stats
from rocketq.broker.broker_stats_manager import (
    MESSAGE_SIZE_BOUNDS,
    BrokerStatsManager,
)
from rocketq.remoting import native_frames
from rocketq.testing.broker import run_broker
from tests.broker.send_bursts import SMALL, burst_on


class Clock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def restore_native() -> Iterator[None]:
    was = native_frames.FRAMES is not None
    yield
    native_frames.use(was)


def everything(stats: BrokerStatsManager, clock: Clock) -> object:
    """What every reader of the put figures reads: the items (and their windows), the
    totals, the by-type pairs, the size histograms, GET_BROKER_RUNTIME_INFO's text."""
    items = {
        name: {
            item.stats_key: (
                item.value,
                item.times,
                item.stats_in_minute(clock.now_ms),
                item.stats_in_hour(clock.now_ms),
                item.stats_in_day(clock.now_ms),
            )
            for item in stats_set.items()
        }
        for name, stats_set in stats.sets.items()
    }
    return (
        items,
        stats.put_message_times_total,
        stats.put_message_size_total,
        stats.put_by_type,
        stats.message_sizes,
        stats.runtime_info(),
    )


def play(native: bool, seed: int) -> object:
    """A random sequence of flushes' figures (new topics, known ones, with latencies or not,
    single puts, a topic deleted and put again, odd sizes and latencies C leaves to Python)
    on one path."""
    native_frames.use(native)
    rng = random.Random(seed)
    clock = Clock(1_000_000)
    stats = BrokerStatsManager("C", clock_ms=clock)
    topics = [f"T{i}" for i in range(4)]
    sizes_pool = [0, 1, 1023, 1024, 1025, 4096, 512 * 1024, 4 << 20, 5 << 20, -3]
    for _ in range(60):
        clock.now_ms += rng.randrange(3000)
        action = rng.random()
        if action < 0.6:
            by_topic = {
                topic: [
                    rng.choice(sizes_pool) if rng.random() < 0.5 else rng.randrange(1 << 23)
                    for _ in range(rng.randrange(1, 6))
                ]
                for topic in rng.sample(topics, rng.randrange(1, 4))
            }
            if rng.random() < 0.1:  # a size C does not read: that topic goes Python's way
                next(iter(by_topic.values())).append(rng.choice((1 << 60, True)))
            if rng.random() < 0.5:
                stats.record_puts_by_topic(by_topic, "Normal")
                continue
            elapsed_s = [rng.choice((0.0, -0.0, 0.0004, 0.01, 0.0499, 12.0)) for _ in by_topic]
            if rng.random() < 0.1:  # a latency C does not read: all of it goes Python's way
                elapsed_s.append(rng.choice((1e300, 3, -7.5)))
            stats.record_flush(elapsed_s, by_topic, "Normal")
        elif action < 0.75:
            topic = rng.choice(topics)
            stats.record_single_puts(topic, [rng.randrange(2000)], "Normal")
        elif action < 0.85:
            stats.record_put(rng.choice(topics), rng.randrange(1, 4), rng.randrange(9000))
        elif action < 0.9:
            stats.on_topic_deleted(rng.choice(topics))
        else:
            stats.sample()
    return everything(stats, clock)


@pytest.mark.parametrize("seed", range(8))
def test_count_puts_leaves_every_figure_as_the_python_reference_does(
    seed: int, restore_native: None
) -> None:
    assert play(True, seed) == play(False, seed)


def test_count_puts_counts_known_topics_and_leaves_the_rest_untouched() -> None:
    stats = BrokerStatsManager("C", clock_ms=Clock(0))
    stats._record_single_puts("Known", [10], "Normal")  # the entries a first put creates
    by_topic = {"Known": [100, 2000, 5000], "New": [7], "Odd": [True]}
    stats._record_single_puts("Odd", [1], "Normal")
    left = _stats.count_puts(stats, stats._put_tables, by_topic, "Normal")
    assert left == ["New", "Odd"]
    nums = stats.sets["TOPIC_PUT_NUMS"].get("Known")
    size = stats.sets["TOPIC_PUT_SIZE"].get("Known")
    assert nums is not None
    assert size is not None
    assert (nums.value, nums.times, size.value, size.times) == (4, 4, 7110, 4)
    assert stats.sets["TOPIC_PUT_NUMS"].get("New") is None  # Python creates it
    odd = stats.sets["TOPIC_PUT_NUMS"].get("Odd")
    assert odd is not None
    assert (odd.value, odd.times) == (1, 1)
    assert stats.put_by_type[("Known", "Normal")] == [4, 7110]
    assert stats.message_sizes["Known"] == [2, 1, 1, 0, 0, 0, 0]
    assert (stats.put_message_times_total, stats.put_message_size_total) == (5, 7111)
    # another message type has no pair yet: left to Python, nothing written
    assert _stats.count_puts(stats, stats._put_tables, {"Known": [1]}, "Delay") == ["Known"]
    assert stats.put_message_times_total == 5
    # the first topic declined ends the counting: the rest go Python's way, in order
    left = _stats.count_puts(stats, stats._put_tables, {"New": [1], "Known": [1]}, "Normal")
    assert left == ["New", "Known"]
    assert stats.put_message_times_total == 5
    assert stats._put_tables[6] is MESSAGE_SIZE_BOUNDS


def test_count_puts_refuses_tables_of_another_shape() -> None:
    stats = BrokerStatsManager("C", clock_ms=Clock(0))
    stats._record_single_puts("A", [10], "Normal")
    with pytest.raises(TypeError):
        _stats.count_puts(stats, stats._put_tables[:6], {"A": [1]}, "Normal")
    odd_bounds = (*stats._put_tables[:6], (1.5, 2.5))
    assert _stats.count_puts(stats, odd_bounds, {"A": [1]}, "Normal") == ["A"]
    stats.message_sizes["A"] = [0, 0]  # a counts list of another length: declined
    assert _stats.count_puts(stats, stats._put_tables, {"A": [1]}, "Normal") == ["A"]
    assert stats.put_message_times_total == 1


async def test_a_known_topic_s_sends_leave_the_same_figures_on_both_paths(
    tmp_path: Path, restore_native: None
) -> None:
    """Through a real broker: a topic's first send creates its entries (Python), the next
    bursts and lone sends are counted by count_puts; the reply bytes, the records and the
    figures equal the reference path's (a topic name of the same length)."""
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        runs = {}
        for native, topic in ((True, "KnownC"), (False, "KnownP")):
            await burst_on(broker, native, 1, topic)
            await burst_on(broker, native, 1, topic)  # a lone send of a known topic
            runs[native] = await burst_on(broker, native, 12, topic)
    native, python = runs[True], runs[False]
    assert native.pop("native answers") == 12
    assert python.pop("native answers") == 0
    assert native["topic stats"] == [(14, 14), (native["by type"][1], 14)]  # type: ignore[index]
    assert native == python


def test_count_flush_counts_the_latencies_and_the_puts_or_leaves_all_to_python() -> None:
    stats = BrokerStatsManager("C", clock_ms=Clock(0))
    stats._record_single_puts("A", [10], "Normal")
    stats.put_message_entire_time_max_ms = 5
    left = _stats.count_flush(stats, stats._put_tables, {"A": [1, 2]}, "Normal", [0.0, 0.012])
    assert left == []
    assert stats.put_latency_counts[:3] == [1, 0, 1]
    assert stats.put_message_entire_time_max_ms == 12
    assert stats.put_message_times_total == 3
    # a latency it does not read: nothing touched, None
    assert _stats.count_flush(stats, stats._put_tables, {"A": [1]}, "Normal", [1]) is None
    assert _stats.count_flush(stats, stats._put_tables, {"A": [1]}, "Normal", [math.nan]) is None
    assert stats.put_latency_counts[:3] == [1, 0, 1]
    assert stats.put_message_times_total == 3
