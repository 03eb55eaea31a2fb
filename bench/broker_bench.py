"""Broker benchmark: rocketq against RabbitMQ and Redis Streams under the same load.

    .venv/bin/python bench/broker_bench.py            # full run, about 3 minutes
    .venv/bin/python bench/broker_bench.py --quick    # smoke run

Phases, each bounded by a message count and a time cap, 1 KiB bodies, the same load
generator (one asyncio process) for every system:

- ``sync N``: N senders (N = 1, 8, 32), each waiting for its reply before the next send.
  rocketq: SEND_MESSAGE_V2 to one of 4 queues; RabbitMQ: a persistent message to a durable
  queue, awaiting the publisher confirm (one channel a sender); Redis: XADD.
- ``batch``: 8 senders sending 32 messages a request until the 100,000-message backlog is
  built. rocketq: SEND_BATCH_MESSAGE; RabbitMQ: 32 publishes, then all 32 confirms; Redis:
  a pipeline of 32 XADDs.
- ``drain``: 4 consumers (one per queue / stream) read the backlog, 32 messages a request.
  rocketq: PULL_MESSAGE; RabbitMQ: basic.consume with prefetch 32, acking every 32nd
  message with multiple=true; Redis: XREAD COUNT 32.

Each system runs in its own child process (``peers.py``); RocketMQ's figures are printed per
phase: TPS, average, p50, p99 and max RT of a request, then rocketq / peer ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers

from rocketq.common.message import Message
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codes import RequestCode, ResponseCode
from rocketq.remoting.command import RemotingCommand
from rocketq.remoting.headers import (
    PullMessageRequestHeader,
    SendMessageRequestHeader,
)

QUEUES = 4
BATCH = 32
TIMEOUT_S = 30.0


@dataclass
class Figures:
    system: str
    phase: str
    messages: int = 0
    seconds: float = 0.0
    rts_ms: list[float] = field(default_factory=list)

    @property
    def tps(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0

    def row(self) -> dict[str, Any]:
        rts = sorted(self.rts_ms) or [0.0]
        return {
            "system": self.system,
            "phase": self.phase,
            "messages": self.messages,
            "tps": round(self.tps),
            "rt_avg_ms": round(statistics.fmean(rts), 3),
            "rt_p50_ms": round(rts[len(rts) // 2], 3),
            "rt_p99_ms": round(rts[min(len(rts) - 1, int(len(rts) * 0.99))], 3),
            "rt_max_ms": round(rts[-1], 3),
        }


async def run_senders(
    figures: Figures, senders: int, total: int, per_call: int, cap_s: float,
    call: Callable[[int, int], Awaitable[None]],
) -> None:  # fmt: skip
    """``senders`` loops calling ``call(sender, seq)`` until ``total`` messages or ``cap_s``."""
    counter = iter(range(0, total, per_call))
    start = time.perf_counter()
    deadline = start + cap_s

    async def loop(sender: int) -> None:
        for seq in counter:
            if time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            await call(sender, seq)
            figures.rts_ms.append((time.perf_counter() - t0) * 1000)
            figures.messages += per_call

    await asyncio.gather(*(loop(i) for i in range(senders)))
    figures.seconds = time.perf_counter() - start


# ---------------------------------------------------------------------- rocketq


def send_command(topic: str, queue_id: int, body: bytes, *, batch: bool = False) -> RemotingCommand:
    header = SendMessageRequestHeader(
        producer_group="BenchPG", topic=topic, default_topic="TBW102",
        default_topic_queue_nums=QUEUES, queue_id=queue_id, sys_flag=0,
        born_timestamp=int(time.time() * 1000), flag=0,
        properties="" if batch else "WAIT\x01true\x02", batch=batch,
    )  # fmt: skip
    code = RequestCode.SEND_BATCH_MESSAGE if batch else RequestCode.SEND_MESSAGE_V2
    return RemotingCommand.create_request(code, header.to_v2().to_ext_fields(), body)


def pull_command(topic: str, queue_id: int, offset: int) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group="BenchCG", topic=topic, queue_id=queue_id, queue_offset=offset,
        max_msg_nums=BATCH, sys_flag=0x4, commit_offset=0, suspend_timeout_millis=1000,
        sub_version=0, subscription="*",
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


async def bench_rocketq(port: int, plan: Plan) -> list[Figures]:
    addr = f"127.0.0.1:{port}"
    out: list[Figures] = []
    body = os.urandom(plan.size)
    batch_body = encode_batch_messages(
        [Message("BenchBacklog", body, properties={"WAIT": "true"})] * BATCH
    )
    async with RemotingClient() as client:
        for topic in ("BenchSync", "BenchBacklog"):  # auto-create before timing
            r = await client.invoke(addr, send_command(topic, 0, body), TIMEOUT_S)
            assert r.code == ResponseCode.SUCCESS, r.remark
        for n in plan.senders:
            fig = Figures("rocketq", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                cmd = send_command("BenchSync", seq % QUEUES, body)
                r = await client.invoke(addr, cmd, TIMEOUT_S)
                assert r.code == ResponseCode.SUCCESS, r.remark

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send)
            out.append(fig)
        fig = Figures("rocketq", "batch 32")

        async def send_batch(sender: int, seq: int) -> None:
            cmd = send_command("BenchBacklog", (seq // BATCH) % QUEUES, batch_body, batch=True)
            r = await client.invoke(addr, cmd, TIMEOUT_S)
            assert r.code == ResponseCode.SUCCESS, r.remark

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch)
        out.append(fig)
        out.append(await drain_rocketq(client, addr, fig.messages + 1, plan))
    return out


async def drain_rocketq(client: RemotingClient, addr: str, backlog: int, plan: Plan) -> Figures:
    fig = Figures("rocketq", "drain")
    start = time.perf_counter()
    deadline = start + plan.cap_s * 3

    async def consume(qid: int) -> None:
        offset = 0
        while time.perf_counter() < deadline and fig.messages < backlog:
            t0 = time.perf_counter()
            r = await client.invoke(addr, pull_command("BenchBacklog", qid, offset), TIMEOUT_S)
            if r.code != ResponseCode.SUCCESS:
                if r.code not in (ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY):
                    raise RuntimeError(f"pull answered {r.code}: {r.remark}")
                return  # this queue is drained
            fig.rts_ms.append((time.perf_counter() - t0) * 1000)
            fig.messages += count_records(r.body)
            offset = int(r.ext_fields["nextBeginOffset"])

    await asyncio.gather(*(consume(q) for q in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    return fig


def count_records(body: bytes) -> int:
    """Records in a PULL body, by their TOTALSIZE words (what a client must at least do)."""
    n = pos = 0
    while pos < len(body):
        pos += int.from_bytes(body[pos : pos + 4], "big")
        n += 1
    return n


# ---------------------------------------------------------------------- redis


async def bench_redis(port: int, plan: Plan) -> list[Figures]:
    import redis.asyncio as aioredis

    out: list[Figures] = []
    body = os.urandom(plan.size)
    r = aioredis.Redis(host="127.0.0.1", port=port, max_connections=64)
    try:
        for n in plan.senders:
            fig = Figures("redis", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                await r.xadd(f"sync-{seq % QUEUES}", {"b": body})

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send)
            out.append(fig)
        fig = Figures("redis", "batch 32")

        async def send_batch(sender: int, seq: int) -> None:
            pipe = r.pipeline(transaction=False)
            stream = f"backlog-{(seq // BATCH) % QUEUES}"
            for _ in range(BATCH):
                pipe.xadd(stream, {"b": body})
            await pipe.execute()

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch)
        out.append(fig)
        drain = Figures("redis", "drain")
        start = time.perf_counter()

        async def consume(q: int) -> None:
            last = "0-0"
            while True:
                t0 = time.perf_counter()
                got = await r.xread({f"backlog-{q}": last}, count=BATCH)
                if not got:
                    return
                entries = got[0][1]
                drain.rts_ms.append((time.perf_counter() - t0) * 1000)
                drain.messages += len(entries)
                last = entries[-1][0]

        await asyncio.gather(*(consume(q) for q in range(QUEUES)))
        drain.seconds = time.perf_counter() - start
        out.append(drain)
    finally:
        await r.aclose()
    return out


# ---------------------------------------------------------------------- rabbitmq


async def bench_rabbitmq(port: int, plan: Plan) -> list[Figures]:
    import aio_pika

    out: list[Figures] = []
    body = os.urandom(plan.size)
    conn = await aio_pika.connect(f"amqp://guest:guest@127.0.0.1:{port}/")
    try:
        setup = await conn.channel()
        for name in [f"sync-{q}" for q in range(QUEUES)] + [f"backlog-{q}" for q in range(QUEUES)]:
            await setup.declare_queue(name, durable=True)
        channels = [await conn.channel(publisher_confirms=True) for _ in range(max(plan.senders))]

        def persistent() -> aio_pika.Message:
            return aio_pika.Message(body, delivery_mode=aio_pika.DeliveryMode.PERSISTENT)

        for n in plan.senders:
            fig = Figures("rabbitmq", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                exchange = channels[sender].default_exchange
                await exchange.publish(persistent(), routing_key=f"sync-{seq % QUEUES}")

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send)
            out.append(fig)
        fig = Figures("rabbitmq", "batch 32")

        per_queue = [0] * QUEUES

        async def send_batch(sender: int, seq: int) -> None:
            exchange = channels[sender].default_exchange
            q = (seq // BATCH) % QUEUES
            await asyncio.gather(
                *(exchange.publish(persistent(), routing_key=f"backlog-{q}") for _ in range(BATCH))
            )
            per_queue[q] += BATCH

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch)
        out.append(fig)
        out.append(await drain_rabbitmq(conn, per_queue, plan))
    finally:
        await conn.close()
    return out


async def drain_rabbitmq(conn: Any, per_queue: list[int], plan: Plan) -> Figures:
    fig = Figures("rabbitmq", "drain")
    start = time.perf_counter()
    deadline = start + plan.cap_s * 3

    async def consume(q: int) -> None:
        channel = await conn.channel()
        await channel.set_qos(prefetch_count=BATCH)
        queue = await channel.get_queue(f"backlog-{q}")
        expected = per_queue[q]
        got = 0
        t0 = time.perf_counter()
        if not expected:
            return
        async with queue.iterator(timeout=TIMEOUT_S) as messages:
            async for message in messages:
                got += 1
                if got % BATCH == 0 or got == expected:
                    await message.ack(multiple=True)
                    fig.rts_ms.append((time.perf_counter() - t0) * 1000)
                    t0 = time.perf_counter()
                if got >= expected or time.perf_counter() > deadline:
                    break
        fig.messages += got

    await asyncio.gather(*(consume(q) for q in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    return fig


# ---------------------------------------------------------------------- main


@dataclass(frozen=True)
class Plan:
    size: int
    senders: tuple[int, ...]
    per_sender: int
    max_sync: int
    backlog: int
    cap_s: float

    def sync_count(self, senders: int) -> int:
        return min(self.max_sync, self.per_sender * senders)


SYSTEMS: dict[str, Callable[[int, Plan], Awaitable[list[Figures]]]] = {
    "rocketq": bench_rocketq,
    "rabbitmq": bench_rabbitmq,
    "redis": bench_redis,
}
SERVERS = {
    "rocketq": peers.rocketq_server,
    "rabbitmq": peers.rabbitmq_server,
    "redis": peers.redis_server,
}


def run_system(name: str, plan: Plan) -> list[Figures]:
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as d, SERVERS[name](d) as server:
        return asyncio.run(SYSTEMS[name](server.port, plan))


def print_table(rows: list[Figures]) -> None:
    print(f"{'system':<10}{'phase':<10}{'msgs':>9}{'TPS':>10}{'avg ms':>9}{'p50':>8}"
          f"{'p99':>8}{'max':>9}")  # fmt: skip
    for f in rows:
        r = f.row()
        print(
            f"{r['system']:<10}{r['phase']:<10}{r['messages']:>9}{r['tps']:>10}"
            f"{r['rt_avg_ms']:>9}{r['rt_p50_ms']:>8}{r['rt_p99_ms']:>8}{r['rt_max_ms']:>9}"
        )


def print_ratios(rows: list[Figures]) -> None:
    ours = {f.phase: f.tps for f in rows if f.system == "rocketq"}
    for peer in sorted({f.system for f in rows} - {"rocketq"}):
        theirs = {f.phase: f.tps for f in rows if f.system == peer}
        cells = [
            f"{phase} {ours[phase] / theirs[phase]:.2f}x" for phase in ours if theirs.get(phase)
        ]
        print(f"rocketq / {peer}: " + ", ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts (smoke run)")
    ap.add_argument("--systems", default="rocketq,rabbitmq,redis")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--json", action="store_true", help="also print JSON rows")
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    if args.quick:
        plan = Plan(args.size, (1, 8, 32), 100, 2_000, 3_200, 10.0)
    else:
        plan = Plan(args.size, (1, 8, 32), 2_000, 20_000, 100_000, 20.0)
    peers.ensure_installed(systems)
    rows: list[Figures] = []
    for name in systems:
        print(f"running {name} ...", flush=True)
        rows += run_system(name, plan)
    print_table(rows)
    print_ratios(rows)
    if args.json:
        for f in rows:
            print(json.dumps(f.row()))


if __name__ == "__main__":
    main()
