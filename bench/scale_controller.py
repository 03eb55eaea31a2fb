"""The ``topics-controller`` curve of bench/scale_bench.py: topic creates in a controller-mode
group, answered once the in-sync slaves hold them (broker/metadata_acks.py,
broker/topic_config_feed.py).

``rocketq server --cluster controller`` runs as its own process (a name server with an embedded
controller, and three broker processes in controller mode with the controller profile); the
bench finds the group's master from the controller, grows the master's table with
UPDATE_AND_CREATE_TOPIC_LIST to each size, and at each size times ``creates`` creates with
UPDATE_AND_CREATE_TOPIC (each answered after both slaves reported the new version), checks
that every slave holds every probe topic, how long the route took to have it, and how many
full registrations the brokers logged in an idle window after (broker/registration.py: none
while the name server is current).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from scale_bench import grow_to, routed
from scale_servers import Proc, call, create_fields, pct, table

from rocketq.broker.controller_mode.controller_client import ControllerClient
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode

GROUP = "broker-a"
NAMESRV_LINE = re.compile(r"name server listening on (\S+):(\d+), controller on (\S+)")
BROKER_LINE = re.compile(r"broker \S+ (n\d) pid (\d+) on (\S+):(\d+)")
START_S = 120.0
#: an idle window after each size's creates: two of the profile's 5 s registration periods
IDLE_S = 10.0
#: outer_api's line for a full registration past 20,000 topics (so from that size on)
FULL_LINE = "registration body of"


def _pid_proc(pid: int, port: int) -> Proc:
    """A Proc over a process this bench did not spawn itself (a broker child): RSS only."""
    return Proc(proc=_Pid(pid), port=port)  # type: ignore[arg-type]


class _Pid:
    def __init__(self, pid: int) -> None:
        self.pid = pid


def _start(work: Path) -> tuple[subprocess.Popen[bytes], list[str]]:
    """The server process and its output once it named its three brokers."""
    log = work / "server.log"
    argv = ["server", "--cluster", "controller", "--store", str(work / "store")]
    argv += ["--namesrv-port", "0", "--broker-port", "0", "--host", "127.0.0.1"]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-c", "from rocketq.cli.main import cli; cli()", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        lines = log.read_text(errors="replace").splitlines()
        if sum(1 for line in lines if BROKER_LINE.search(line)) >= 3:
            return server, lines
        if server.poll() is not None:
            raise RuntimeError(f"rocketq server exited {server.returncode}: {lines[-5:]}")
        time.sleep(0.2)  # another process's output: nothing to await
    server.kill()
    raise TimeoutError(f"rocketq server --cluster controller not up after {START_S:.0f} s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(120)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


@contextlib.asynccontextmanager
async def controller_group(work: Path) -> AsyncIterator[tuple[Proc, Proc, list[Proc]]]:
    """(name server, master, slaves) of ``rocketq server --cluster controller`` once the
    group's three brokers are in sync; stopped with SIGTERM (by PID) after."""
    server, lines = await asyncio.to_thread(_start, work)
    ctl: ControllerClient | None = None
    try:
        ns_match = next(m for m in map(NAMESRV_LINE.search, lines) if m)
        ns = _pid_proc(server.pid, int(ns_match.group(2)))
        brokers = {
            f"{m.group(3)}:{m.group(4)}": _pid_proc(int(m.group(2)), int(m.group(4)))
            for m in map(BROKER_LINE.search, lines)
            if m
        }
        ctl = ControllerClient([ns_match.group(3)])
        deadline = time.monotonic() + START_S
        while True:
            with contextlib.suppress(Exception):
                view = await ctl.get_replica_info(GROUP)
                if view.has_master and len(view.sync_state_set) == len(brokers):
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("the controller-mode group did not get 3 in-sync replicas")
            await asyncio.sleep(0.2)  # the controller's view, in another process
        master = brokers[view.master_address]
        slaves = [p for addr, p in brokers.items() if addr != view.master_address]
        yield ns, master, slaves
    finally:
        if ctl is not None:
            await ctl.shutdown()
        await asyncio.to_thread(_stop, server)


def full_registrations(work: Path) -> int:
    """Full registrations the group's brokers logged so far (their broker.log files)."""
    return sum(
        log.read_text(errors="replace").count(FULL_LINE)
        for log in (work / "store").glob("*/broker.log")
    )


async def slave_has(client: RemotingClient, slave: Proc, names: list[str]) -> bool:
    got = await call(client, slave.addr, RequestCode.GET_ALL_TOPIC_CONFIG)
    held = fastjson.loads(bytes(got.body or b""), "topic configs").get("topicConfigTable") or {}
    return all(name in held for name in names)


async def topics_controller_curve(sizes: list[int], creates: int, work: Path) -> None:
    rows: list[list[object]] = []
    async with controller_group(work) as (ns, master, slaves), RemotingClient() as client:
        have = 0
        for size in sizes:
            have = await grow_to(client, master, have, size)
            create_ms, route_ready_ms, names = [], [], []
            for i in range(creates):
                name = f"Probe{size:07d}_{i:03d}"
                names.append(name)
                started = time.perf_counter()
                await call(client, master.addr, RequestCode.UPDATE_AND_CREATE_TOPIC,
                           create_fields(name, 8))  # fmt: skip
                answered = time.perf_counter()
                create_ms.append((answered - started) * 1000)
                await routed(client, ns, name)
                route_ready_ms.append((time.perf_counter() - answered) * 1000)
            have += creates
            held = [await slave_has(client, s, names) for s in slaves]
            before = full_registrations(work)
            await asyncio.sleep(IDLE_S)  # a window of periodic rounds, not a wait for an event
            idle_full = full_registrations(work) - before if size >= 20_000 else "-"
            rows.append(
                [
                    f"{size:,}",
                    f"{statistics.median(create_ms):.2f} / {pct(create_ms, 0.99):.2f}",
                    f"{max(route_ready_ms):.1f}",
                    "yes" if all(held) else f"NO {held}",
                    f"{master.rss_mb():.0f}",
                    " / ".join(f"{s.rss_mb():.0f}" for s in slaves),
                    idle_full,
                ]
            )
            print(f"  topics-controller {size:,} done", file=sys.stderr, flush=True)
    table(
        "topics x 8 queues, controller mode (3 brokers; a create waits for both in-sync slaves)",
        [
            "topics",
            "create p50 / p99 ms",
            "route has it, max ms",
            "slaves hold every probe",
            "master RSS MB",
            "slaves RSS MB",
            f"full registrations in {IDLE_S:.0f} s idle",
        ],
        rows,
    )
