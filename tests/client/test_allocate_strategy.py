"""Allocate strategies: RocketMQ's AllocateMessageQueue* and what every group relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.allocate_strategy import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueConsistentHash,
    allocate_strategy,
    md5_hash,
)
from rocketq.common.message import MessageQueue
from rocketq.errors import ConfigError

STRATEGIES = [
    AllocateMessageQueueAveragely(),
    AllocateMessageQueueAveragelyByCircle(),
    AllocateMessageQueueConsistentHash(),
]


def queues(n: int, topic: str = "T") -> list[MessageQueue]:
    return [MessageQueue(topic, "broker-a", i) for i in range(n)]


def ids(mqs: list[MessageQueue]) -> list[int]:
    return [mq.queue_id for mq in mqs]


@pytest.mark.parametrize(
    ("n", "c", "expected"),
    [(4, 3, [[0, 1], [2], [3]]), (2, 3, [[0], [1], []]), (8, 3, [[0, 1, 2], [3, 4, 5], [6, 7]])],
)
def test_averagely_gives_each_consumer_a_contiguous_block_as_the_spec_tables_say(
    n: int, c: int, expected: list[list[int]]
) -> None:
    cids = [f"10.0.0.1@{i}" for i in range(c)]
    strategy = AllocateMessageQueueAveragely()
    got = [ids(strategy.allocate("g", cid, queues(n), cids)) for cid in cids]
    assert got == expected


def test_averagely_by_circle_deals_queues_like_cards() -> None:
    cids = ["a", "b", "c"]
    strategy = AllocateMessageQueueAveragelyByCircle()
    got = [ids(strategy.allocate("g", cid, queues(7), cids)) for cid in cids]
    assert got == [[0, 3, 6], [1, 4], [2, 5]]


def test_a_consumer_missing_from_the_id_list_gets_nothing() -> None:
    for strategy in STRATEGIES:
        assert strategy.allocate("g", "ghost", queues(4), ["a", "b"]) == []


def test_consistent_hash_moves_few_queues_when_a_consumer_joins() -> None:
    strategy = AllocateMessageQueueConsistentHash()
    mqs = queues(64)
    before = {cid: set(strategy.allocate("g", cid, mqs, ["a", "b", "c"])) for cid in "abc"}
    after = {cid: set(strategy.allocate("g", cid, mqs, ["a", "b", "c", "d"])) for cid in "abcd"}
    moved = sum(len(before[cid] - after[cid]) for cid in "abc")
    assert moved == len(after["d"])
    assert moved < len(mqs) // 2


def test_md5_hash_takes_the_first_four_digest_bytes_big_endian() -> None:
    # md5("a") = 0cc175b9...
    assert md5_hash("a") == 0x0CC175B9


def test_unknown_strategy_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        allocate_strategy("RANDOM")


@given(
    n=st.integers(min_value=1, max_value=40),
    cids=st.sets(st.text("abcdef0123456789@.", min_size=1, max_size=8), min_size=1, max_size=9),
    which=st.integers(min_value=0, max_value=2),
)
def test_every_queue_goes_to_exactly_one_consumer_of_the_group(
    n: int, cids: set[str], which: int
) -> None:
    strategy = STRATEGIES[which]
    mqs = queues(n)
    shares = [strategy.allocate("g", cid, list(reversed(mqs)), sorted(cids)) for cid in cids]
    flat = [mq for share in shares for mq in share]
    assert sorted(flat) == mqs
