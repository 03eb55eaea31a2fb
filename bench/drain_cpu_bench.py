"""The broker's CPU per drained message: the drain phase of broker_bench.py, measured as
CPU seconds of the ``rocketq server`` process (from /proc), which a loaded machine disturbs
far less than wall-clock TPS:

    .venv/bin/python bench/drain_cpu_bench.py [--backlog 160000]
    (cd ../main && .venv/bin/python <this tree>/bench/drain_cpu_bench.py)   # main's broker

Also prints the load generator's own CPU a drained message (``time.process_time``): the
pulls' invoke and ``decode_messages`` into MessageExt, the client's side of the drain row.

Builds the backlog with SEND_BATCH_MESSAGE (32 a request, 1 KiB bodies, 4 queues), waits
for dispatch, then drains it with broker_bench's PULL_MESSAGE loop (32 a pull, ``*``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broker_bench as bb
import peers
from figures import Probe

from rocketq.common.message import Message
from rocketq.common.message_const import PROPERTY_WAIT_STORE_MSG_OK
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode

DISPATCH_WAIT_S = 3.0


def process_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drain(port: int, pid: int, backlog: int) -> tuple[int, float, float, float]:
    addr = f"127.0.0.1:{port}"
    body = os.urandom(1024)
    msg = Message("BenchBacklog", body)
    msg.put_property(PROPERTY_WAIT_STORE_MSG_OK, "true")  # a system property: set as is
    batch = encode_batch_messages([msg] * bb.BATCH)
    plan = bb.Plan(1024, (1,), 1, 1, backlog, 60.0)
    async with RemotingClient() as client:
        for seq in range(backlog // bb.BATCH):
            cmd = bb.send_command("BenchBacklog", seq % bb.QUEUES, batch, batch=True)
            response = await client.invoke(addr, cmd, bb.TIMEOUT_S)
            assert response.code == ResponseCode.SUCCESS, response.remark
        await asyncio.sleep(DISPATCH_WAIT_S)  # the reput thread's CPU is not the drain's
        client_cpu_s = time.process_time()
        fig = await bb.drain_rocketq(client, addr, backlog, plan, Probe(lambda: process_cpu_s(pid)))
        client_cpu_s = time.process_time() - client_cpu_s
        return fig.messages, fig.seconds, fig.cpu_s, client_cpu_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backlog", type=int, default=160_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, peers.rocketq_server(d) as server:
        msgs, wall_s, cpu_s, client_s = asyncio.run(
            drain(server.port, server.proc.pid, args.backlog)
        )
    print(
        f"drain {msgs} msgs: {msgs / wall_s:,.0f} msg/s wall, broker CPU {cpu_s:.2f} s = "
        f"{msgs / max(cpu_s, 1e-9):,.0f} msg per broker CPU second; the client (this process: "
        f"the pulls' invoke and decode_messages) {client_s / max(msgs, 1) * 1e6:.2f} us CPU a msg"
    )


if __name__ == "__main__":
    main()
