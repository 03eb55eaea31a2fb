"""The fault schedule's order: seeded rounds of every fault on every group. With ``parallel``
two faults, one per group, are injected at once when neither touches what the other group
shares (the controllers, the proxied links): the same faults in about half the time, each
group still faulted once per step (the bounded sample in make test uses it for its time
budget)."""

from __future__ import annotations

import random
from collections.abc import Iterator

#: faults on what both groups share: the controllers, or links healed all at once
SHARED_FAULTS = frozenset(
    {
        "kill_controller_leader",
        "kill_master_and_controller_leader",
        "deafen_controller_leader",
        "partition_master",
        "partition_master_with_controller",
        "deafen_master",
        "partition_clients_from_master",
    }
)

Step = list[tuple[str, str]]  # (fault, group) injected together


def steps(
    rng: random.Random, faults: tuple[str, ...], groups: list[str], parallel: bool
) -> Iterator[Step]:
    """Endless steps: each round every (fault, group) once, in a seeded order; with
    ``parallel`` a step pairs the next fault with the first later one of another group
    that it may run beside."""
    kinds = [(f, g) for f in faults for g in sorted(groups)]
    while True:
        pending = rng.sample(kinds, len(kinds))
        while pending:
            first = pending.pop()
            step = [first]
            if parallel:
                partner = next(
                    (k for k in reversed(pending) if k[1] != first[1] and compatible(first, k)),
                    None,
                )
                if partner is not None:
                    pending.remove(partner)
                    step.append(partner)
            yield step


def compatible(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether faults ``a`` and ``b`` may be injected at once (at most one shared)."""
    return not (a[0] in SHARED_FAULTS and b[0] in SHARED_FAULTS)
