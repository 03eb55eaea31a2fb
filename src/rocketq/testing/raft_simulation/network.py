"""``SimNetwork``: a hostile network between the simulated nodes.

Every message gets an independent random delay (so messages reorder), may be dropped or
duplicated, and is cut by a partition: ``blocked`` holds directed (sender, receiver) pairs, so a
partition can be symmetric (both directions) or asymmetric (one). Times are integer
microseconds of virtual time.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(slots=True)
class SimNetwork:
    rng: random.Random
    min_delay_us: int = 500
    max_delay_us: int = 20_000
    drop_probability: float = 0.0
    duplicate_probability: float = 0.0
    blocked: set[tuple[int, int]] = field(default_factory=set)
    dropped: int = 0

    def delays(self, sender: int, receiver: int) -> list[int]:
        """The delays (µs) after which copies of a message from ``sender`` arrive."""
        rng = self.rng
        if (sender, receiver) in self.blocked or rng.random() < self.drop_probability:
            self.dropped += 1
            return []
        delay = rng.randrange(self.min_delay_us, self.max_delay_us)
        if rng.random() < self.duplicate_probability:
            return [delay, rng.randrange(self.min_delay_us, 4 * self.max_delay_us)]
        return [delay]

    def partition(self, groups: Iterable[Iterable[int]]) -> None:
        """Cut every link between different groups, both ways."""
        groups = [set(g) for g in groups]
        for a in groups:
            for b in groups:
                if a is not b:
                    self.blocked.update((x, y) for x in a for y in b)

    def cut_one_way(self, sender: int, receiver: int) -> None:
        self.blocked.add((sender, receiver))

    def heal(self) -> None:
        self.blocked.clear()
