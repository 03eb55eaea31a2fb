"""A/B of the broker's CPU per message: two source trees, one command, runs interleaved.

    .venv/bin/python bench/broker_ab.py --base <tree> --branch <tree> [--runs 3]

A tree is a directory holding ``src/rocketq`` and ``bench/`` (``git archive REV | tar -x -C
DIR``, plus the compiled ``src/rocketq/_native/_record*.so`` copied in). Each run is
``bench/broker_bench.py --systems rocketq,rocketq-sync --json`` of that tree with
``PYTHONPATH`` pointing at its ``src``, so each side runs its own broker and its own load
generator. Runs alternate base, branch, base, branch... so a drift of the machine's load falls
on both sides. Printed per phase: the median of the runs' broker CPU microseconds per message
and TPS, and branch / base.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

RUN_TIMEOUT_S = 900
Rows = dict[str, dict[str, float]]


def run_once(tree: Path) -> Rows:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    bench = tree / "bench" / "broker_bench.py"
    cmd = [sys.executable, str(bench), "--systems", "rocketq,rocketq-sync", "--json"]
    done = subprocess.run(
        cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{bench} exited {done.returncode}:\n{done.stderr[-3000:]}")
    out = done.stdout
    rows: Rows = {}
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[f"{row['system']} {row['phase']}"] = row
    if not rows:
        raise SystemExit(f"{bench} printed no JSON rows:\n{out}")
    return rows


def run_with_retry(tree: Path) -> Rows:
    """One run; a run whose server did not start (a port taken between the bench's pick and
    the server's bind, on a busy machine) is tried again, twice at most."""
    for _ in range(2):
        try:
            return run_once(tree)
        except SystemExit as exc:
            print(f"run failed, trying again: {str(exc)[-300:]}", flush=True)
    return run_once(tree)


def median_of(runs: list[Rows], phase: str, key: str) -> float:
    return statistics.median(float(r[phase][key]) for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--branch", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs: dict[str, list[Rows]] = {"base": [], "branch": []}
    for i in range(args.runs):
        for side in ("base", "branch"):
            print(f"run {i + 1}/{args.runs}: {side}", flush=True)
            runs[side].append(run_with_retry(getattr(args, side).resolve()))
    header = f"{'phase':22} {'base us/msg':>12} {'branch':>8} {'ratio':>6}"
    header += f" {'base TPS':>9} {'branch':>8}"
    print(f"{header}   (medians of {args.runs} runs each)")
    for phase in runs["base"][0]:
        base = median_of(runs["base"], phase, "cpu_us_per_msg")
        branch = median_of(runs["branch"], phase, "cpu_us_per_msg")
        ratio = f"{branch / base:6.2f}" if base else "     -"
        base_tps = median_of(runs["base"], phase, "tps")
        branch_tps = median_of(runs["branch"], phase, "tps")
        print(f"{phase:22} {base:12.1f} {branch:8.1f} {ratio} {base_tps:9.0f} {branch_tps:8.0f}")


if __name__ == "__main__":
    main()
