"""The same phases as rocketq's, run against Redis Streams, RabbitMQ and NATS JetStream.

- Redis: XADD per send, a pipeline of 32 XADDs per batch, XREAD COUNT 32 to drain, and
  XREAD BLOCK for the live consumer of the latency phase.
- RabbitMQ: a persistent message to a durable queue awaiting the publisher confirm (one
  channel a sender); 32 publishes then their confirms per batch; basic.consume with prefetch
  32, acking every 32nd message with multiple=true.
- NATS JetStream (file storage): ``js.publish`` awaiting the PubAck; 32 ``publish_async``
  then their acks per batch; a pull consumer fetching 32 and acking the last of each fetch
  (AckAll) to drain; a push subscription for the latency phase.
"""

from __future__ import annotations

import asyncio
import os
import struct
import time
from typing import Any

from figures import BATCH, QUEUES, TIMEOUT_S, Figures, Plan, Probe, paced, run_senders
from peers import Server

STAMP = struct.Struct(">d")


def stamped(body: bytes, t_sent: float) -> bytes:
    return STAMP.pack(t_sent) + body[STAMP.size :]


def latency_of(body: bytes) -> float:
    return (time.perf_counter() - STAMP.unpack_from(body)[0]) * 1000


def record_latency(fig: Figures, body: bytes) -> None:
    """The send-to-receive time of a stamped body, and its send time (latency_histogram.py)."""
    t_sent = STAMP.unpack_from(body)[0]
    fig.rts_ms.append((time.perf_counter() - t_sent) * 1000)
    fig.sent_s.append(t_sent)


# ---------------------------------------------------------------------- redis


async def bench_redis(server: Server, plan: Plan) -> list[Figures]:
    import redis.asyncio as aioredis

    out: list[Figures] = []
    probe = Probe(server.cpu_s)
    body = os.urandom(plan.size)
    r = aioredis.Redis(host="127.0.0.1", port=server.port, max_connections=64)
    try:
        for n in plan.senders:
            fig = Figures("redis", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                await r.xadd(f"sync-{seq % QUEUES}", {"b": body})

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send, probe)
            out.append(fig)
        fig = Figures("redis", "batch 32")

        async def send_batch(sender: int, seq: int) -> None:
            pipe = r.pipeline(transaction=False)
            stream = f"backlog-{(seq // BATCH) % QUEUES}"
            for _ in range(BATCH):
                pipe.xadd(stream, {"b": body})
            await pipe.execute()

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch, probe)
        fig.rss_mb = server.rss_anon_mb()
        out.append(fig)
        out.append(await drain_redis(r, probe))
        out.append(await latency_redis(server, plan, body))
    finally:
        await r.aclose()
    return out


async def drain_redis(r: Any, probe: Probe) -> Figures:
    drain = Figures("redis", "drain")
    probe.start()
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
    probe.stop(drain)
    return drain


async def latency_redis(server: Server, plan: Plan, body: bytes) -> Figures:
    import redis.asyncio as aioredis

    fig = Figures("redis", "latency")
    producer = aioredis.Redis(host="127.0.0.1", port=server.port, max_connections=64)
    reader = aioredis.Redis(host="127.0.0.1", port=server.port)

    async def consume() -> None:
        last = "0-0"  # a new stream: from its start, so no XADD can slip past the reader
        while len(fig.rts_ms) < plan.latency_count:
            got = await reader.xread({"latency": last}, count=BATCH, block=1000)
            for _, entries in got or []:
                for entry_id, fields in entries:
                    record_latency(fig, fields[b"b"])
                    last = entry_id

    task = asyncio.create_task(consume())

    async def send(seq: int, t_sent: float) -> None:
        await producer.xadd("latency", {"b": stamped(body, t_sent)})

    try:
        await paced(fig, plan, send, lambda: len(fig.rts_ms))
    finally:
        task.cancel()
        await producer.aclose()
        await reader.aclose()
    return fig


# ---------------------------------------------------------------------- rabbitmq


async def bench_rabbitmq(server: Server, plan: Plan) -> list[Figures]:
    import aio_pika

    out: list[Figures] = []
    probe = Probe(server.cpu_s)
    body = os.urandom(plan.size)
    conn = await aio_pika.connect(f"amqp://guest:guest@127.0.0.1:{server.port}/")
    try:
        setup = await conn.channel()
        names = [f"sync-{q}" for q in range(QUEUES)] + [f"backlog-{q}" for q in range(QUEUES)]
        for name in [*names, "latency"]:
            await setup.declare_queue(name, durable=True)
        channels = [await conn.channel(publisher_confirms=True) for _ in range(max(plan.senders))]

        def persistent(payload: bytes = body) -> aio_pika.Message:
            return aio_pika.Message(payload, delivery_mode=aio_pika.DeliveryMode.PERSISTENT)

        for n in plan.senders:
            fig = Figures("rabbitmq", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                exchange = channels[sender].default_exchange
                await exchange.publish(persistent(), routing_key=f"sync-{seq % QUEUES}")

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send, probe)
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

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch, probe)
        fig.rss_mb = server.rss_anon_mb()
        out.append(fig)
        out.append(await drain_rabbitmq(conn, per_queue, plan, probe))
        out.append(await latency_rabbitmq(conn, channels[0], plan, body, persistent))
    finally:
        await conn.close()
    return out


async def drain_rabbitmq(conn: Any, per_queue: list[int], plan: Plan, probe: Probe) -> Figures:
    fig = Figures("rabbitmq", "drain")
    probe.start()
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
    probe.stop(fig)
    return fig


async def latency_rabbitmq(
    conn: Any, confirm_channel: Any, plan: Plan, body: bytes, persistent: Any
) -> Figures:
    fig = Figures("rabbitmq", "latency")
    channel = await conn.channel()
    await channel.set_qos(prefetch_count=BATCH)
    queue = await channel.get_queue("latency")

    async def on_message(message: Any) -> None:
        record_latency(fig, message.body)
        await message.ack()

    tag = await queue.consume(on_message)

    async def send(seq: int, t_sent: float) -> None:
        await confirm_channel.default_exchange.publish(
            persistent(stamped(body, t_sent)), routing_key="latency"
        )

    try:
        await paced(fig, plan, send, lambda: len(fig.rts_ms))
    finally:
        await queue.cancel(tag)
    return fig


# ---------------------------------------------------------------------- nats


async def bench_nats(server: Server, plan: Plan) -> list[Figures]:
    import nats
    from nats.js.api import StorageType

    out: list[Figures] = []
    probe = Probe(server.cpu_s)
    body = os.urandom(plan.size)
    nc = await nats.connect(f"nats://127.0.0.1:{server.port}")
    try:
        js = nc.jetstream(timeout=TIMEOUT_S)
        for name in ("SYNC", "BACKLOG", "LATENCY"):
            subjects = [f"{name.lower()}.*"]
            await js.add_stream(name=name, subjects=subjects, storage=StorageType.FILE)
        for n in plan.senders:
            fig = Figures("nats", f"sync {n}")

            async def send(sender: int, seq: int) -> None:
                await js.publish(f"sync.{seq % QUEUES}", body)

            await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send, probe)
            out.append(fig)
        fig = Figures("nats", "batch 32")
        per_queue = [0] * QUEUES

        async def send_batch(sender: int, seq: int) -> None:
            q = (seq // BATCH) % QUEUES
            acks = [await js.publish_async(f"backlog.{q}", body) for _ in range(BATCH)]
            await asyncio.gather(*acks)
            per_queue[q] += BATCH

        await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch, probe)
        fig.rss_mb = server.rss_anon_mb()
        out.append(fig)
        out.append(await drain_nats(js, per_queue, plan, probe))
        out.append(await latency_nats(js, plan, body))
    finally:
        await nc.close()
    return out


async def drain_nats(js: Any, per_queue: list[int], plan: Plan, probe: Probe) -> Figures:
    from nats.js.api import AckPolicy, ConsumerConfig

    fig = Figures("nats", "drain")
    probe.start()
    start = time.perf_counter()
    deadline = start + plan.cap_s * 3

    async def consume(q: int) -> None:
        sub = await js.pull_subscribe(
            f"backlog.{q}", durable=f"drain{q}", stream="BACKLOG",
            config=ConsumerConfig(ack_policy=AckPolicy.ALL),
        )  # fmt: skip
        got = 0
        while time.perf_counter() < deadline and got < per_queue[q]:
            t0 = time.perf_counter()
            msgs = await sub.fetch(min(BATCH, per_queue[q] - got), timeout=TIMEOUT_S)
            await msgs[-1].ack()
            fig.rts_ms.append((time.perf_counter() - t0) * 1000)
            got += len(msgs)
        fig.messages += got

    await asyncio.gather(*(consume(q) for q in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    probe.stop(fig)
    return fig


async def latency_only_redis(server: Server, plan: Plan) -> list[Figures]:
    """``broker_bench.py --only latency``: the latency phase alone, with the server's CPU."""
    probe = Probe(server.cpu_s)
    probe.start()
    fig = await latency_redis(server, plan, os.urandom(plan.size))
    probe.stop(fig)
    return [fig]


async def latency_only_nats(server: Server, plan: Plan) -> list[Figures]:
    """``broker_bench.py --only latency``: the latency phase alone, with the server's CPU."""
    import nats
    from nats.js.api import StorageType

    nc = await nats.connect(f"nats://127.0.0.1:{server.port}")
    try:
        js = nc.jetstream(timeout=TIMEOUT_S)
        await js.add_stream(name="LATENCY", subjects=["latency.*"], storage=StorageType.FILE)
        probe = Probe(server.cpu_s)
        probe.start()
        fig = await latency_nats(js, plan, os.urandom(plan.size))
        probe.stop(fig)
    finally:
        await nc.close()
    return [fig]


async def latency_nats(js: Any, plan: Plan, body: bytes) -> Figures:
    fig = Figures("nats", "latency")

    async def on_message(msg: Any) -> None:
        record_latency(fig, msg.data)

    sub = await js.subscribe("latency.0", cb=on_message, stream="LATENCY")

    async def send(seq: int, t_sent: float) -> None:
        await js.publish("latency.0", stamped(body, t_sent))

    try:
        await paced(fig, plan, send, lambda: len(fig.rts_ms))
    finally:
        await sub.unsubscribe()
    return fig
