"""The processes and helpers of bench/scale_bench.py: a name server and a broker as their own
processes on 127.0.0.1 (``servers``), their RSS and CPU from /proc, one request (``call``),
and the tables printed."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode

TIMEOUT_S = 120.0
BROKER_NAME = "broker-scale"
CLUSTER = "DefaultCluster"


# ----------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Proc:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


BENCH_DIR = Path(__file__).resolve().parent


def _spawn(argv: list[str], port: int, log: Path, gc_trace: Path | None = None) -> Proc:
    code = "from rocketq.cli.main import cli; cli()"
    if gc_trace is not None:  # bench/gc_trace.py: each full collection to a file
        code = (
            f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import gc_trace; "
            f"gc_trace.install({str(gc_trace)!r}); {code}"
        )
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-5:]
            raise RuntimeError(f"{argv[0]} exited with {proc.returncode}: {tail}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return Proc(proc, port)
        time.sleep(0.2)
    proc.kill()
    raise TimeoutError(f"{argv[0]} not listening after 60 s")


@contextlib.contextmanager
def servers(
    work: Path, conf: dict[str, str] | None = None, gc_trace: bool = False
) -> Iterator[tuple[Proc, Proc]]:
    """A name server and a broker registered with it, stopped (SIGTERM, by PID) after; with
    ``gc_trace`` their collections go to ``work/ns.gc`` and ``work/broker.gc``."""
    ns_port, broker_port = free_port(), free_port()
    ns_argv = ["namesrv", "--host", "127.0.0.1", "-p", str(ns_port)]
    ns = _spawn(ns_argv, ns_port, work / "ns.log", work / "ns.gc" if gc_trace else None)
    broker: Proc | None = None
    try:
        lines = {
            "brokerName": BROKER_NAME,
            "brokerClusterName": CLUSTER,
            "listenPort": str(broker_port),
            "haListenPort": str(free_port()),
            "brokerIP1": "127.0.0.1",
            "namesrvAddr": ns.addr,
            "storePathRootDir": str(work / "store"),
            **(conf or {}),
        }
        path = work / "broker.conf"
        path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
        argv = ["broker", "--host", "127.0.0.1", "-c", str(path)]
        trace = work / "broker.gc" if gc_trace else None
        broker = _spawn(argv, broker_port, work / "broker.log", trace)
        yield ns, broker
    finally:
        for p in (broker, ns):
            if p is not None and p.proc.poll() is None:
                p.proc.terminate()
                try:
                    p.proc.wait(120)
                except subprocess.TimeoutExpired:
                    p.proc.kill()
                    p.proc.wait(10)


async def call(
    client: RemotingClient, addr: str, code: int, fields: dict[str, str] | None = None, body=b""
) -> RemotingCommand:
    request = RemotingCommand.create_request(code, fields or {}, body)
    response = await client.invoke(addr, request, TIMEOUT_S)
    if response.code not in (ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST):
        raise RuntimeError(f"code {code} answered {response.code}: {response.remark}")
    return response


def create_fields(topic: str, queues: int) -> dict[str, str]:
    return {
        "topic": topic,
        "defaultTopic": "TBW102",
        "readQueueNums": str(queues),
        "writeQueueNums": str(queues),
        "perm": "6",
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0",
        "order": "false",
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(title: str, header: list[str], rows: list[list[object]]) -> None:
    print(f"\n{title}")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    sys.stdout.flush()
