"""Where a latency message's time goes: the client before its send's write, the broker and
the loopback between that write and the read of the pull's answer, the client after it.

    .venv/bin/python bench/latency_parts.py [--latency-count 5000] [--rounds 2]

The latency phase of ``bench/broker_bench.py`` (a paced Producer and a live PushConsumer on
``rocketq server``, a child process) with four timestamps a message, taken in this process:

- ``sent``: the stamp in the body (before ``Producer.send``);
- ``write``: the send's frame handed to the transport (``FrameWriter._write``);
- ``read``: the start of the socket read that brought the pull's answer
  (``ChannelProtocol.data_received``, the last one before the listener);
- ``listener``: the listener has the message (``peer_load.record_latency``); also this
  thread's CPU time since that read (``post cpu``: the rest of ``post`` is waiting for a core).

Printed per round: p50 / p90 / p99 / max microseconds of each part (``pre`` = write - sent,
``broker`` = read - write, ``post`` = listener - read), the part that dominates the slowest
1 % of messages, and this process's garbage collections inside the paced window (count,
median and max pause per generation, and how many of the slowest 1 % were sent during one).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broker_bench
import peer_load
import peers
from figures import Figures, Plan

from rocketq.remoting import event_loop
from rocketq.remoting.channel_protocol import ChannelProtocol
from rocketq.remoting.channel_writer import FrameWriter
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand


class Parts:
    """The timestamps of one round, filled by the wrappers installed by :func:`install`."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.writes: dict[float, float] = {}  # stamp -> the send's write
        self.last_read = 0.0
        self.last_read_cpu = 0.0
        self.post_cpu: list[float] = []  # this thread's CPU from the read to the listener
        self.rows: list[tuple[float, float, float, float]] = []  # sent, write, read, listener
        self.gcs: list[tuple[int, float, float]] = []  # generation, start, end
        self._gc_start = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gcs.append((info["generation"], self._gc_start, time.perf_counter()))


PARTS = Parts()


def install() -> None:
    write = FrameWriter._write
    received = ChannelProtocol.data_received
    record = peer_load.record_latency

    def timed_write(self: FrameWriter, cmd: RemotingCommand, *, burst: bool = False) -> None:
        if cmd.code == RequestCode.SEND_MESSAGE_V2 and not cmd.is_response and len(cmd.body) >= 8:
            PARTS.writes[peer_load.STAMP.unpack_from(cmd.body)[0]] = time.perf_counter()
        write(self, cmd, burst=burst)

    def timed_received(self: ChannelProtocol, data: bytes) -> None:
        PARTS.last_read = time.perf_counter()
        PARTS.last_read_cpu = time.thread_time()
        received(self, data)

    def timed_record(fig: Figures, body: bytes) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        t_sent = peer_load.STAMP.unpack_from(body)[0]
        t_write = PARTS.writes.pop(t_sent, None)
        if t_write is not None:
            PARTS.rows.append((t_sent, t_write, PARTS.last_read, now))
            PARTS.post_cpu.append((cpu - PARTS.last_read_cpu) * 1e6)
        record(fig, body)

    FrameWriter._write = timed_write  # type: ignore[method-assign]
    ChannelProtocol.data_received = timed_received  # type: ignore[method-assign]
    peer_load.record_latency = timed_record
    gc.callbacks.append(PARTS.on_gc)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def report(fig: Figures) -> None:
    rows = PARTS.rows
    if not rows:
        print("no message timed")
        return
    parts = {
        "pre": [(w - s) * 1e6 for s, w, _, _ in rows],
        "broker": [(r - w) * 1e6 for _, w, r, _ in rows],
        "post": [(e - r) * 1e6 for _, _, r, e in rows],
        "total": [(e - s) * 1e6 for s, _, _, e in rows],
    }
    print(f"{len(rows)} of {fig.messages} messages timed; us   p50     p90     p99     max")
    for name, values in parts.items():
        print(
            f"  {name:<8}{pct(values, 0.5):>12.0f}{pct(values, 0.9):>8.0f}"
            f"{pct(values, 0.99):>8.0f}{max(values):>8.0f}"
        )
    cpu = PARTS.post_cpu
    print(
        f"  post cpu{pct(cpu, 0.5):>12.0f}{pct(cpu, 0.9):>8.0f}"
        f"{pct(cpu, 0.99):>8.0f}{max(cpu):>8.0f}"
    )
    totals = parts["total"]
    cut = pct(totals, 0.99)
    slow = [i for i, t in enumerate(totals) if t >= cut]
    share = {name: sum(parts[name][i] for i in slow) for name in ("pre", "broker", "post")}
    whole = sum(share.values()) or 1.0
    print(
        f"  slowest 1 % ({len(slow)}): "
        + ", ".join(f"{n} {v / whole:.0%}" for n, v in share.items())
    )
    t0, t1 = rows[0][0], rows[-1][3]
    inside = [g for g in PARTS.gcs if t0 <= g[1] <= t1]
    for gen in (0, 1, 2):
        pauses = [(e - s) * 1e6 for g, s, e in inside if g == gen]
        if pauses:
            print(
                f"  gc gen{gen}: {len(pauses)} in the phase, median {pct(pauses, 0.5):.0f} us,"
                f" max {max(pauses):.0f} us"
            )
    hit = sum(1 for i in slow if any(s <= rows[i][3] and e >= rows[i][0] for _, s, e in inside))
    print(f"  slowest 1 % overlapping a collection: {hit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--latency-count", type=int, default=5_000)
    args = ap.parse_args()
    install()
    plan = Plan(1024, (1,), 1, 1, 0, 30.0, 1_000, args.latency_count)
    with tempfile.TemporaryDirectory(prefix="latency-parts-") as d, peers.rocketq_server(d) as s:
        for _ in range(args.rounds):
            PARTS.reset()
            fig = event_loop.run(broker_bench.latency_rocketq(s, plan, os.urandom(plan.size)))
            row = fig.row()
            print(f"latency p50 {row['rt_p50_ms']} ms, p99 {row['rt_p99_ms']} ms")
            report(fig)


if __name__ == "__main__":
    main()
