"""Run many seeds of the Raft simulation in a process pool, and replay one.

    python -m rocketq.testing.raft_simulation --seeds 100000 [--first 0] [--nodes 3] [--jobs 2]
    python -m rocketq.testing.raft_simulation --replay 1234 [--nodes 5]   # prints the trace

Each seed is independent and deterministic, so a pool only divides the work; a failing seed
replays exactly with ``--replay`` (or ``run_seed(seed, config)``).
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import sys
import time
from collections.abc import Iterable, Iterator

from rocketq.testing.raft_simulation.result import SimulationConfig, SimulationResult
from rocketq.testing.raft_simulation.simulator import run_seed

CHUNK = 20  # small enough that the last chunk leaves the other core idle briefly


def _run_chunk(args: tuple[list[int], SimulationConfig, bool]) -> list[SimulationResult]:
    seeds, config, stop_at_first = args
    results = []
    for seed in seeds:
        result = run_seed(seed, config)
        result.trace = result.trace if result.violation else []
        results.append(result)
        if stop_at_first and result.violation:
            break
    return results


def _chunks(seeds: Iterable[int]) -> list[list[int]]:
    seed_list = list(seeds)
    return [seed_list[i : i + CHUNK] for i in range(0, len(seed_list), CHUNK)]


def run_seeds(
    seeds: Iterable[int],
    config: SimulationConfig | None = None,
    jobs: int = 2,
    stop_at_first: bool = False,
) -> Iterator[SimulationResult]:
    """Yield every seed's result in seed order; with ``stop_at_first``, stop at the first
    violation (the lowest failing seed)."""
    return run_seed_sets([(seeds, config or SimulationConfig())], jobs, stop_at_first)


def run_seed_sets(
    sets: Iterable[tuple[Iterable[int], SimulationConfig]],
    jobs: int = 2,
    stop_at_first: bool = False,
) -> Iterator[SimulationResult]:
    """:func:`run_seeds` for several (seeds, config) sets in one pool, set after set: no
    second pool to start, and no core idle at the end of one set while the next waits."""
    work = [(chunk, config, stop_at_first) for seeds, config in sets for chunk in _chunks(seeds)]
    if jobs <= 1:
        for item in work:
            results = _run_chunk(item)
            yield from results
            if stop_at_first and any(r.violation for r in results):
                return
        return
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for results in pool.imap(_run_chunk, work):
            yield from results
            if stop_at_first and any(r.violation for r in results):
                pool.terminate()
                return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketq.testing.raft_simulation")
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--replay", type=int, help="run one seed and print its trace")
    parser.add_argument("--unsafe", choices=[f.name for f in _unsafe_fields()], action="append")
    options = parser.parse_args(argv)
    flags = dict.fromkeys(options.unsafe or [], True)
    config = SimulationConfig(node_count=options.nodes, **flags)
    if options.replay is not None:
        result = run_seed(options.replay, config)
        print(result.report())
        return 1 if result.violation else 0
    started = time.perf_counter()
    seeds = range(options.first, options.first + options.seeds)
    failures = [r for r in run_seeds(seeds, config, options.jobs) if r.violation]
    elapsed = time.perf_counter() - started
    for result in sorted(failures, key=lambda r: r.seed)[:5]:
        print(result.report(), file=sys.stderr)
    print(
        f"{options.seeds} seeds ({options.nodes} nodes), {len(failures)} failed, "
        f"{elapsed:.1f} s, {options.seeds / elapsed:.0f} seeds/s"
    )
    return 1 if failures else 0


def _unsafe_fields() -> list[dataclasses.Field[object]]:
    return [f for f in dataclasses.fields(SimulationConfig) if f.name.startswith("unsafe_")]
