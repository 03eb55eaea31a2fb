"""The fault suite's count of re-consumption: a rewind to a new master's lower offset counts
what will be consumed again and the seconds of consumption that spans; a rewind to the end
counts nothing, and a replayed batch is consumed anew."""

from __future__ import annotations

import time

from rocketq.testing.failover.reconsume import QueueCursor


def test_a_rewind_below_what_was_consumed_counts_the_messages_and_the_replayed_time() -> None:
    cursor = QueueCursor()
    cursor.consumed(0, 10)
    cursor.consumed(10, 20)
    cursor.batches = [(0, 100.0), (10, 101.5)]  # the times the two batches were consumed
    rewind = cursor.rewind("broker-a", "cg", 2, 12)
    assert (rewind.count, rewind.queue_id, cursor.offset, cursor.end) == (8, 2, 12, 12)
    assert rewind.replay_s == 0.0  # only part of the last batch: no time spanned
    cursor.consumed(12, 20)
    cursor.batches[-1] = (12, 103.0)
    again = cursor.rewind("broker-a", "cg", 2, 5)
    assert again.count == 15
    assert again.replay_s == 3.0  # from the batch holding offset 5 to the last one


def test_a_rewind_to_the_end_of_what_was_consumed_counts_nothing() -> None:
    cursor = QueueCursor()
    cursor.consumed(0, 4)
    before = time.monotonic()
    rewind = cursor.rewind("broker-b", "cg", 0, 4)
    assert rewind.count == 0
    assert rewind.at >= before
    assert (cursor.offset, cursor.end, len(cursor.batches)) == (4, 4, 1)
