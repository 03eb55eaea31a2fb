"""Batch 32 with and without index keys: the broker's user and system CPU a message.

    .venv/bin/python bench/batch_keys_bench.py                 # 300,000 messages a row
    .venv/bin/python bench/batch_keys_bench.py --messages 100000 --repeat 3

``bench/broker_bench.py``'s batch phase (8 senders of 32 x 1 KiB SEND_BATCH_MESSAGE requests
against ``rocketq server``) twice per round, each against a fresh server: ``plain``, its
messages as broker_bench sends them (no UNIQ_KEY, no KEYS: no index entry), and ``keyed``,
each message with a UNIQ_KEY and one KEYS word, as rocketq's and RocketMQ's producers send
them (MessageClientIDSetter sets UNIQ_KEY on every message): two index entries a message,
built on the dispatch. Printed per row: TPS, MB/s, the server's CPU per message split into
user and system time (the system share is mostly the first touch of the commitlog's mapped
pages, which varies with the machine's memory), the load generator's own CPU per message,
and keyed / plain. Run it on two trees (``PYTHONPATH=<tree>/src``) to compare them.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broker_bench
import peers
from figures import Plan, Probe

from rocketq.common.message import Message
from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient

UNIQ_KEY = "UNIQ_KEY"
KEYS = "KEYS"


def _split_cpu_s(server: peers.Server) -> tuple[float, float]:
    """User and system CPU seconds of the server's process group."""
    user = system = 0
    for pid in peers._group_pids(server.proc.pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        user += int(fields[11])
        system += int(fields[12])
    tick = os.sysconf("SC_CLK_TCK")
    return user / tick, system / tick


def _keyed(encode: object) -> object:
    """broker_bench's batch encoder with a UNIQ_KEY and a KEYS word on every message."""

    def encode_keyed(msgs: list[Message]) -> bytes:
        out = []
        for i, m in enumerate(msgs):
            keyed = Message(m.topic, m.body)
            keyed.properties = dict(m.properties)
            keyed.properties[UNIQ_KEY] = f"7F0000010B6F18B4AAC2{i:012X}"
            keyed.properties[KEYS] = f"order-{i}"
            out.append(keyed)
        return encode(out)  # type: ignore[operator,no-any-return]

    return encode_keyed


def run_row(keyed: bool, messages: int) -> dict[str, float]:
    plan = Plan(1024, (32,), 2_000, 20_000, messages, 30.0, 1_000, 5_000)
    plain_encode = broker_bench.encode_batch_messages
    if keyed:
        broker_bench.encode_batch_messages = _keyed(plain_encode)  # type: ignore[assignment]
    try:
        with (
            tempfile.TemporaryDirectory(prefix="batch-keys-") as d,
            peers.rocketq_server(d) as server,
        ):

            async def main() -> dict[str, float]:
                async with RemotingClient() as client:
                    u0, s0 = _split_cpu_s(server)
                    r0 = resource.getrusage(resource.RUSAGE_SELF)
                    fig = await broker_bench.batch_rocketq(
                        client, server, plan, Probe(server.cpu_s)
                    )
                    r1 = resource.getrusage(resource.RUSAGE_SELF)
                    u1, s1 = _split_cpu_s(server)
                n = fig.messages
                return {
                    "tps": fig.tps,
                    "mb_s": fig.tps * plan.size / 1e6,
                    "cpu": fig.cpu_s * 1e6 / n,
                    "user": (u1 - u0) * 1e6 / n,
                    "sys": (s1 - s0) * 1e6 / n,
                    "load": (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e6 / n,
                }

            return event_loop.run(main())
    finally:
        broker_bench.encode_batch_messages = plain_encode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    rows: dict[str, list[dict[str, float]]] = {"plain": [], "keyed": []}
    head = f"{'row':6} {'TPS':>8} {'MB/s':>6} {'cpu us/msg':>10} {'user':>5} {'sys':>5}"
    head += f" {'load gen':>8}"
    for i in range(args.repeat):
        print(f"round {i + 1} of {args.repeat}\n{head}", flush=True)
        for name in rows:
            r = run_row(name == "keyed", args.messages)
            rows[name].append(r)
            print(
                f"{name:6} {r['tps']:8.0f} {r['mb_s']:6.1f} {r['cpu']:10.1f} {r['user']:5.1f}"
                f" {r['sys']:5.1f} {r['load']:8.2f}",
                flush=True,
            )
    med = {
        name: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        for name, runs in rows.items()
    }
    print(
        f"medians of {args.repeat}: "
        + ", ".join(
            f"{name} {m['tps']:.0f} msg/s ({m['mb_s']:.0f} MB/s) at {m['cpu']:.1f} us/msg"
            for name, m in med.items()
        )
    )
    print(
        f"keyed / plain: CPU a message {med['keyed']['cpu'] / med['plain']['cpu']:.2f}x, "
        f"TPS {med['keyed']['tps'] / med['plain']['tps']:.2f}x"
    )


if __name__ == "__main__":
    main()
