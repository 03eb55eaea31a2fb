"""Broker benchmark: rocketq against Redis Streams, NATS JetStream and RabbitMQ, same load.

    .venv/bin/python bench/broker_bench.py            # full run, about 5 minutes
    .venv/bin/python bench/broker_bench.py --quick    # smoke run
    .venv/bin/python bench/broker_bench.py --repeat 3 # every ratio the median of 3 runs
    .venv/bin/python bench/broker_bench.py --systems rocketq,redis,nats --only latency --repeat 3

Phases, each bounded by a message count and a time cap, 1 KiB bodies, the same load
generator (one asyncio process) for every system:

- ``sync N``: N senders (N = 1, 8, 32), each waiting for its reply before the next send.
  rocketq: SEND_MESSAGE_V2 to one of 4 queues (the peers' equivalents: peer_load.py).
- ``batch 32``: 8 senders sending 32 messages a request until the 100,000-message backlog is
  built (rocketq: SEND_BATCH_MESSAGE). The server's RssAnon is read with the backlog stored.
- ``drain``: 4 consumers (one per queue / stream) read the backlog, 32 messages a request,
  each reply turned into message objects (rocketq: ``decode_messages``, as its client does).
- ``latency``: one producer paced at 1,000 msg/s and a live consumer in the same process
  (rocketq: the asyncio Producer and PushConsumer through the name server); the RT columns
  are send-to-receive times. ``--only latency`` runs this phase alone (rocketq, Redis, NATS;
  with each server's CPU per message) and prints where the slow messages fall
  (``latency_histogram.py``); ``--latency-count`` sets its message count.
- ``rocketq-sync``: the ``sync 32`` phase against a second broker with SYNC_FLUSH (each
  reply after fdatasync, group commit), printed as a ratio to the ASYNC_FLUSH row.
- ``grpc``: the gRPC path (bench/grpc_bench.py): the official Python 5.x client's ``sync 32``
  and receive+ack against ``rocketq server --grpc-port``, beside rocketq's client over
  remoting against a ``ROCKETQ_NATIVE=0`` server; skipped when ``.venv-rmq5`` is missing.

Each system runs in its own child process (``peers.py``). Printed per phase: TPS, average,
p50, p99 and max RT, the server's CPU microseconds per message and RssAnon, then
rocketq / peer ratios. With ``--repeat N`` the systems run N rounds in turn (rocketq, the
peers, rocketq, ... so a noisy minute hits every system alike), each round's table is
printed, then the median of each figure over the rounds and every ratio as the median of
the N rounds' ratios, with their range (issue 22: "ratios are the median of 3 runs in one
invocation").
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import latency_histogram
import peer_load
import peers
from figures import BATCH, QUEUES, TIMEOUT_S, Figures, Plan, Probe, paced, run_senders

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.client.aio.api import send_v2_ext_fields
from rocketq.common.message import MessageExt
from rocketq.common.message_const import PROPERTY_WAIT_STORE_MSG_OK
from rocketq.common.message_decoder import decode_messages, encode_batch_messages
from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader, SendMessageRequestHeader
from rocketq.response_code import ResponseCode


def send_command(topic: str, queue_id: int, body: bytes, *, batch: bool = False) -> RemotingCommand:
    header = SendMessageRequestHeader(
        producer_group="BenchPG", topic=topic, default_topic="TBW102",
        default_topic_queue_nums=QUEUES, queue_id=queue_id, sys_flag=0,
        born_timestamp=int(time.time() * 1000), flag=0,
        properties="" if batch else "WAIT\x01true\x02", batch=batch,
    )  # fmt: skip
    code = RequestCode.SEND_BATCH_MESSAGE if batch else RequestCode.SEND_MESSAGE_V2
    return RemotingCommand.create_request(code, send_v2_ext_fields(header), body)


def pull_command(topic: str, queue_id: int, offset: int) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group="BenchCG", topic=topic, queue_id=queue_id, queue_offset=offset,
        max_msg_nums=BATCH, sys_flag=0x4, commit_offset=0, suspend_timeout_millis=1000,
        sub_version=0, subscription="*",
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


async def sync_phases(
    client: RemotingClient, addr: str, name: str, senders: tuple[int, ...], plan: Plan,
    probe: Probe,
) -> list[Figures]:  # fmt: skip
    body = os.urandom(plan.size)
    r = await client.invoke(addr, send_command("BenchSync", 0, body), TIMEOUT_S)
    assert r.code == ResponseCode.SUCCESS, r.remark  # auto-create before timing
    out = []
    for n in senders:
        fig = Figures(name, f"sync {n}")

        async def send(sender: int, seq: int) -> None:
            cmd = send_command("BenchSync", seq % QUEUES, body)
            r = await client.invoke(addr, cmd, TIMEOUT_S)
            assert r.code == ResponseCode.SUCCESS, r.remark

        await run_senders(fig, n, plan.sync_count(n), 1, plan.cap_s, send, probe)
        out.append(fig)
    return out


async def bench_rocketq(server: peers.Server, plan: Plan) -> list[Figures]:
    addr = f"127.0.0.1:{server.port}"
    probe = Probe(server.cpu_s)
    async with RemotingClient() as client:
        out = await sync_phases(client, addr, "rocketq", plan.senders, plan, probe)
        fig = await batch_rocketq(client, server, plan, probe)
        out.append(fig)
        out.append(await drain_rocketq(client, addr, fig.messages + 1, plan, probe))
    out.append(await latency_rocketq(server, plan, os.urandom(plan.size)))
    return out


async def batch_rocketq(
    client: RemotingClient, server: peers.Server, plan: Plan, probe: Probe
) -> Figures:
    """8 senders of 32-message batches build the backlog (one message first creates the
    topic); the server's RssAnon is read once it is stored."""
    addr = f"127.0.0.1:{server.port}"
    body = os.urandom(plan.size)
    msg = Message("BenchBacklog", body)
    msg.put_property(PROPERTY_WAIT_STORE_MSG_OK, "true")  # a system property: set as is
    batch_body = encode_batch_messages([msg] * BATCH)
    r = await client.invoke(addr, send_command("BenchBacklog", 0, body), TIMEOUT_S)
    assert r.code == ResponseCode.SUCCESS, r.remark
    fig = Figures("rocketq", "batch 32")

    async def send_batch(sender: int, seq: int) -> None:
        cmd = send_command("BenchBacklog", (seq // BATCH) % QUEUES, batch_body, batch=True)
        r = await client.invoke(addr, cmd, TIMEOUT_S)
        assert r.code == ResponseCode.SUCCESS, r.remark

    await run_senders(fig, 8, plan.backlog, BATCH, plan.cap_s * 3, send_batch, probe)
    fig.rss_mb = server.rss_anon_mb()
    return fig


async def bench_rocketq_sync_flush(server: peers.Server, plan: Plan) -> list[Figures]:
    addr = f"127.0.0.1:{server.port}"
    async with RemotingClient() as client:
        return await sync_phases(client, addr, "rocketq-sync", (32,), plan, Probe(server.cpu_s))


async def drain_rocketq(
    client: RemotingClient, addr: str, backlog: int, plan: Plan, probe: Probe
) -> Figures:
    fig = Figures("rocketq", "drain")
    probe.start()
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
            # decoded into MessageExt as the client's pull does (redis-py and nats-py build
            # their message objects too)
            fig.messages += len(decode_messages(r.body))
            offset = int(r.ext_fields["nextBeginOffset"])

    await asyncio.gather(*(consume(q) for q in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    probe.stop(fig)
    return fig


async def latency_rocketq(server: peers.Server, plan: Plan, body: bytes) -> Figures:
    """A live PushConsumer (long polling) and a paced Producer through the name server."""
    fig = Figures("rocketq", "latency")
    namesrv = f"127.0.0.1:{server.namesrv_port}"

    async def on_messages(msgs: list[MessageExt]) -> ConsumeStatus:
        # an asyncio listener, as the peers' consumers are tasks of the same loop (a plain
        # function would run in the consumer's thread pool: one more thread hop)
        for msg in msgs:
            if len(msg.body) == plan.size:  # not the message that created the topic
                peer_load.record_latency(fig, msg.body)
        return ConsumeStatus.CONSUME_SUCCESS

    async with Producer("BenchLatencyPG", namesrv_addr=namesrv) as producer:
        await producer.send(Message("BenchLatency", b"create"))  # the topic exists first
        consumer = PushConsumer(
            "BenchLatencyCG", namesrv_addr=namesrv, consume_from_where="CONSUME_FROM_LAST_OFFSET"
        )
        consumer.subscribe("BenchLatency", "*")
        consumer.register_message_listener(on_messages)
        await consumer.start()
        try:
            deadline = time.perf_counter() + TIMEOUT_S
            while len(consumer.assigned_queues()) < QUEUES and time.perf_counter() < deadline:  # noqa: ASYNC110 -- bounded wait for the rebalance
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the pull loops park their first long poll

            async def send(seq: int, t_sent: float) -> None:
                await producer.send(Message("BenchLatency", peer_load.stamped(body, t_sent)))

            await paced(fig, plan, send, lambda: len(fig.rts_ms))
        finally:
            await consumer.shutdown()
    return fig


async def latency_only_rocketq(server: peers.Server, plan: Plan) -> list[Figures]:
    """``--only latency``: the latency phase alone, with the server's CPU per message."""
    probe = Probe(server.cpu_s)
    probe.start()
    fig = await latency_rocketq(server, plan, os.urandom(plan.size))
    probe.stop(fig)
    return [fig]


Runner = Callable[[peers.Server, Plan], Awaitable[list[Figures]]]
SYSTEMS: dict[str, Runner] = {
    "rocketq": bench_rocketq,
    "rocketq-sync": bench_rocketq_sync_flush,
    "redis": peer_load.bench_redis,
    "nats": peer_load.bench_nats,
    "rabbitmq": peer_load.bench_rabbitmq,
}
LATENCY_ONLY: dict[str, Runner] = {
    "rocketq": latency_only_rocketq,
    "redis": peer_load.latency_only_redis,
    "nats": peer_load.latency_only_nats,
}
SERVERS = {
    "rocketq": peers.rocketq_server,
    "rocketq-sync": peers.rocketq_sync_flush_broker,
    "redis": peers.redis_server,
    "nats": peers.nats_server,
    "rabbitmq": peers.rabbitmq_server,
}


def run_system(name: str, plan: Plan, runners: dict[str, Runner] = SYSTEMS) -> list[Figures]:
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as d, SERVERS[name](d) as server:
        return event_loop.run(runners[name](server, plan))


def print_table(rows: list[Figures]) -> None:
    print(f"{'system':<14}{'phase':<10}{'msgs':>9}{'TPS':>10}{'avg ms':>9}{'p50':>8}"
          f"{'p99':>8}{'max':>9}{'cpu us/msg':>12}{'rss MB':>9}")  # fmt: skip
    for f in rows:
        r = f.row()
        rss = r["rss_mb"] or ""
        print(
            f"{r['system']:<14}{r['phase']:<10}{r['messages']:>9}{r['tps']:>10}"
            f"{r['rt_avg_ms']:>9}{r['rt_p50_ms']:>8}{r['rt_p99_ms']:>8}{r['rt_max_ms']:>9}"
            f"{r['cpu_us_per_msg']:>12}{rss:>9}"
        )


def median_rows(runs: list[list[Figures]]) -> list[dict[str, object]]:
    """Per system and phase, the median of each figure over the runs that have it."""
    keyed: dict[tuple[str, str], list[dict[str, object]]] = {}
    for rows in runs:
        for f in rows:
            keyed.setdefault((f.system, f.phase), []).append(f.row())
    out = []
    for (system, phase), rows_of in keyed.items():
        row: dict[str, object] = {"system": system, "phase": phase, "runs": len(rows_of)}
        for key in ("messages", "tps", "rt_avg_ms", "rt_p50_ms", "rt_p99_ms", "rt_max_ms",
                    "cpu_us_per_msg", "rss_mb"):  # fmt: skip
            row[key] = statistics.median(float(r[key] or 0) for r in rows_of)  # type: ignore[arg-type]
        out.append(row)
    return out


def print_medians(runs: list[list[Figures]]) -> None:
    print(f"median of {len(runs)} runs:")
    print(f"{'system':<14}{'phase':<10}{'TPS':>10}{'p50':>8}{'p99':>8}{'cpu us/msg':>12}")
    for r in median_rows(runs):
        print(
            f"{r['system']:<14}{r['phase']:<10}{r['tps']:>10.0f}{r['rt_p50_ms']:>8.3f}"
            f"{r['rt_p99_ms']:>8.3f}{r['cpu_us_per_msg']:>12.1f}"
        )


def _median_cell(label: str, values: list[float], unit: str = "x") -> str:
    """``label 1.19x`` for one run; ``label 1.19x (1.05-1.23)``: the median and range."""
    med = statistics.median(values)
    if len(values) == 1:
        return f"{label} {med:.2f}{unit}"
    return f"{label} {med:.2f}{unit} ({min(values):.2f}-{max(values):.2f})"


def ratio_cells(runs: list[list[Figures]], peer: str) -> list[str]:
    """rocketq / ``peer`` per phase: each ratio taken within one run (the two systems ran
    minutes apart), then the median over the runs."""
    phases: list[str] = []
    for rows in runs:
        phases += [f.phase for f in rows if f.system == "rocketq" and f.phase not in phases]
    cells = []
    for phase in phases:
        ratios, p50s, p99s = [], [], []
        for rows in runs:
            mine = next((f for f in rows if f.system == "rocketq" and f.phase == phase), None)
            theirs = next((f for f in rows if f.system == peer and f.phase == phase), None)
            if mine is None or theirs is None:
                continue
            if phase == "latency":
                p50s.append((mine.row()["rt_p50_ms"], theirs.row()["rt_p50_ms"]))
                p99s.append((mine.row()["rt_p99_ms"], theirs.row()["rt_p99_ms"]))
            elif theirs.tps:
                ratios.append(mine.tps / theirs.tps)
        if p50s:
            mid50 = [statistics.median(x) for x in zip(*p50s, strict=True)]
            mid99 = [statistics.median(x) for x in zip(*p99s, strict=True)]
            cells.append(
                f"latency p50 {mid50[0]:.3f}/{mid50[1]:.3f} ms p99 {mid99[0]:.3f}/{mid99[1]:.3f} ms"
            )
        elif ratios:
            cells.append(_median_cell(phase, ratios))
    return cells


def print_ratios(runs: list[list[Figures]]) -> None:
    systems = {f.system for rows in runs for f in rows}
    what = f"median of {len(runs)} runs (range)" if len(runs) > 1 else "one run"
    for peer in sorted(systems - {"rocketq", "rocketq-sync"}):
        print(f"rocketq / {peer}, {what}: " + ", ".join(ratio_cells(runs, peer)))
    flush_ratios = []
    for rows in runs:
        ours = next((f for f in rows if f.system == "rocketq" and f.phase == "sync 32"), None)
        sync = next((f for f in rows if f.system == "rocketq-sync"), None)
        if ours is not None and sync is not None and ours.tps:
            flush_ratios.append(sync.tps / ours.tps)
    if flush_ratios:
        print(_median_cell("rocketq SYNC_FLUSH / ASYNC_FLUSH, sync 32:", flush_ratios))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts (smoke run)")
    ap.add_argument("--systems", default="rocketq,rocketq-sync,redis,nats,rabbitmq,grpc")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--json", action="store_true", help="also print JSON rows")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of every system; ratios are their median"
    )
    ap.add_argument("--only", choices=("latency",), help="one phase alone (rocketq, redis, nats)")
    ap.add_argument("--latency-count", type=int, help="messages of the latency phase")
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    grpc_path = "grpc" in systems  # its own table: bench/grpc_bench.py
    systems = [s for s in systems if s != "grpc"]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        ap.error(f"unknown systems {sorted(unknown)}; known: {sorted(SYSTEMS)}")
    runners = SYSTEMS
    if args.only == "latency":
        runners, grpc_path = LATENCY_ONLY, False
        if set(systems) - set(LATENCY_ONLY):
            ap.error(f"--only latency runs {sorted(LATENCY_ONLY)}")
    if args.quick:
        plan = Plan(args.size, (1, 8, 32), 100, 2_000, 3_200, 10.0, 1_000, 1_000)
    else:
        plan = Plan(args.size, (1, 8, 32), 2_000, 20_000, 100_000, 20.0, 1_000, 5_000)
    if args.latency_count:
        plan = dataclasses.replace(plan, latency_count=args.latency_count)
    peers.ensure_installed(systems)
    kind = "uvloop" if event_loop.uvloop_wanted() and event_loop.uvloop_installed() else "asyncio"
    print(f"event loop of the load generator and the rocketq servers: {kind}", flush=True)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    runs: list[list[Figures]] = []
    for i in range(args.repeat):
        rows: list[Figures] = []
        for name in systems:
            print(f"running {name} (run {i + 1} of {args.repeat}) ...", flush=True)
            rows += run_system(name, plan, runners)
        runs.append(rows)
        if rows:
            print(f"run {i + 1} of {args.repeat}:")
            print_table(rows)
            latency_histogram.print_histograms(rows)
    if any(runs):
        if len(runs) > 1:
            print_medians(runs)
        print_ratios(runs)
    if args.json:
        for i, rows in enumerate(runs):
            for f in rows:
                print(json.dumps({"run": i + 1, **f.row()}))
    if grpc_path:
        import grpc_bench

        if not grpc_bench.RMQ5_PYTHON.exists():
            print(f"grpc: skipped, {grpc_bench.RMQ5_PYTHON} missing (make interop-rmq5)")
            return
        print("running grpc ...", flush=True)
        grpc_bench.print_rows(grpc_bench.run(plan.max_sync, args.size))


if __name__ == "__main__":
    main()
