"""Guava's ``Hashing.consistentHash`` and the write queue of a message group.

The first vectors are Guava's own (HashingTest.
testConsistentHash_linearCongruentialGeneratorCompatibility, "to see that implementations
across languages are equivalent"). The (group, n) pairs follow from Java's ``String.hashCode``
("hello" is 99162322; "Aa" and "BB" are both 2112) and that algorithm, as RocketMQ 5's proxy
(SendMessageActivity.SendMessageQueueSelector) computes ``consistentHash(group.hashCode(), n)``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.message import message_group_queue
from rocketq.common.hashing import consistent_hash, java_string_hash, message_group_queue_index
from rocketq.common.message import Message, MessageQueue

GUAVA_GOLDEN_100 = [0, 55, 62, 8, 45, 59, 86, 97, 82, 59, 73, 37, 17, 56, 86, 21, 90, 37, 38, 83]


def test_consistent_hash_gives_guavas_golden_values() -> None:
    assert [consistent_hash(i, 100) for i in range(20)] == GUAVA_GOLDEN_100
    assert consistent_hash(10863919174838991, 11) == 6
    assert consistent_hash(2016238256797177309, 11) == 3
    assert consistent_hash(1673758223894951030, 11) == 5
    assert consistent_hash(2, 100001) == 80343
    assert consistent_hash(2201, 100001) == 22152
    assert consistent_hash(2202, 100001) == 15018


GROUP_QUEUES = [
    # (group, String.hashCode, queue of 1, 2, 4, 8, 16 write queues)
    ("hello", 99162322, [0, 0, 3, 4, 8]),
    ("Aa", 2112, [0, 1, 1, 5, 14]),
    ("BB", 2112, [0, 1, 1, 5, 14]),
    ("order-1", -1207111310, [0, 0, 3, 3, 3]),
    ("order-2", -1207111309, [0, 0, 2, 2, 11]),
    ("group-A", 293427315, [0, 0, 2, 2, 12]),
]


@pytest.mark.parametrize(("group", "hash_code", "queues"), GROUP_QUEUES)
def test_a_message_group_maps_to_the_queue_java_picks(
    group: str, hash_code: int, queues: list[int]
) -> None:
    assert java_string_hash(group) == hash_code
    assert [message_group_queue_index(group, n) for n in (1, 2, 4, 8, 16)] == queues


@given(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(1, 64))
def test_growing_by_one_bucket_moves_an_input_only_to_the_new_bucket(value: int, n: int) -> None:
    before, after = consistent_hash(value, n), consistent_hash(value, n + 1)
    assert 0 <= before < n
    assert after in (before, n)


def test_the_producer_takes_the_group_queue_among_write_queues_sorted_by_broker_and_id() -> None:
    mqs = [MessageQueue("T", b, q) for b in ("broker-b", "broker-a") for q in range(4)]
    chosen = message_group_queue(mqs, Message("T", b"x", message_group="hello"))
    assert chosen == MessageQueue("T", "broker-b", 0)  # index 4 of 8: broker-a 0..3, broker-b 0..3
    assert message_group_queue(mqs, Message("T", b"x")) is None
