"""A lone send's whole broker CPU, per thread, user against kernel, against Redis Streams.

    PYTHONPATH=<tree>/src .venv/bin/python bench/lone_send_account.py [--seconds 10]
        [--systems rocketq,redis] [--strace] [--perf] [--gap-us 100]

Starts each server (``bench/peers.py``), lets it settle, then a child process sends 1 KiB
messages one at a time over a raw socket, each after the previous answer (the ``sync 1``
row: RocketMQ's SEND_MESSAGE_V2, Redis's ``XADD`` as ``broker_bench.py`` sends it), with
``--gap-us`` of the client's own spinning after each answer (``broker_bench.py``'s Python
clients take ~100 us a send: the server sleeps in between and wakes for each). Over the
window every thread's CPU is read from ``/proc/<pid>/task/*/schedstat`` (nanoseconds on the
CPU, so no 10 ms clock tick), its user/system split from ``task/*/stat`` and its voluntary
and involuntary context switches from ``task/*/status`` (``bench/proc_threads.py``). Printed
a message: each thread's CPU, user and kernel parts, and wake-ups, by Python thread name where
``py-spy dump`` gives it, and the total against the peer's. With ``--strace`` a second window runs
``strace -c -f -p <pid>`` and prints the syscalls a message (strace slows the server: its
rate and CPU are not counted); with ``--perf`` a window under ``perf record -e cpu-clock``
prints the CPU's share by shared object (kernel, interpreter, C modules) and by symbol.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from peers import Server, redis_server, rocketq_server
from proc_threads import by_name, python_names, sample_threads

SENDER = r"""
import socket, struct, sys, time
system, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
gap_s = float(sys.argv[4])
sock = socket.create_connection(("127.0.0.1", port))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
body = b"x" * 1024
if system == "redis":
    msg = b"*5\r\n$4\r\nXADD\r\n$6\r\nsync-0\r\n$1\r\n*\r\n$1\r\nb\r\n$1024\r\n" + body + b"\r\n"
    def answer():
        data = b""
        while not data.endswith(b"\r\n"):
            data += sock.recv(65536)
else:
    from rocketq.remoting.codec import encode
    from rocketq.remoting.protocol.codes import RequestCode
    from rocketq.testing.wire import send_request
    msg = encode(send_request("LoneAccount", body, queue_id=0, code=RequestCode.SEND_MESSAGE_V2))
    buf = b""
    def answer():
        global buf
        while True:
            if len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                buf = buf[4 + struct.unpack_from(">i", buf)[0]:]
                return
            buf += sock.recv(65536)
for _ in range(200):  # the topic created, caches warm
    sock.sendall(msg)
    answer()
print("ready", flush=True)
end = time.monotonic() + seconds
sent = 0
while time.monotonic() < end:
    sock.sendall(msg)
    answer()
    sent += 1
    until = time.perf_counter() + gap_s
    while time.perf_counter() < until:  # a client's own work between sends: the server idles
        pass
print(sent, flush=True)
"""

SERVERS: dict[str, Callable[[str], AbstractContextManager[Server]]] = {
    "rocketq": rocketq_server,
    "redis": redis_server,
}


@contextlib.contextmanager
def sender(system: str, port: int, seconds: float, gap_s: float) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SENDER, system, str(port), str(seconds), str(gap_s)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{system}: the sender did not start")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def account(system: str, server: Server, seconds: float, gap_s: float) -> float:
    """Print a message's CPU per thread; return the total us a message."""
    pid = server.proc.pid
    names = python_names(pid) if system == "rocketq" else {}
    with sender(system, server.port, seconds, gap_s) as proc:
        before, t0 = sample_threads(pid), time.monotonic()
        out, _ = proc.communicate(timeout=seconds + 30)
        after, elapsed = sample_threads(pid), time.monotonic() - t0
    sent = int(out.split()[-1])
    grown = by_name(before, after, names)
    cpu = Counter({name: f.cpu_ns for name, f in grown.items()})
    user = Counter({name: f.user_ticks for name, f in grown.items()})
    kern = Counter({name: f.system_ticks for name, f in grown.items()})
    vol = Counter({name: f.voluntary for name, f in grown.items()})
    invol = Counter({name: f.involuntary for name, f in grown.items()})
    print(f"\n{system}: {sent} sends in {elapsed:.1f} s ({sent / elapsed:,.0f}/s)")
    print(f"{'thread':<28} {'CPU us':>8} {'user':>7} {'kernel':>7} {'wakes':>7} {'preempt':>7}")
    for name, ns in cpu.most_common():
        if ns * 1e-3 / sent < 0.05 and not vol[name]:
            continue
        ticks = user[name] + kern[name]
        share = (user[name] / ticks) if ticks else 0.0
        us = ns * 1e-3 / sent
        print(
            f"{name:<28} {us:>8.1f} {us * share:>7.1f} {us * (1 - share):>7.1f}"
            f" {vol[name] / sent:>7.3f} {invol[name] / sent:>7.3f}"
        )
    total = sum(cpu.values()) * 1e-3 / sent
    ticks = sum(user.values()) + sum(kern.values())
    share = sum(user.values()) / ticks if ticks else 0.0
    print(
        f"{'total':<28} {total:>8.1f} {total * share:>7.1f} {total * (1 - share):>7.1f}"
        f" {sum(vol.values()) / sent:>7.3f} {sum(invol.values()) / sent:>7.3f}"
    )
    return total


def syscalls(system: str, server: Server, seconds: float, gap_s: float) -> None:
    """Print the server's syscalls a message (``strace -c -f``) over a second window."""
    run = sender(system, server.port, seconds + 2, gap_s)
    with run as proc, tempfile.NamedTemporaryFile() as log:
        trace = subprocess.Popen(
            ["strace", "-c", "-f", "-o", log.name, "-p", str(server.proc.pid)],
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        out, _ = proc.communicate(timeout=seconds + 60)
        trace.terminate()
        trace.wait(30)
        sent = int(out.split()[-1])
        print(f"\n{system} under strace: {sent} sends; calls a send (errors):")
        with open(log.name) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and parts[3].isdigit() and parts[-1] != "total":
                    errors = parts[4] if len(parts) == 6 else "0"
                    print(f"  {parts[-1]:<16} {int(parts[3]) / sent:7.3f} ({errors})")


def profile(system: str, server: Server, seconds: float, gap_s: float) -> None:
    """Print where the server's CPU goes by shared object (``perf record -e cpu-clock``: the
    kernel's part, the interpreter's, the C modules'), over a second window."""
    run = sender(system, server.port, seconds + 2, gap_s)
    with run as proc, tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "perf.data")
        rec = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", data,
             "-p", str(server.proc.pid), "--", "sleep", str(seconds)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        rec.wait(seconds + 60)
        proc.communicate(timeout=seconds + 60)
        for sort in ("dso", "sym"):
            report = subprocess.run(
                ["perf", "report", "-i", data, "--stdio", "--sort", sort, "--percent-limit", "1"],
                capture_output=True, text=True, timeout=120,
            ).stdout  # fmt: skip
            print(f"\n{system}: perf report --sort {sort}")
            print("\n".join(line for line in report.splitlines() if line and line[0] != "#"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--settle-s", type=float, default=3.0)
    parser.add_argument("--systems", default="rocketq,redis")
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--perf", action="store_true")
    parser.add_argument(
        "--gap-us", type=float, default=0.0,
        help="the client spins this long after each answer (a client's own work: the server idles)",
    )  # fmt: skip
    args = parser.parse_args()
    totals = {}
    for system in args.systems.split(","):
        with tempfile.TemporaryDirectory() as data_dir, SERVERS[system](data_dir) as server:
            time.sleep(args.settle_s)
            gap_s = args.gap_us * 1e-6
            totals[system] = account(system, server, args.seconds, gap_s)
            if args.strace:
                syscalls(system, server, args.seconds, gap_s)
            if args.perf:
                profile(system, server, args.seconds, gap_s)
    if "redis" in totals and "rocketq" in totals:
        ratio = totals["redis"] / totals["rocketq"]
        print(f"\nbroker CPU a send: rocketq {totals['rocketq']:.1f} us, redis "
              f"{totals['redis']:.1f} us (redis / rocketq {ratio:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
