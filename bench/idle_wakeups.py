"""The broker's thread wake-ups and CPU when idle (and at a steady send rate), per thread.

    PYTHONPATH=<tree>/src .venv/bin/python bench/idle_wakeups.py [--seconds 10] [--rate 1000]

Starts ``rocketq server`` (``bench/peers.py``), lets it settle (``--settle-s``), then reads
every thread's voluntary context switches (``/proc/<pid>/task/*/status``: each is a wait that
ended, so a wake-up and a GIL acquisition) and user + system CPU (``task/*/stat``) before and
after ``--seconds`` (``bench/proc_threads.py``). With ``--rate`` a child process sends 1 KiB
SEND_MESSAGE_V2 requests one at a time at that many a second meanwhile (the latency row's
rate; a rate it cannot reach makes it a ``sync 1`` row: one send in flight, as fast as the
broker answers). Printed: wake-ups a second of each thread (by its Python name where ``py-spy
dump`` gives it; threads of one name summed) and the broker's CPU ms a second.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

from peers import rocketq_server
from proc_threads import by_name, python_names, sample_threads

SENDER = r"""
import socket, struct, sys, time
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.testing.wire import send_request

port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
send = encode(send_request("IdleWake", b"x" * 1024, queue_id=0, code=RequestCode.SEND_MESSAGE_V2))
sock = socket.create_connection(("127.0.0.1", port))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = b""

def answer():
    global buf
    while True:
        if len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
            buf = buf[4 + struct.unpack_from(">i", buf)[0]:]
            return
        buf += sock.recv(65536)

for _ in range(20):  # the topic created
    sock.sendall(send)
    answer()
print("ready", flush=True)
start = time.monotonic()
sent = 0
while time.monotonic() - start < seconds:
    sock.sendall(send)
    answer()
    sent += 1
    pause = start + sent / rate - time.monotonic()
    if pause > 0:
        time.sleep(pause)
print(sent)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--settle-s", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=0.0, help="sends a second meanwhile")
    args = parser.parse_args()
    tick = os.sysconf("SC_CLK_TCK")
    with tempfile.TemporaryDirectory() as data_dir, rocketq_server(data_dir) as server:
        pid = server.proc.pid
        time.sleep(args.settle_s)
        # named before the sender starts: py-spy stops the broker while it reads its stacks
        names = python_names(pid)
        sender = None
        if args.rate:
            sender = subprocess.Popen(
                [sys.executable, "-c", SENDER, str(server.port), str(args.rate),
                 str(args.seconds + 2)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            # the window opens once it sends (its start-up took seconds on a loaded machine:
            # a fixed 1 s wait let the window close before the first send)
            assert sender.stdout is not None
            if sender.stdout.readline().strip() != "ready":
                raise RuntimeError("the sender did not start")
        before, t0 = sample_threads(pid), time.monotonic()
        time.sleep(args.seconds)
        after, elapsed = sample_threads(pid), time.monotonic() - t0
        sent = 0
        if sender is not None:
            out, _ = sender.communicate(timeout=30)
            sent = int(out.split()[-1]) if out.split() else 0
        grown = by_name(before, after, names)
        wakes = Counter({name: f.voluntary for name, f in grown.items()})
        cpu = Counter({name: f.ticks for name, f in grown.items()})
    print(f"{'thread':<28} {'wake-ups/s':>10} {'CPU ms/s':>9}")
    for name, count in wakes.most_common():
        if count or cpu[name]:
            print(f"{name:<28} {count / elapsed:>10.1f} {cpu[name] / tick * 1e3 / elapsed:>9.1f}")
    total_cpu = sum(cpu.values()) / tick * 1e3 / elapsed
    print(f"{'total':<28} {sum(wakes.values()) / elapsed:>10.1f} {total_cpu:>9.1f}")
    if sent:
        rate = sent / (args.seconds + 2)  # the sender's whole run, window included
        print(f"sent {sent} ({rate:.0f}/s): broker CPU {total_cpu * 1e3 / rate:.1f} us a message")


if __name__ == "__main__":
    main()
