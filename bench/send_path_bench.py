"""CPU per single send of a broker's send path, broker and senders in one process.

    PYTHONPATH=<tree>/src .venv/bin/python bench/send_path_bench.py [--connections 32]

A broker (``rocketq.testing.broker.run_broker``, ASYNC_FLUSH, its store in a temporary
directory) and ``--connections`` raw senders on the loop rocketq's processes run on (uvloop
when installed). Each sender writes one 1 KiB SEND_MESSAGE_V2 request (pre-encoded: the
sender costs the same whatever the tree) and the next one when the reply's frame has
arrived (sync sends, as ``bench/broker_bench.py``'s sync N). Printed: process CPU
microseconds per send (broker and senders together; the senders' share is a frame count),
per round after a warm-up. Run it with two trees' ``src`` on ``PYTHONPATH``, interleaved,
to compare the broker's send path on a loaded machine, where the broker bench's TPS and CPU
readings wander.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import struct
import tempfile
import time
from typing import cast

from rocketq.remoting import event_loop
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.testing.broker import run_broker
from rocketq.testing.wire import send_request

TOPIC = "SendPathBench"
BODY = b"x" * 1024
TIMEOUT_S = 30.0
#: how a SUCCESS reply's JSON header starts (the encoder writes "code" first)
SUCCESS_HEAD = b'{"code":0,'


class Sender(asyncio.Protocol):
    """Sends ``count`` requests one at a time: the next when a whole reply frame is in."""

    def __init__(self, frame: bytes, count: int, done: asyncio.Future[None]) -> None:
        self.frame = frame
        self.left = count
        self.done = done
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.refused = 0  # replies that are not SUCCESS: the figure would not be a send's

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.frame)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= 4:
            (length,) = struct.unpack_from(">i", self.buffer)
            if len(self.buffer) < 4 + length:
                return
            if not self.buffer.startswith(SUCCESS_HEAD, 8):
                self.refused += 1
            self.buffer = self.buffer[4 + length :]
            self.left -= 1
            if self.left == 0:
                if not self.done.done():
                    self.done.set_result(None)
                return
            assert self.transport is not None
            self.transport.write(self.frame)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionError(f"closed: {exc}"))


async def round_of(host: str, port: int, connections: int, per_connection: int) -> float:
    """Process CPU microseconds per send of one round."""
    loop = asyncio.get_running_loop()
    dones = [loop.create_future() for _ in range(connections)]
    transports = []
    senders: list[Sender] = []
    cpu = time.process_time()
    for i, done in enumerate(dones):
        # the topic is created with send_request's default_topic_queue_nums (4): queues 0-3
        request = send_request(TOPIC, BODY, queue_id=i % 4, code=RequestCode.SEND_MESSAGE_V2)
        frame = encode(request)
        transport, sender = await loop.create_connection(
            lambda f=frame, d=done: Sender(f, per_connection, d),  # type: ignore[misc]
            host,
            port,
        )
        transports.append(transport)
        senders.append(sender)
    async with asyncio.timeout(TIMEOUT_S * 4):
        await asyncio.gather(*dones)
    used = time.process_time() - cpu
    for transport in transports:
        transport.close()
    refused = sum(s.refused for s in senders)
    if refused:
        raise SystemExit(f"{refused} sends were not stored (a reply other than SUCCESS)")
    return used / (connections * per_connection) * 1e6


async def measure(
    connections: int, sends: int, rounds: int, ab_flush: bool, ab_take: bool = False
) -> list[float]:
    """Each round's CPU a send; with ``ab_flush`` the rounds alternate between the flush in one
    step (``PutBatcher.flush_now``) and the reference flush, the one step's rounds first of
    each pair (the even ones); with ``ab_take`` between the take of a read's sends in C
    (``take_sends``) and the reference take a send."""
    with tempfile.TemporaryDirectory() as root:
        async with run_broker(root) as broker:
            host, port = broker.broker_addr.split(":")
            per_connection = max(1, sends // connections)
            # the first send creates the topic (4 queues) on the Python path; then a warm-up
            await round_of(host, int(port), 1, 1)
            await round_of(host, int(port), connections, per_connection // 2 or 1)
            figures: list[float] = []
            for i in range(rounds * (2 if ab_flush or ab_take else 1)):
                if ab_take:
                    set_take_native(broker, i % 2 == 0)
                if ab_flush:
                    spent = set_flush_now(broker, i % 2 == 0)
                figures.append(await round_of(host, int(port), connections, per_connection))
                if ab_flush:
                    FLUSH_NS[i % 2].extend(spent)
            return figures


#: with --ab-flush, each flush's wall time (ns) in the one-step rounds and the reference ones
FLUSH_NS: tuple[list[int], list[int]] = ([], [])


def set_take_native(broker: object, on: bool) -> None:
    """The broker's send processor takes a read's sends in C (``on``) or one by one in Python."""
    fast = broker.remoting_server.fast_processor(RequestCode.SEND_MESSAGE_V2)  # type: ignore[attr-defined]
    processor = fast.__self__
    processor.take_native = on
    if not on:
        processor.taker = None  # the next read's spec_for makes it again when on


def set_flush_now(broker: object, on: bool) -> list[int]:
    """The broker's send batcher flushes in one step (``on``) or the reference way; the list
    its flushes' wall times (ns) go to from now on."""
    fast = broker.remoting_server.fast_processor(RequestCode.SEND_MESSAGE_V2)  # type: ignore[attr-defined]
    batcher = fast.__self__.put_batcher
    batcher.flush_now = on
    spent: list[int] = []
    flush = type(batcher).flush
    clock = time.perf_counter_ns

    def timed() -> None:
        start = clock()
        flush(batcher)
        spent.append(clock() - start)

    batcher.flush = timed  # the instance's: _schedule reads self.flush
    return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--sends", type=int, default=20000, help="per round, over all connections")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--ab-flush",
        action="store_true",
        help="alternate rounds: the flush in one step, the reference flush (PutBatcher.flush_now)",
    )
    ap.add_argument(
        "--ab-take",
        action="store_true",
        help="alternate rounds: a read's sends taken in C (take_sends), the reference take",
    )
    args = ap.parse_args()
    figures = event_loop.run(
        measure(args.connections, args.sends, args.rounds, args.ab_flush, args.ab_take)
    )
    if args.ab_take:
        on, off = figures[0::2], figures[1::2]
        print(
            f"connections {args.connections}: C take median {statistics.median(on):.1f}"
            f" ({' / '.join(f'{f:.1f}' for f in on)}), reference take median"
            f" {statistics.median(off):.1f} ({' / '.join(f'{f:.1f}' for f in off)}) us per send,"
            f" ratio {statistics.median(on) / statistics.median(off):.2f}"
        )
        return
    if args.ab_flush:
        one, ref = figures[0::2], figures[1::2]
        print(
            f"connections {args.connections}: one-step flush median {statistics.median(one):.1f}"
            f" ({' / '.join(f'{f:.1f}' for f in one)}), reference flush median"
            f" {statistics.median(ref):.1f} ({' / '.join(f'{f:.1f}' for f in ref)}) us per send"
        )
        for name, spent in zip(("one-step", "reference"), FLUSH_NS, strict=True):
            spent.sort()
            print(
                f"  {name} flush wall (the put, the answers, their write, the dispatch):"
                f" p10 {spent[len(spent) // 10] / 1e3:.1f} us, median"
                f" {spent[len(spent) // 2] / 1e3:.1f} us, {len(spent)} flushes"
            )
        return
    shown = " / ".join(f"{f:.1f}" for f in figures)
    print(
        f"connections {args.connections}: {shown} us per send "
        f"(median {statistics.median(figures):.1f})"
    )


if __name__ == "__main__":
    main()
