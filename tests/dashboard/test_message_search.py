"""The message search's cursor: one end offset per queue, in the order of the queue ranges; a
cursor that no longer fits the topic's queues starts again from the newest messages."""

from __future__ import annotations

from rocketq.common.message import MessageQueue
from rocketq.dashboard.message_search import QueueRange, decode_cursor, encode_cursor

RANGES = [
    QueueRange(MessageQueue("T", "broker-a", 0), 0, 10),
    QueueRange(MessageQueue("T", "broker-a", 1), 5, 8),
]


def test_a_cursor_round_trips_its_end_offsets() -> None:
    assert decode_cursor(encode_cursor([7, 5]), RANGES) == [7, 5]
    assert encode_cursor([7, 5]) == "7.5"


def test_an_empty_or_stale_cursor_starts_from_the_newest_messages() -> None:
    newest = [10, 8]
    assert decode_cursor("", RANGES) == newest
    assert decode_cursor("3", RANGES) == newest  # the topic gained a queue
    assert decode_cursor("3.4", RANGES) == newest  # below queue 1's first offset in range
    assert decode_cursor("11.6", RANGES) == newest  # past queue 0's end
    assert decode_cursor("x.6", RANGES) == newest
