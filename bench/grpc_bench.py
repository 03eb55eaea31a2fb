"""The gRPC path: the official Python 5.x client against ``rocketq server --grpc-port`` (the
endpoint in the broker's process, local mode), beside rocketq's own client over remoting
against a broker run with ``ROCKETQ_NATIVE=0``, in the same run.

    .venv/bin/python bench/grpc_bench.py [--quick]     # or broker_bench.py --systems grpc

Phases, 1 KiB bodies, each for both paths: ``sync 32`` (32 senders, each waiting for its
send's answer; the 5.x client's threads in its own process, rocketq's asyncio Producer) and
``receive+ack`` (one SimpleConsumer receiving 32 at a time and acking each message; POP
underneath both). The load runs in other processes than the servers; the CPU us/msg column is
the server's process group (broker, and the endpoint with it), read around each phase. The
targets (issue 19): the gRPC path at most 80 us/msg and 1.5x the remoting path's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from figures import Figures, Probe

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer, SimpleConsumer
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting import event_loop
from rocketq.testing.broker_process import free_port_pair

REPO = Path(__file__).resolve().parents[1]
RMQ5_PYTHON = Path(os.environ.get("ROCKETQ_RMQ5_PYTHON", REPO / ".venv-rmq5" / "bin" / "python"))
TOPIC, GROUP, SENDERS = "BenchGrpc", "BenchGrpcG", 32


@contextlib.contextmanager
def server(data_dir: str, name: str, *, grpc: bool, native: bool) -> Iterator[peers.Server]:
    """``rocketq server`` (name server + broker [+ gRPC endpoint]) in a child process."""
    ns_port, broker_port = peers.free_port(), free_port_pair()  # broker + HA port
    args = [
        os.path.join(os.path.dirname(sys.executable), "rocketq"), "server",
        "--store", os.path.join(data_dir, "store"), "--namesrv-port", str(ns_port),
        "--broker-port", str(broker_port), "--host", "127.0.0.1",
    ]  # fmt: skip
    grpc_port = peers.free_port() if grpc else 0
    args += ["--grpc-port", str(grpc_port)]  # 0 (remoting path): an idle endpoint, any port
    env = {**os.environ, **({} if native else {"ROCKETQ_NATIVE": "0"})}
    proc = peers._spawn(args, os.path.join(data_dir, f"{name}.log"), env)
    srv = peers.Server(name, broker_port, proc, ns_port)
    try:
        try:
            peers.wait_for_port(broker_port, proc, peers.START_TIMEOUT_S)
            if grpc:
                peers.wait_for_port(grpc_port, proc, peers.START_TIMEOUT_S)
        except RuntimeError:
            print(Path(data_dir, f"{name}.log").read_text()[-3000:], file=sys.stderr)
            raise
        srv.grpc_port = grpc_port  # type: ignore[attr-defined]
        yield srv
    finally:
        srv.stop()


async def create_topic(srv: peers.Server) -> None:
    async with AsyncAdminClient(f"127.0.0.1:{srv.namesrv_port}") as admin:
        config = TopicConfig(
            topic_name=TOPIC,
            read_queue_nums=4,
            write_queue_nums=4,
            attributes={"+message.type": "NORMAL"},
        )
        await admin.create_and_update_topic_config(f"127.0.0.1:{srv.port}", config)


async def grpc_path(srv: peers.Server, count: int, size: int) -> list[Figures]:
    """The official client's phases; the server's CPU read at each start/stop line."""
    await create_topic(srv)
    endpoint = f"127.0.0.1:{srv.grpc_port}"  # type: ignore[attr-defined]
    proc = await asyncio.create_subprocess_exec(
        str(RMQ5_PYTHON), str(Path(__file__).with_name("rmq5_load.py")), "--endpoint", endpoint,
        "--topic", TOPIC, "--group", GROUP, "--count", str(count), "--senders", str(SENDERS),
        "--size", str(size), stdout=asyncio.subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert proc.stdout is not None
    out, probe = [], Probe(srv.cpu_s)
    async for line in proc.stdout:
        if not line.startswith(b"{"):
            continue
        event = json.loads(line)
        if event["state"] == "start":
            probe.start()
            continue
        fig = Figures("grpc", event["phase"], event["messages"], event["seconds"])
        fig.rts_ms = event["rts_ms"]
        probe.stop(fig)
        out.append(fig)
    assert await proc.wait() == 0, "rmq5_load.py failed"
    return out


async def remoting_path(srv: peers.Server, count: int, size: int) -> list[Figures]:
    """rocketq's asyncio Producer and SimpleConsumer over remoting, the same phases."""
    await create_topic(srv)
    namesrv, body, probe = f"127.0.0.1:{srv.namesrv_port}", os.urandom(size), Probe(srv.cpu_s)
    async with Producer("BenchGrpcP", namesrv_addr=namesrv) as producer:
        await producer.send(Message(TOPIC, body))  # routes before timing
        fig = Figures("remoting", f"sync {SENDERS}")
        todo = iter(range(count - 1))

        async def sender() -> None:
            for _ in todo:
                t0 = time.perf_counter()
                await producer.send(Message(TOPIC, body))
                fig.rts_ms.append((time.perf_counter() - t0) * 1000)

        probe.start()
        start = time.perf_counter()
        await asyncio.gather(*(sender() for _ in range(SENDERS)))
        fig.seconds, fig.messages = time.perf_counter() - start, len(fig.rts_ms)
        probe.stop(fig)
    consumer = SimpleConsumer(GROUP, namesrv_addr=namesrv)
    consumer.subscribe(TOPIC)
    await consumer.start()
    try:
        got = Figures("remoting", "receive+ack")
        probe.start()
        start = time.perf_counter()
        while got.messages < count and time.perf_counter() - start < 60:
            t0 = time.perf_counter()
            msgs = await consumer.receive(32, 30.0)
            for msg in msgs:
                await consumer.ack(msg)
            got.rts_ms.append((time.perf_counter() - t0) * 1000)
            got.messages += len(msgs)
        got.seconds = time.perf_counter() - start
        probe.stop(got)
    finally:
        await consumer.shutdown()
    return [fig, got]


def run(count: int, size: int = 1024) -> list[Figures]:
    """Both paths, each against its own server, one after the other."""
    rows: list[Figures] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-grpc-") as d,
        server(d, "grpc", grpc=True, native=True) as srv,
    ):
        rows += event_loop.run(grpc_path(srv, count, size))
    with (
        tempfile.TemporaryDirectory(prefix="bench-remoting-") as d,
        server(d, "remoting", grpc=False, native=False) as srv,
    ):
        rows += event_loop.run(remoting_path(srv, count, size))
    return rows


def print_rows(rows: list[Figures]) -> None:
    print(
        f"{'path':<10}{'phase':<13}{'msgs':>7}{'TPS':>8}{'avg ms':>9}{'p99':>9}{'cpu us/msg':>12}"
    )
    for f in rows:
        r = f.row()
        print(
            f"{r['system']:<10}{r['phase']:<13}{r['messages']:>7}{r['tps']:>8}"
            f"{r['rt_avg_ms']:>9}{r['rt_p99_ms']:>9}{r['cpu_us_per_msg']:>12}"
        )
    cpu = {(f.system, f.phase): f.row()["cpu_us_per_msg"] for f in rows}
    for phase in (f"sync {SENDERS}", "receive+ack"):
        ours, base = cpu.get(("grpc", phase)), cpu.get(("remoting", phase))
        if ours and base:
            verdict = "ok" if ours <= 80 and ours <= 1.5 * base else "over target"
            print(
                f"grpc / remoting (ROCKETQ_NATIVE=0) CPU, {phase}: {ours / base:.2f}x"
                f" ({ours} vs {base} us/msg; target <= 80 us and <= 1.5x: {verdict})"
            )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts (smoke run)")
    ap.add_argument("--count", type=int, default=0, help="messages per phase")
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    if not RMQ5_PYTHON.exists():
        ap.error(f"{RMQ5_PYTHON} missing: run `make interop-rmq5` (or set ROCKETQ_RMQ5_PYTHON)")
    count = args.count or (1_000 if args.quick else 10_000)
    print_rows(run(count, args.size))


if __name__ == "__main__":
    main()
