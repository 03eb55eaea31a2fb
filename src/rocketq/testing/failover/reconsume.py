"""Re-consumption after a failover: the suite's consumer groups commit their offsets on the
master as a RocketMQ consumer does (the commit offset of each pull, ``FLAG_COMMIT_OFFSET``),
and when the controller names a new master they take the offsets it holds
(QUERY_CONSUMER_OFFSET) instead of their own, so what the old master's offsets had not handed
to the new one is consumed again, and counted here.

A :class:`QueueCursor` per (group, consumer group, queue) keeps the next offset to pull, the
end of what was consumed and when each pulled batch was consumed. A rewind below that end is a
:class:`ReConsumed`: how many messages will be consumed again, and how many seconds of
consumption that replays (from the first consumption of the oldest of them to the last
consumption before the change). Offsets reach a controller-mode slave by its metadata poll
(docs/controller.md, "Metadata follows within 2 s"), so the replay stays near that period.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ReConsumed:
    group: str  # the brokerName
    consumer_group: str
    queue_id: int
    count: int  # messages consumed again
    replay_s: float  # the seconds of consumption they span
    at: float  # time.monotonic() of the rewind (the new master's offsets taken)


@dataclass
class QueueCursor:
    offset: int = 0  # the next offset to pull (committed with the pull)
    end: int = 0  # after the highest offset consumed
    #: (first offset, time.monotonic()) of each pulled batch, in offset order
    batches: list[tuple[int, float]] = field(default_factory=list)

    def consumed(self, first: int, next_offset: int) -> None:
        """A pull returned ``first`` .. ``next_offset`` - 1."""
        if first >= self.end:
            self.batches.append((first, time.monotonic()))
        self.offset = next_offset
        self.end = max(self.end, next_offset)

    def consumed_at(self, offset: int) -> float:
        """When ``offset`` was first consumed (the time of the batch that held it)."""
        i = bisect.bisect_right(self.batches, (offset, float("inf"))) - 1
        return self.batches[max(i, 0)][1] if self.batches else time.monotonic()

    def rewind(self, group: str, consumer_group: str, queue_id: int, committed: int) -> ReConsumed:
        """Pull from ``committed`` (the new master's offset) on; what that replays."""
        count = max(0, self.end - committed)
        replay_s = 0.0
        if count and self.batches:
            replay_s = max(0.0, self.batches[-1][1] - self.consumed_at(committed))
        self.offset = committed
        if count:
            cut = bisect.bisect_left(self.batches, (committed, float("-inf")))
            self.batches = self.batches[:cut]  # a replayed batch is consumed anew
            self.end = committed
        return ReConsumed(group, consumer_group, queue_id, count, replay_s, time.monotonic())
