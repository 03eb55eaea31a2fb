"""Where a rocketq broker's CPU goes under one phase of bench/broker_bench.py (py-spy).

    .venv/bin/python bench/broker_profile.py --phase sync --senders 32 --seconds 8
    .venv/bin/python bench/broker_profile.py --phase batch
    .venv/bin/python bench/broker_profile.py --phase drain
    .venv/bin/python bench/broker_profile.py --phase sync --sync-flush

Starts ``rocketq server`` (or a SYNC_FLUSH broker) as bench/broker_bench.py does, attaches
``py-spy record`` (pip-installed into this venv when missing) to it, runs the phase's load
from this process, and prints the functions with the most samples: ``self`` (the frame on
top of the stack) and ``total`` (anywhere on it), in percent of the broker's samples. The
profile is of the server only; the load generator is not sampled.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broker_bench
import peers
from figures import Plan

from rocketq.remoting import event_loop


def py_spy() -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(exe) and importlib.util.find_spec("py_spy") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "py-spy"], check=True)
    return exe


def run_load(
    server: peers.Server, phase: str, senders: int, plan: Plan, record: Callable[[], None]
) -> None:
    """Run ``phase`` against ``server``, calling ``record()`` just before the measured part."""

    async def main() -> None:
        addr = f"127.0.0.1:{server.port}"
        probe = broker_bench.Probe(server.cpu_s)
        async with broker_bench.RemotingClient() as client:
            if phase == "sync":
                record()
                figs = await broker_bench.sync_phases(client, addr, "p", (senders,), plan, probe)
            elif phase == "batch":
                record()
                figs = [await broker_bench.batch_rocketq(client, server, plan, probe)]
            elif phase == "drain":
                batch = await broker_bench.batch_rocketq(client, server, plan, probe)
                record()
                figs = [
                    await broker_bench.drain_rocketq(client, addr, batch.messages + 1, plan, probe)
                ]
            else:
                record()
                figs = [await broker_bench.latency_rocketq(server, plan, os.urandom(plan.size))]
        for f in figs:
            print(f.row())

    event_loop.run(main())


# Frames on top of the stack of a thread that waits (py-spy's idle detection does not work in
# every container, so waits are dropped by name); Runner.run on top is the C event loop
# polling (uvloop runs its loop and socket IO in C).
IDLE_LEAVES = frozenset({"Condition.wait", "Event.wait", "_worker", "Runner.run", "sleep"})


def _function(frame: str) -> str:
    """``name (file:line)`` -> ``name (file)``: samples add up per function."""
    name, sep, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0]})" if sep else frame


def summarize(raw: str, top: int) -> None:
    self_count: collections.Counter[str] = collections.Counter()
    total_count: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [f.strip() for f in stack.split(";") if f.strip()]
        frames = [_function(f) for f in frames if not f.startswith(("process ", "thread "))]
        if not frames or frames[-1].split(" (")[0] in IDLE_LEAVES:
            continue
        samples += count
        self_count[frames[-1]] += count
        for frame in set(frames):
            total_count[frame] += count
    print(f"{samples} samples of running Python code (waits dropped)")
    for title, counter in (("self", self_count), ("total", total_count)):
        print(f"--- {title}")
        for frame, count in counter.most_common(top):
            print(f"{100 * count / max(samples, 1):6.1f}%  {frame}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phase", choices=("sync", "batch", "drain", "latency"), default="sync")
    ap.add_argument("--senders", type=int, default=32)
    ap.add_argument("--count", type=int, default=20_000)
    ap.add_argument("--sync-flush", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--rate", type=int, default=250, help="py-spy samples a second")
    ap.add_argument("--spy-args", default="", help="more py-spy record options")
    args = ap.parse_args()
    plan = Plan(1024, (args.senders,), args.count, args.count, 100_000, 30.0, 1_000, 5_000)
    spy = py_spy()
    make = peers.rocketq_sync_flush_broker if args.sync_flush else peers.rocketq_server
    with tempfile.TemporaryDirectory(prefix="broker-profile-") as d, make(d) as server:
        out = os.path.join(d, "profile.txt")
        recorders: list[subprocess.Popen[bytes]] = []

        def record() -> None:
            cmd = [spy, "record", "-p", str(server.proc.pid), "-r", str(args.rate)]
            cmd += ["--format", "raw", "-o", out, *args.spy_args.split()]
            devnull = subprocess.DEVNULL
            recorders.append(subprocess.Popen(cmd, stdout=devnull))

        try:
            run_load(server, args.phase, args.senders, plan, record)
        finally:
            for rec in recorders:
                rec.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                rec.wait(60)
        summarize(Path(out).read_text(), args.top)


if __name__ == "__main__":
    main()
