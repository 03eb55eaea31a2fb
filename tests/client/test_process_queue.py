"""ProcessQueue: flow-control counters, the committable offset, orderly take/commit/rollback."""

from __future__ import annotations

import asyncio

from rocketq.client.process_queue import ProcessQueue
from rocketq.common.message import MessageExt


def msgs(*offsets: int, size: int = 10) -> list[MessageExt]:
    return [MessageExt(topic="T", body=b"x" * size, queue_offset=o) for o in offsets]


def test_counts_and_sizes_follow_puts_and_removes() -> None:
    pq = ProcessQueue()
    batch = msgs(0, 1, 2, size=100)
    pq.put_message(batch)
    assert (pq.msg_count, pq.msg_size, pq.max_span()) == (3, 300, 2)
    pq.put_message(msgs(1))  # a duplicate offset is not counted twice
    assert pq.msg_count == 3
    pq.remove_message(batch[:2])
    assert (pq.msg_count, pq.msg_size) == (1, 100)


def test_the_committable_offset_is_the_smallest_still_in_flight() -> None:
    pq = ProcessQueue()
    batch = msgs(10, 11, 12)
    pq.put_message(batch)
    assert pq.remove_message([batch[1]]) == 10
    assert pq.remove_message([batch[0]]) == 12
    assert pq.remove_message([batch[2]]) == 13
    assert ProcessQueue().remove_message(msgs(5)) == -1


def test_orderly_takes_in_offset_order_and_puts_failures_back() -> None:
    pq = ProcessQueue()
    assert pq.put_message(msgs(3, 4, 5)) is True
    assert pq.put_message(msgs(6)) is False  # a consumer is already dispatched
    first = pq.take_messages(2)
    assert [m.queue_offset for m in first] == [3, 4]
    pq.make_message_to_consume_again(first)
    again = pq.take_messages(2)
    assert [m.queue_offset for m in again] == [3, 4]
    assert pq.commit() == 5
    assert [m.queue_offset for m in pq.take_messages(10)] == [5, 6]
    assert pq.commit() == 7
    assert pq.take_messages(1) == []
    assert pq.consume_running is False
    assert pq.msg_count == 0


async def test_wait_for_space_returns_when_messages_leave() -> None:
    pq = ProcessQueue()
    batch = msgs(0, 1)
    pq.put_message(batch)
    waiter = asyncio.create_task(pq.wait_for_space(5.0))
    await asyncio.sleep(0)
    pq.remove_message(batch)
    await asyncio.wait_for(waiter, 1.0)
    assert waiter.done()


async def test_wait_for_space_waits_for_a_removal_after_it_not_one_before() -> None:
    """A queue still over its limit after a removal: the pull loop's wait must wait (and
    yield), not return at once on the earlier removal's signal and spin."""
    pq = ProcessQueue()
    pq.put_message(msgs(0, 1, 2))
    pq.remove_message(msgs(0))  # signals space; the queue may still be over a limit
    waiter = asyncio.ensure_future(pq.wait_for_space(5.0))
    await asyncio.sleep(0)
    assert not waiter.done()
    pq.remove_message(msgs(1))
    await asyncio.wait_for(waiter, 1.0)
    assert pq.msg_count == 1
