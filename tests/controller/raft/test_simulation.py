"""Proof 1 of issue 20: thousands of seeds of the deterministic simulation hold every Raft
invariant and a linearizable history, and each unsafe switch is caught within those seeds."""

from __future__ import annotations

import re
import time

import pytest

from rocketq.testing.raft_simulation import SimulationConfig, run_seed
from rocketq.testing.raft_simulation.runner import run_seed_sets, run_seeds

THREE_NODE_SEEDS = 1500
FIVE_NODE_SEEDS = 500
CI_SEEDS = THREE_NODE_SEEDS + FIVE_NODE_SEEDS


@pytest.mark.timeout(600)  # CPU-bound: 69 s quiet, over 300 s at load 20 on 2 cores
def test_two_thousand_seeds_hold_every_invariant_and_stay_linearizable() -> None:
    started = time.perf_counter()
    sets = [
        (range(THREE_NODE_SEEDS), SimulationConfig(node_count=3)),
        (range(FIVE_NODE_SEEDS), SimulationConfig(node_count=5)),
    ]
    results = list(run_seed_sets(sets))  # one pool for both node counts
    elapsed = time.perf_counter() - started
    print(f"{len(results)} seeds in {elapsed:.1f} s: {len(results) / elapsed:.0f} seeds/s")
    failures = [r for r in results if r.violation]
    assert not failures, "\n\n".join(r.report() for r in failures[:3])
    assert len(results) == CI_SEEDS
    for result in results:
        assert result.virtual_us >= 60_000_000, result.seed
        assert result.leader_terms >= 2, f"seed {result.seed}: no leader change"
        assert result.operations >= 50, f"seed {result.seed}: {result.operations} operations"
    assert sum(r.torn_writes for r in results) > 0


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("switch", "caught_as"),
    [
        ("unsafe_skip_fsync_before_reply", "Safety|Completeness|Matching|own check"),
        ("unsafe_disable_prevote_checkquorum", "CheckQuorum"),
        ("unsafe_commit_previous_term_by_counting", "Completeness|Safety"),
    ],
)
def test_each_unsafe_switch_is_caught_within_the_ci_seeds(switch: str, caught_as: str) -> None:
    config = SimulationConfig(**{switch: True})  # type: ignore[arg-type]
    results = run_seeds(range(CI_SEEDS), config, stop_at_first=True)
    caught = next((r for r in results if r.violation), None)
    assert caught is not None, f"{switch} was not caught in {CI_SEEDS} seeds"
    print(f"{switch}: caught at seed {caught.seed}: {caught.violation}")
    assert caught.violation is not None
    assert re.search(caught_as, caught.violation), caught.report()
    replay = run_seed(caught.seed, config)
    assert (replay.violation, replay.events) == (caught.violation, caught.events)


def test_a_seed_replays_event_for_event() -> None:
    first, second = run_seed(11), run_seed(11)
    assert first.violation is None
    assert (first.events, first.operations, first.trace) == (
        second.events,
        second.operations,
        second.trace,
    )
