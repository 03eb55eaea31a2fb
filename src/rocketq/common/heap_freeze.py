"""Long-lived tables out of the cyclic collector's walk: ``gc.freeze()`` after a growth step.

A full (generation 2) collection walks every tracked object that is not frozen. A server
command freezes its start-up heap once it listens (``rocketq.cli.startup``), but the topic
table keeps growing after that: a TopicConfig per topic in the broker, a QueueData and its
``{brokerName: QueueData}`` map in the name server. While such a table grows, Python starts a
full collection whenever a quarter more objects have survived since the last one, each
walking the whole table (36-39 ms at 50,000 topics, up to 77 ms at 100,000, about once a
second during growth), and a request that lands on one waits for it (BENCHMARKS.md, issue
22: topic create's tail).

So the tables count what they add (``grown``, any thread, under their locks) and, once
``FREEZE_GROWTH`` entries were added since the last freeze, the change that crossed it
freezes (``settle``, called by the table's mutators outside their locks): it collects the
objects made since the last freeze (frozen ones are not walked: a pause bounded by the step,
1-2 ms) and freezes what survived, so later full collections walk only what came after. The
growing request pays it, not the next request that happens to come.

The cost: a frozen object is never freed by the cyclic collector (reference counting still
frees it), so one that is alive at a freeze and later becomes part of unreachable cyclic
garbage stays. Bound: once as many table entries were frozen since the last reclaim (or since
``enable``) as it left objects frozen, so that the frozen heap at least doubled, a freeze
unfreezes them all and collects once more, walking the whole heap and freeing such garbage;
so the garbage held frozen is at most what was alive at the freezes between two reclaims,
and the reclaims are a logarithm of the growth (one whole walk per doubling where Python made
one per quarter). Only a process that calls ``enable`` freezes
anything (the server commands, not tests running servers in-process).
"""

from __future__ import annotations

import gc
import logging
import threading
import time

log = logging.getLogger(__name__)

#: table entries added since the last freeze that make the next one
FREEZE_GROWTH = 1024
#: a reclaim once the frozen heap grew to this many times its size after the last one
RECLAIM_RATIO = 2


class HeapFreezer:
    def __init__(
        self, freeze_growth: int = FREEZE_GROWTH, reclaim_ratio: int = RECLAIM_RATIO
    ) -> None:
        self.freeze_growth = freeze_growth
        self.reclaim_ratio = reclaim_ratio  # 0: never
        self._lock = threading.Lock()  # one freeze at a time
        self.enabled = False
        self._grown = 0
        #: entries to freeze before the next reclaim: the objects frozen after the last one
        self._reclaim_after = 0
        self._frozen_since = 0  # entries frozen since the last reclaim
        self.freezes = 0
        self.reclaims = 0
        self.collected = 0  # objects the freezes' collections freed (cyclic garbage found)

    def enable(self) -> None:
        """Freeze from now on (the start-up heap already frozen)."""
        self._reclaim_after = max(1, gc.get_freeze_count())
        self._grown = 0
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    def grown(self, entries: int) -> None:
        """A table gained ``entries`` long-lived objects (any thread; only counts)."""
        if self.enabled:
            self._grown += entries  # a lost update under a race only delays a freeze

    def settle(self) -> None:
        """Freeze when the growth reached the step (outside the table's locks)."""
        if not self.enabled or self._grown < self.freeze_growth:
            return
        if not self._lock.acquire(blocking=False):  # another thread is freezing
            return
        try:
            if self._grown >= self.freeze_growth:
                self.freeze()
        finally:
            self._lock.release()

    def freeze(self) -> None:
        """Collect what is not frozen and freeze the survivors; then, once as many table
        entries were frozen since the last reclaim as it left objects frozen (the frozen heap
        at least doubled), a reclaim: the frozen objects collected too. (The frozen count is
        a walk of the frozen list, so it is read at reclaims only: 2 ms at 40,000 objects.)"""
        started = time.perf_counter()
        self._frozen_since += self._grown
        self._grown = 0
        self.freezes += 1
        collected = gc.collect()
        gc.freeze()
        doubled = self._frozen_since * (self.reclaim_ratio - 1) >= self._reclaim_after
        reclaim = self.reclaim_ratio > 0 and doubled
        frozen = -1
        if reclaim:
            gc.unfreeze()
            collected += gc.collect()
            gc.freeze()
            self.reclaims += 1
            frozen = gc.get_freeze_count()
            self._reclaim_after = max(1, frozen)
            self._frozen_since = 0
        self.collected += collected
        log.info(
            "heap frozen%s: %d collected, %.1f ms",
            f" (reclaim, {frozen} objects)" if reclaim else "",
            collected,
            (time.perf_counter() - started) * 1000,
        )


#: the process's freezer (enabled by ``rocketq.cli.startup.freeze_start_up_heap``)
HEAP = HeapFreezer()
