"""CPU per request of the remoting read path, client and server in one process.

    PYTHONPATH=<tree>/src .venv/bin/python bench/read_path_bench.py [--connections 32]

A RemotingServer with one fast processor that answers at once (the body echoed) and
``--connections`` RemotingClients, each invoking it in turn (ping-pong, 1 KiB bodies), on the
loop rocketq's processes run on (uvloop when installed). Printed: process CPU microseconds per
request (client and server together: both read through the same channel code), after a warm-up
round. Run it with two trees' ``src`` on ``PYTHONPATH``, interleaved, to compare read paths
(issue 22's ``ChannelProtocol`` against the stream reader before it).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from rocketq.remoting import event_loop
from rocketq.remoting.channel import FastResult, RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

ECHO = 2000
BODY = b"x" * 1024
TIMEOUT_S = 5.0


def echo(_: RemotingChannel, request: RemotingCommand) -> FastResult:
    return RemotingCommand.create_response(ResponseCode.SUCCESS, body=request.body)


async def ping_pong(client: RemotingClient, addr: str, count: int) -> None:
    for _ in range(count):
        await client.invoke(addr, RemotingCommand.create_request(ECHO, {}, BODY), TIMEOUT_S)


async def measure(connections: int, count: int) -> float:
    server = RemotingServer()
    server.register_fast_processor(ECHO, echo)
    await server.start("127.0.0.1", 0)
    clients = [RemotingClient() for _ in range(connections)]
    try:
        await asyncio.gather(*(ping_pong(c, server.addr, count) for c in clients))  # warm-up
        started = time.process_time()
        await asyncio.gather(*(ping_pong(c, server.addr, count) for c in clients))
        spent = time.process_time() - started
    finally:
        for client in clients:
            await client.shutdown()
        await server.stop()
    return spent / (connections * count) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--requests", type=int, default=8000, help="per round, over all connections")
    args = ap.parse_args()
    count = max(1, args.requests // args.connections)
    us = event_loop.run(measure(args.connections, count))
    print(f"connections {args.connections}: {us:.1f} us CPU per request (client and server)")


if __name__ == "__main__":
    main()
