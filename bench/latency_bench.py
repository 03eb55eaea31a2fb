"""Sync-1 round trip and end-to-end latency of rocketq alone, with client and broker CPU.

    .venv/bin/python bench/latency_bench.py                  # 3 rounds of every phase
    .venv/bin/python bench/latency_bench.py --rounds 5 --phases producer,latency
    .venv/bin/python bench/latency_bench.py --profile producer   # cProfile of the client

The same-minute A/B companion of ``bench/broker_bench.py``'s ``sync 1`` and ``latency`` rows
(run that for the ratios against Redis and NATS). One ``rocketq server`` child process
(name server + broker, ASYNC_FLUSH); this process is the client. Phases, each run
``--rounds`` times in turn so a noisy minute hits all of them alike:

- ``remoting``: one sender, SEND_MESSAGE_V2 through a bare ``RemotingClient`` (the bench's
  ``sync 1`` row);
- ``producer``: one sender through the asyncio ``Producer`` (route lookup, fault strategy,
  header, result);
- ``latency``: the bench's latency phase (a paced Producer and a live PushConsumer).

Printed per round: TPS, RT p50 / p99 ms, the client's and the broker's CPU microseconds
per message (``time.process_time`` of this process, ``/proc`` of the server's group) and the
broker's voluntary context switches per message (every thread of its group: each is a thread
going to sleep, i.e. a hand-off; a figure the machine's load moves much less than the RTs).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broker_bench
import peers
from figures import Figures, Plan, Probe, run_senders

from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient

PHASES = ("remoting", "producer", "latency")


async def remoting_phase(server: peers.Server, plan: Plan, probe: Probe) -> Figures:
    addr = f"127.0.0.1:{server.port}"
    async with RemotingClient() as client:
        return (await broker_bench.sync_phases(client, addr, "remoting", (1,), plan, probe))[0]


async def producer_phase(server: peers.Server, plan: Plan, probe: Probe) -> Figures:
    namesrv = f"127.0.0.1:{server.namesrv_port}"
    body = os.urandom(plan.size)
    fig = Figures("producer", "sync 1")
    async with Producer("BenchLatencyPG", namesrv_addr=namesrv) as producer:
        await producer.send(Message("BenchProducer", body))  # creates the topic

        async def send(sender: int, seq: int) -> None:
            await producer.send(Message("BenchProducer", body))

        await run_senders(fig, 1, plan.sync_count(1), 1, plan.cap_s, send, probe)
    return fig


async def latency_phase(server: peers.Server, plan: Plan, probe: Probe) -> Figures:
    probe.start()
    fig = await broker_bench.latency_rocketq(server, plan, os.urandom(plan.size))
    probe.stop(fig)
    return fig


RUNNERS: dict[str, Callable[[peers.Server, Plan, Probe], Awaitable[Figures]]] = {
    "remoting": remoting_phase,
    "producer": producer_phase,
    "latency": latency_phase,
}


def context_switches(server: peers.Server) -> int:
    """Voluntary context switches of every thread of the server's process group."""
    total = 0
    for pid in peers._group_pids(server.proc.pid):
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            total += int(line.split()[1])
            except OSError:
                continue
    return total


def measured(phase: str, server: peers.Server, plan: Plan, profile: bool) -> None:
    """Run one phase; print its row with the client's CPU per message."""
    profiler = cProfile.Profile() if profile else None
    cpu0, t0 = time.process_time(), os.times()
    switches0 = context_switches(server)
    if profiler is not None:
        profiler.enable()
    fig = event_loop.run(RUNNERS[phase](server, plan, Probe(server.cpu_s)))
    if profiler is not None:
        profiler.disable()
    n = max(fig.messages, 1)
    client_us = (time.process_time() - cpu0) * 1e6 / n
    t1 = os.times()
    sys_us = (t1.system - t0.system) * 1e6 / n  # the kernel's share: writes, reads, epoll
    switches = (context_switches(server) - switches0) / max(fig.messages, 1)
    r = fig.row()
    print(
        f"{phase:<10}{r['messages']:>7}{r['tps']:>8}{r['rt_p50_ms']:>8}{r['rt_p99_ms']:>8}"
        f"{client_us:>12.1f}{sys_us:>10.1f}{r['cpu_us_per_msg']:>12}{switches:>10.2f}",
        flush=True,
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        if os.environ.get("PROFILE_OUT"):
            profiler.dump_stats(os.environ["PROFILE_OUT"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--count", type=int, default=3_000, help="sends of a sync-1 phase")
    ap.add_argument("--latency-count", type=int, default=3_000)
    ap.add_argument("--profile", choices=PHASES, help="cProfile this phase's client (1 round)")
    args = ap.parse_args()
    phases = [p for p in args.phases.split(",") if p]
    if args.profile:
        phases, args.rounds = [args.profile], 1
    plan = Plan(1024, (1,), args.count, args.count, 0, 30.0, 1_000, args.latency_count)
    print(f"{'phase':<10}{'msgs':>7}{'TPS':>8}{'p50':>8}{'p99':>8}{'client us':>12}"
          f"{'sys us':>10}{'broker us':>12}{'cs/msg':>10}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="latency-bench-") as d, peers.rocketq_server(d) as s:
        for _ in range(args.rounds):
            for phase in phases:
                measured(phase, s, plan, args.profile == phase)


if __name__ == "__main__":
    main()
