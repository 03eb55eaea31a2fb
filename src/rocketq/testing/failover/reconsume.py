"""Re-consumption after a failover: the suite's consumer groups commit their offsets on the
master as a RocketMQ consumer does (the commit offset of each pull, ``FLAG_COMMIT_OFFSET``),
and when the controller names a new master they take the offsets it holds
(QUERY_CONSUMER_OFFSET) instead of their own, so what the old master's offsets had not handed
to the new one is consumed again, and counted here.

A :class:`QueueCursor` per (group, consumer group, queue) keeps the next offset to pull, the
end of what was consumed and when each pulled batch was consumed. A rewind below that end is a
:class:`ReConsumed`: how many messages will be consumed again, and how many seconds of
consumption that replays, as a RocketMQ user reads "the consumer replays N seconds": the
consumer's time from the first consumption of the oldest of them to the last consumption
before the change, less the time its pulls waited on a broker (:class:`ConsumptionClock`). A
paused master's pulls time out, and the pull it answers as it wakes consumes what was stored
before the pause; counting the pause made a SIGSTOP report 5.40 s where 0.3 s of consumption
was replayed (RELIABILITY.md, "Controller mode: the fault suite"). The wall span is kept
beside it (``wall_s``). Offsets reach a controller-mode slave by its metadata poll
(docs/controller.md, "Metadata follows within 2 s"), so the replay stays near that period.
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ReConsumed:
    group: str  # the brokerName
    consumer_group: str
    queue_id: int
    count: int  # messages consumed again
    replay_s: float  # the seconds of consumption they span (waits on a broker left out)
    at: float  # time.monotonic() of the rewind (the new master's offsets taken)
    committed: int = 0  # the new master's offset
    end: int = 0  # after the highest offset consumed before the rewind
    wall_s: float = 0.0  # the wall time they span, waits on a broker included
    #: (first offset, seconds before the rewind) of each replayed batch
    batches: tuple[tuple[int, float], ...] = ()
    #: (offset, seconds before the rewind) of the last commits the old master answered
    commits: tuple[tuple[int, float], ...] = ()
    last_pull_s: float = 0.0  # seconds before the rewind the old master last answered a pull
    wall_at: float = field(default_factory=time.time)  # time.time() of the rewind (broker logs)

    def detail(self) -> str:
        times = ", ".join(f"{o}@-{s:.2f}" for o, s in self.batches)
        commits = ", ".join(f"{o}@-{s:.2f}" for o, s in self.commits)
        at = time.strftime("%H:%M:%S", time.localtime(self.wall_at))
        at += f".{int(self.wall_at * 1000) % 1000:03d}"  # as the broker logs print it
        return (
            f"{self.group}/{self.consumer_group}/q{self.queue_id} at {at}: offsets "
            f"{self.committed}.."
            f"{self.end} ({self.count}), replay {self.replay_s:.2f} s (wall {self.wall_s:.2f} s);"
            f" batches (offset@s before the rewind) {times}; commits answered {commits}, last"
            f" pull answered -{self.last_pull_s:.2f}"
        )


#: a pull answered later than this waited on a broker (the suite's pulls never long-poll:
#: ``suspend_ms=0``), a paused master say; the wait is not consumption
SLOW_PULL_S = 1.0


@dataclass
class ConsumptionClock:
    """One consumer's consumption time: the seconds it spent consuming or idle with nothing
    to pull, leaving out the time its pulls waited on a broker (timed out, refused, or
    answered after :data:`SLOW_PULL_S`): a consumer stuck on a paused master consumes
    nothing, and a pull the master answers as it wakes is not consumption done meanwhile.
    Nor does one whose master is down or fenced: after a pull that went unanswered, the time
    until a pull is answered again is a wait on a broker, however quickly each retry is
    refused, that pull's own trip included (a paused master answers, as it wakes, the pull
    sent after the last one timed out: up to :data:`SLOW_PULL_S` of waiting). Counted as
    consumption, a killed master's restart made a rewind to a batch consumed before it
    report 6.40 s where 0.6 s of consumption was replayed, and a paused master's wake added
    up to 1 s to every rewind after it (RELIABILITY.md, "Re-consumption past 2 s after a
    paused master")."""

    consuming_s: float = 0.0
    _last: float | None = None  # the end of the last pull
    _waiting: bool = False  # the last pull went unanswered (or answered late)

    def pulled(self, sent: float, done: float, answered: bool) -> float:
        """A pull sent at ``sent`` ended at ``done`` (``answered``: with a pull answer);
        returns the clock after it."""
        last = sent if self._last is None else self._last
        if answered and done - sent <= SLOW_PULL_S:
            if not self._waiting:  # idle since the last pull, then this one
                self.consuming_s += max(0.0, done - last)
            self._waiting = False
        else:
            if not self._waiting:  # up to the pull: consuming or idle
                self.consuming_s += max(0.0, sent - last)
            self._waiting = True
        self._last = done
        return self.consuming_s

    def unreachable(self, now: float) -> None:
        """No pull could be sent at ``now``: the group has no master the consumer may pull
        from (none in the route, or one whose offsets are not taken yet). Until a pull is
        answered again it waits on a broker (counted as consumption, a master killed while
        alone in its in-sync set and restarted at its address made a rewind after the next
        change of master report 2.83 s where 0.3 s of consumption was replayed)."""
        if not self._waiting:
            last = now if self._last is None else self._last
            self.consuming_s += max(0.0, now - last)
            self._waiting = True
        self._last = now


@dataclass(frozen=True, slots=True, order=True)
class Batch:
    first: int  # the first offset the pull returned
    at: float  # time.monotonic() it was consumed
    consuming_s: float  # the consumer's ConsumptionClock then


#: how many of a queue's last commits a cursor keeps for a rewind's detail
KEPT_COMMITS = 4


@dataclass
class QueueCursor:
    offset: int = 0  # the next offset to pull (committed with the pull)
    end: int = 0  # after the highest offset consumed
    batches: list[Batch] = field(default_factory=list)  # each pulled batch, in offset order
    #: (offset, time.monotonic()) of the first answered pull that carried each new commit
    commits: deque[tuple[int, float]] = field(default_factory=lambda: deque(maxlen=KEPT_COMMITS))
    answered_at: float = 0.0  # time.monotonic() a master last answered a pull of this queue

    def committed(self, offset: int, now: float) -> None:
        """A master answered a pull that carried ``offset`` as its commit offset."""
        self.answered_at = now
        if not self.commits or self.commits[-1][0] != offset:
            self.commits.append((offset, now))

    def consumed(
        self, first: int, next_offset: int, now: float | None = None, consuming_s: float = 0.0
    ) -> None:
        """A pull returned ``first`` .. ``next_offset`` - 1 at ``now``, the consumer's
        :class:`ConsumptionClock` then at ``consuming_s``."""
        now = time.monotonic() if now is None else now
        if first >= self.end:
            self.batches.append(Batch(first, now, consuming_s))
        self.offset = next_offset
        self.end = max(self.end, next_offset)

    def batch_index(self, offset: int) -> int:
        """The index of the batch that first consumed ``offset``."""
        return max(bisect.bisect_right(self.batches, Batch(offset, float("inf"), 0.0)) - 1, 0)

    def rewind(self, group: str, consumer_group: str, queue_id: int, committed: int) -> ReConsumed:
        """Pull from ``committed`` (the new master's offset) on; what that replays."""
        count = max(0, self.end - committed)
        end, now = self.end, time.monotonic()
        self.offset = committed
        commits = tuple((o, now - at) for o, at in self.commits)
        last_pull_s = now - self.answered_at if self.answered_at else 0.0
        self.commits.clear()  # the next master's commits are its own
        if not count or not self.batches:
            return ReConsumed(
                group, consumer_group, queue_id, count, 0.0, now, committed, end,
                commits=commits, last_pull_s=last_pull_s,
            )  # fmt: skip
        i = self.batch_index(committed)
        oldest, last = self.batches[i], self.batches[-1]
        cut = bisect.bisect_left(self.batches, Batch(committed, float("-inf"), 0.0))
        replayed = tuple((b.first, now - b.at) for b in self.batches[i:])
        self.batches = self.batches[:cut]  # a replayed batch is consumed anew
        self.end = committed
        return ReConsumed(
            group,
            consumer_group,
            queue_id,
            count,
            max(0.0, last.consuming_s - oldest.consuming_s),
            now,
            committed,
            end,
            max(0.0, last.at - oldest.at),
            replayed,
            commits,
            last_pull_s,
        )
