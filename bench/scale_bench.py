"""Cost as the work grows (issue 22, "a scale bench"): curves printed as tables.

    .venv/bin/python bench/scale_bench.py                       # every curve, default sizes
    .venv/bin/python bench/scale_bench.py --only topics --topics 1000,5000,50000,100000
    .venv/bin/python bench/scale_bench.py --only topics --flush SYNC_FLUSH  # creates wait: fsync
    .venv/bin/python bench/scale_bench.py --only topics --gc-trace  # + each full collection
    .venv/bin/python bench/scale_bench.py --only clients --clients 100,1000,10000
    .venv/bin/python bench/scale_bench.py --only topics-controller --topics 1000,10000

A name server and a broker run as their own processes (``rocketq namesrv``, ``rocketq broker``)
on 127.0.0.1, so their RSS and CPU are theirs; the bench is the client. Curves (``--only``):

- ``topics``: the table grown with UPDATE_AND_CREATE_TOPIC_LIST (1,000 topics x 8 queues a
  request) to each size; at each, 100 creates with UPDATE_AND_CREATE_TOPIC (p50/p99 ms), the
  time until the route has each new topic (max ms), broker and name server RSS, a full
  registration of the broker's table (REGISTER_BROKER in 800-topic parts, as the broker sends
  it: ms and body MB), route lookup (p50 ms over 200) and the name server's topic list (ms).
- ``topics-controller``: the same creates in a controller-mode group (``rocketq server
  --cluster controller``: a name server with an embedded controller and three broker
  processes), each answered once both in-sync slaves hold it (``bench/scale_controller.py``).
- ``queues``: a topic with 8 ... 1,024 queues: create ms, route lookup ms, route body bytes.
- ``clients``: 100 ... 10,000 connections (RLIMIT_NOFILE raised), each heartbeating once as a
  producer, 1,000 of them also consumers of one group: broker RSS per connection, broker CPU
  per heartbeat, and the rebalance of the group (every consumer fetches the group's ids and
  computes its queues; wall ms) (``bench/scale_clients.py``).
- ``store``: restart after kill -9 by store size: runs ``bench/recovery_bench.py`` per size.
- ``backlog``: ``--backlog`` messages (default 1 M; the issue's 10 M with ``--backlog
  10000000``) sent in batches, then drained by pulls; msg/s both ways.

Every curve is bounded by its sizes; the figures depend on the machine (say how loaded it was).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.admin_bodies import CreateTopicListRequestBody
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.namesrv_headers import RegisterBrokerRequestHeader
from rocketq.remoting.protocol.register_broker_body import (
    RegisterBrokerBody,
    TopicConfigSerializeWrapper,
)
from rocketq.response_code import ResponseCode

BENCH = Path(__file__).resolve()
sys.path.insert(0, str(BENCH.parent))

import gc_trace  # noqa: E402 -- bench/ on the path first
from scale_servers import (  # noqa: E402
    BROKER_NAME,
    CLUSTER,
    TIMEOUT_S,
    Proc,
    call,
    create_fields,
    pct,
    servers,
    table,
)

SPLIT = 800


# ----------------------------------------------------------------------------- topics


async def grow_to(client: RemotingClient, broker: Proc, have: int, size: int) -> int:
    while have < size:
        n = min(1000, size - have)
        configs = [
            TopicConfig(topic_name=f"Scale{have + i:07d}", read_queue_nums=8, write_queue_nums=8)
            for i in range(n)
        ]
        body = CreateTopicListRequestBody(topic_config_list=configs).encode()
        await call(client, broker.addr, RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, body=body)
        have += n
    return have


async def full_registration(client: RemotingClient, ns: Proc, broker: Proc) -> tuple[float, int]:
    """The broker's whole table registered in 800-topic parts with a new DataVersion, as its
    periodic registration after a change: (ms, body bytes)."""
    got = await call(client, broker.addr, RequestCode.GET_ALL_TOPIC_CONFIG)
    wrapper = TopicConfigSerializeWrapper.decode(got.body)
    items = list(wrapper.topic_config_table.items())
    version = DataVersion()
    header = RegisterBrokerRequestHeader(
        broker_name=BROKER_NAME,
        broker_addr=broker.addr,
        cluster_name=CLUSTER,
        ha_server_addr="127.0.0.1:1",
        broker_id=0,
        compressed=False,
        body_crc32=0,
    ).to_ext_fields()
    started = time.perf_counter()
    total = 0
    for i in range(0, len(items), SPLIT):
        part = TopicConfigSerializeWrapper(
            topic_config_table=dict(items[i : i + SPLIT]), data_version=version
        )
        body = RegisterBrokerBody(topic_config_serialize_wrapper=part).encode()
        total += len(body)
        await call(client, ns.addr, RequestCode.REGISTER_BROKER, header, body)
    return (time.perf_counter() - started) * 1000, total


async def routed(client: RemotingClient, ns: Proc, topic: str) -> None:
    """Return once the name server (another process: nothing to await) routes ``topic``."""
    for _ in range(2000):
        fields = {"topic": topic}
        r = await call(client, ns.addr, RequestCode.GET_ROUTEINFO_BY_TOPIC, fields)
        if r.code == ResponseCode.SUCCESS:
            return
        await asyncio.sleep(0.005)
    raise TimeoutError(f"{topic} not routed after 10 s")


async def topics_curve(sizes: list[int], creates: int, flush: str, trace: bool) -> None:
    rows: list[list[object]] = []
    gc_rows: list[list[object]] = []
    conf = {"flushDiskType": flush}  # SYNC_FLUSH: a create is answered after its fsync
    with (
        tempfile.TemporaryDirectory() as tmp,
        servers(Path(tmp), conf, gc_trace=trace) as (ns, broker),
    ):
        async with RemotingClient() as client:
            have = 0
            for size in sizes:
                grow_start = time.time()
                have = await grow_to(client, broker, have, size)
                create_start = time.time()
                create_ms, route_ready_ms = [], []
                spans: list[tuple[float, float]] = []
                for i in range(creates):
                    name = f"Probe{size:07d}_{i:03d}"
                    wall = time.time()
                    started = time.perf_counter()
                    fields = create_fields(name, 8)
                    await call(client, broker.addr, RequestCode.UPDATE_AND_CREATE_TOPIC, fields)
                    answered = time.perf_counter()
                    create_ms.append((answered - started) * 1000)
                    spans.append((wall, wall + (answered - started)))
                    await routed(client, ns, name)
                    route_ready_ms.append((time.perf_counter() - answered) * 1000)
                have += creates
                if trace:
                    gc_rows.append(gc_row(Path(tmp), size, grow_start, create_start, spans))
                    slow = sorted(range(creates), key=lambda i: -create_ms[i])[:3]
                    gc_rows[-1].append(", ".join(f"#{i} {create_ms[i]:.1f}" for i in slow))
                reg_ms, reg_bytes = await full_registration(client, ns, broker)
                lookups = []
                for i in range(200):
                    topic = f"Scale{(i * 7919) % max(1, size):07d}"
                    started = time.perf_counter()
                    await call(
                        client, ns.addr, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}
                    )
                    lookups.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                listed = await call(client, ns.addr, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
                list_ms = (time.perf_counter() - started) * 1000
                rows.append(
                    [
                        f"{size:,}",
                        f"{statistics.median(create_ms):.2f} / {pct(create_ms, 0.99):.2f}",
                        f"{max(route_ready_ms):.1f}",
                        f"{broker.rss_mb():.0f}",
                        f"{ns.rss_mb():.0f}",
                        f"{reg_ms:.0f} ({-(-have // SPLIT)} parts)",
                        f"{reg_bytes / 1e6:.1f}",
                        f"{statistics.median(lookups):.2f}",
                        f"{list_ms:.0f} ({len(listed.body) / 1e3:.0f} KB)",
                    ]
                )
                print(f"  topics {size:,} done", file=sys.stderr, flush=True)
    table(
        f"topics x 8 queues ({flush})",
        [
            "topics",
            "create p50 / p99 ms",
            "route has it, max ms",
            "broker RSS MB",
            "namesrv RSS MB",
            "full registration ms",
            "registration MB",
            "route lookup p50 ms",
            "topicList ms",
        ],
        rows,
    )
    if trace:
        table(
            "collections (bench/gc_trace.py): full N (longest ms), longest of any ms",
            [
                "topics",
                "broker: growth",
                "broker: creates",
                "namesrv: growth",
                "namesrv: creates",
                "creates overlapping a collection",
                "objects freed by full collections (broker / namesrv)",
                "slowest creates (#, ms)",
            ],
            gc_rows,
        )


def gc_row(
    work: Path, size: int, grow_start: float, create_start: float, spans: list[tuple[float, float]]
) -> list[object]:
    broker, ns = gc_trace.read(work / "broker.gc"), gc_trace.read(work / "ns.gc")
    end = spans[-1][1]
    freed = [
        sum(c.collected for c in found if c.generation == 2 and grow_start <= c.at < end)
        for found in (broker, ns)
    ]
    return [
        f"{size:,}",
        gc_trace.summary(broker, grow_start, create_start),
        gc_trace.summary(broker, create_start, end),
        gc_trace.summary(ns, grow_start, create_start),
        gc_trace.summary(ns, create_start, end),
        f"{gc_trace.hits(broker, spans)} / {gc_trace.hits(ns, spans)}",
        f"{freed[0]:,} / {freed[1]:,}",
    ]


# ----------------------------------------------------------------------------- queues


async def queues_curve(counts: list[int]) -> None:
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as (ns, broker):
        async with RemotingClient() as client:
            for n in counts:
                name = f"Queues{n}"
                started = time.perf_counter()
                await call(
                    client, broker.addr, RequestCode.UPDATE_AND_CREATE_TOPIC, create_fields(name, n)
                )
                create_ms = (time.perf_counter() - started) * 1000
                lookups, size = [], 0
                for _ in range(50):
                    started = time.perf_counter()
                    r = await call(
                        client, ns.addr, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": name}
                    )
                    lookups.append((time.perf_counter() - started) * 1000)
                    size = len(r.body)
                rows.append([n, f"{create_ms:.1f}", f"{statistics.median(lookups):.2f}", size])
    table("queues per topic", ["queues", "create ms", "route lookup p50 ms", "route bytes"], rows)


# ----------------------------------------------------------------------------- store


def store_curve(sizes_gib: list[float]) -> None:
    """bench/recovery_bench.py per size (kill -9 under load, normal and abnormal restart)."""
    recovery = BENCH.with_name("recovery_bench.py")
    if not recovery.exists():
        print("\nstore: bench/recovery_bench.py is not on this branch (issue 22 lever 5); skipped")
        return
    for gib in sizes_gib:
        print(f"\nstore {gib:g} GiB (bench/recovery_bench.py --gib {gib:g}):", flush=True)
        subprocess.run([sys.executable, str(recovery), "--gib", str(gib)], check=False)


# ----------------------------------------------------------------------------- backlog


async def backlog_curve(count: int, size: int) -> None:
    from rocketq.common.message import Message
    from rocketq.common.message_decoder import encode_batch_messages
    from rocketq.remoting.protocol.headers import PullMessageResponseHeader
    from rocketq.testing.wire import pull_request, send_request

    queues, batch = 8, 32
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as (_ns, broker):
        async with RemotingClient() as client:
            await call(
                client,
                broker.addr,
                RequestCode.UPDATE_AND_CREATE_TOPIC,
                create_fields("Backlog", queues),
            )
            body = encode_batch_messages(Message("Backlog", b"b" * size) for _ in range(batch))
            sem = asyncio.Semaphore(16)

            async def send(i: int) -> None:
                async with sem:
                    req = send_request(
                        "Backlog",
                        body,
                        queue_id=i % queues,
                        batch=True,
                        code=RequestCode.SEND_BATCH_MESSAGE,
                    )
                    r = await client.invoke(broker.addr, req, TIMEOUT_S)
                    assert r.code == ResponseCode.SUCCESS, r.remark

            started = time.perf_counter()
            await asyncio.gather(*(send(i) for i in range(count // batch)))
            send_s = time.perf_counter() - started
            sent = count // batch * batch

            async def drain(q: int) -> int:
                offset, got = 0, 0
                while True:
                    req = pull_request("BacklogGroup", "Backlog", q, offset, suspend_ms=0)
                    r = await client.invoke(broker.addr, req, TIMEOUT_S)
                    if r.code != ResponseCode.SUCCESS:
                        if r.code != ResponseCode.PULL_NOT_FOUND:
                            print(
                                f"  queue {q}: pull answered {r.code} {r.remark}", file=sys.stderr
                            )
                        return got
                    h = PullMessageResponseHeader.from_ext_fields(r.ext_fields)
                    got += h.next_begin_offset - offset
                    offset = h.next_begin_offset

            started = time.perf_counter()
            drained = sum(await asyncio.gather(*(drain(q) for q in range(queues))))
            drain_s = time.perf_counter() - started
    table(
        "backlog drained",
        ["messages", "size B", "send msg/s", "drain msg/s", "drained"],
        [[f"{sent:,}", size, f"{sent / send_s:,.0f}", f"{drained / drain_s:,.0f}", f"{drained:,}"]],
    )


# ----------------------------------------------------------------------------- main


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--only",
        choices=["topics", "topics-controller", "queues", "clients", "store", "backlog"],
        action="append",
    )
    ap.add_argument("--topics", default="1000,5000,20000,50000,100000")
    ap.add_argument("--creates", type=int, default=100)
    ap.add_argument("--flush", choices=["ASYNC_FLUSH", "SYNC_FLUSH"], default="ASYNC_FLUSH")
    ap.add_argument(
        "--gc-trace",
        action="store_true",
        help="topics: time every full collection in both servers (bench/gc_trace.py)",
    )
    ap.add_argument("--queues", default="8,64,256,1024")
    ap.add_argument("--clients", default="100,1000,10000")
    ap.add_argument("--consumers", type=int, default=1000)
    ap.add_argument("--store-gib", default="1,4,20")
    ap.add_argument("--backlog", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    only = set(args.only or ["topics", "queues", "clients", "store", "backlog"])
    print(f"scale bench: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if "topics" in only:
        asyncio.run(topics_curve(ints(args.topics), args.creates, args.flush, args.gc_trace))
    if "topics-controller" in only:
        from scale_controller import topics_controller_curve

        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(topics_controller_curve(ints(args.topics), args.creates, Path(tmp)))
    if "queues" in only:
        asyncio.run(queues_curve(ints(args.queues)))
    if "clients" in only:
        from scale_clients import clients_curve

        asyncio.run(clients_curve(ints(args.clients), args.consumers))
    if "store" in only:
        store_curve([float(x) for x in args.store_gib.split(",") if x])
    if "backlog" in only:
        asyncio.run(backlog_curve(args.backlog, args.size))


if __name__ == "__main__":
    main()
