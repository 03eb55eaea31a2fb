"""The fault schedule's order: every (fault, group) once per round; with ``parallel`` a step
holds at most one fault per group and at most one fault on what the groups share."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from rocketq.testing.failover.faults import FAULTS
from rocketq.testing.failover.schedule import SHARED_FAULTS, steps

GROUPS = ["broker-a", "broker-b"]


def test_parallel_steps_cover_each_round_and_pair_only_what_may_run_together() -> None:
    kinds = len(FAULTS) * len(GROUPS)
    order = steps(random.Random(7), FAULTS, GROUPS, parallel=True)
    seen: Counter[tuple[str, str]] = Counter()
    count = 0
    paired = 0
    while count < 3 * kinds:  # three rounds (a step never spans two rounds)
        step = next(order)
        count += len(step)
        seen.update(step)
        assert len({g for _, g in step}) == len(step)  # one fault per group
        assert sum(f in SHARED_FAULTS for f, _ in step) <= 1
        paired += len(step) == 2
    assert count == 3 * kinds
    assert set(seen.values()) == {3}
    assert paired > kinds // 2  # most steps fault both groups: about half the time


def test_sequential_steps_are_one_fault_each_in_seeded_rounds() -> None:
    kinds = len(FAULTS) * len(GROUPS)
    first = list(itertools.islice(steps(random.Random(1), FAULTS, GROUPS, False), kinds))
    again = list(itertools.islice(steps(random.Random(1), FAULTS, GROUPS, False), kinds))
    assert first == again  # a seed replays its schedule
    assert all(len(step) == 1 for step in first)
    assert len({step[0] for step in first}) == kinds
