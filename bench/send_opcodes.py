"""The interpreter's work a send on the broker's loop: bytecodes executed, counted exactly.

    PYTHONPATH=<tree>/src .venv/bin/python bench/send_opcodes.py [--connections 1] [--sends 500]

On a loaded machine CPU and wall figures of a few microseconds wander by more than the
change being measured; the count of Python bytecodes the loop thread executes per send does
not (the C calls count as one instruction each). Counted: the frames under the loop
callbacks a send's work runs in (``ENTRIES``), not the broker's periodic work. A broker
(``rocketq.testing.broker``, ASYNC_FLUSH) runs in this process with an opcode tracer on its
loop thread (``sys.settrace`` with ``f_trace_opcodes``), a child process sends 1 KiB
SEND_MESSAGE_V2 requests over ``--connections`` raw sockets, one on each, then waits for
every reply (sync N), ``--sends`` rounds. Printed: bytecodes and Python calls a send, and
the functions that executed the most (bytecodes a send). Run it with two trees' ``src`` to
compare their Python glue.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
from types import FrameType
from typing import Any

from rocketq.remoting import event_loop
from rocketq.testing.broker import run_broker

CLIENT = r"""
import socket, struct, sys
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.testing.wire import send_request

host, port, conns, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
send = encode(send_request("OpSend", b"x" * 1024, queue_id=0, code=RequestCode.SEND_MESSAGE_V2))
socks = []
for _ in range(conns):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    socks.append([s, b""])

def one(entry):
    s, buf = entry
    while len(buf) < 4 or len(buf) < 4 + struct.unpack_from(">i", buf)[0]:
        buf += s.recv(65536)
    entry[1] = buf[4 + struct.unpack_from(">i", buf)[0]:]

socks[0][0].sendall(send)  # creates the topic (the Python path)
one(socks[0])
for s, _ in socks:  # warm-up
    s.sendall(send)
for entry in socks:
    one(entry)
sys.stdout.write("go\n")
sys.stdout.flush()
sys.stdin.readline()
for _ in range(rounds):
    for s, _ in socks:
        s.sendall(send)
    for entry in socks:
        one(entry)
"""


#: the loop callbacks a send's work runs in (the read; the flush: the put, the answers, the
#: dispatch at its end; a write window's end; a dispatch run outside a flush): the bytecodes
#: of the broker's periodic work (timers, services) between sends are not the send's
ENTRIES = frozenset(
    {
        ("channel_protocol.py", "data_received"),
        ("put_batcher.py", "flush"),
        ("channel_writer.py", "_write_unwritten"),
        ("reput.py", "_run_scheduled"),
    }
)


def _in_send_path(frame: FrameType | None) -> bool:
    while frame is not None:
        code = frame.f_code
        if (code.co_filename.rsplit("/", 1)[-1], code.co_name) in ENTRIES:
            return True
        frame = frame.f_back
    return False


class OpcodeCounter:
    """Counts the bytecodes executed on the thread it is installed on, by function."""

    def __init__(self) -> None:
        self.by_code: collections.Counter[tuple[str, int, str]] = collections.Counter()
        self.calls = 0  # Python frames entered

    def trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if not _in_send_path(frame):
            return None
        frame.f_trace_opcodes = True
        self.calls += 1
        code = frame.f_code
        name = code.co_qualname
        if code.co_filename == "<string>" and frame.f_back is not None:  # generated: by whom
            name = f"{name} from {frame.f_back.f_code.co_qualname}"
        key = (code.co_filename, code.co_firstlineno, name)
        by_code = self.by_code

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "opcode":
                by_code[key] += 1
            return local

        return local


async def measure(connections: int, rounds: int, top: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        async with run_broker(root) as broker:
            host, port = broker.broker_addr.split(":")
            args = (host, port, str(connections), str(rounds))
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                CLIENT,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert child.stdin is not None
            assert child.stdout is not None
            async with asyncio.timeout(60):
                assert (await child.stdout.readline()).strip() == b"go"
            counter = OpcodeCounter()
            sys.settrace(counter.trace)
            try:
                child.stdin.write(b"go\n")
                async with asyncio.timeout(600):
                    await child.wait()
            finally:
                sys.settrace(None)
    sends = connections * rounds
    total = sum(counter.by_code.values())
    print(
        f"connections {connections}: {total / sends:.0f} bytecodes and"
        f" {counter.calls / sends:.1f} Python calls a send ({sends} sends)"
    )
    for (filename, line, name), count in counter.by_code.most_common(top):
        short = filename.split("/src/")[-1] if "/src/" in filename else filename
        print(f"  {count / sends:8.1f}  {name} ({short}:{line})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--sends", type=int, default=500, help="rounds: a send on each connection")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    event_loop.run(measure(args.connections, args.sends, args.top))


if __name__ == "__main__":
    main()
