"""The ``clients`` curve of bench/scale_bench.py: 100 ... 10,000 connections to one broker
(RLIMIT_NOFILE raised), each heartbeating once as a producer, the first ``consumers`` of them
also consumers of one group; broker RSS per connection, broker CPU per heartbeat (its idle
work subtracted), and the group's rebalance (every consumer fetches the group's ids and
computes its queues; wall ms).
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

from scale_servers import BROKER_NAME, TIMEOUT_S, Proc, call, create_fields, servers, table

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.bodies import HeartbeatData, ProducerData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode


def raise_nofile(need: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, need))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


async def clients_curve(counts: list[int], consumers: int) -> None:
    limit = raise_nofile(max(counts) + 1024)  # the broker, spawned after, inherits it
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as (_ns, broker):
        async with RemotingClient() as admin:
            await call(
                admin,
                broker.addr,
                RequestCode.UPDATE_AND_CREATE_TOPIC,
                create_fields("ClientTopic", 8),
            )
        opened: list[RemotingClient] = []
        connecting = asyncio.Semaphore(100)  # within the broker's accept backlog
        prev_n = 0
        try:
            for n in counts:
                if n + 64 > limit:
                    print(f"  clients {n}: RLIMIT_NOFILE {limit} too low, skipped", file=sys.stderr)
                    continue
                rss_before = broker.rss_mb()
                while len(opened) < n:
                    c = RemotingClient(connect_timeout_s=30.0)
                    await c.__aenter__()
                    opened.append(c)

                async def beat(i: int, c: RemotingClient) -> None:
                    r = await c.invoke(broker.addr, beat_request(i, consumers), TIMEOUT_S)
                    assert r.code == ResponseCode.SUCCESS

                async def connect(i: int, c: RemotingClient) -> None:
                    async with connecting:
                        await beat(i, c)

                await asyncio.gather(*(connect(i, c) for i, c in enumerate(opened)))
                idle_cpu = broker.cpu_s()  # the broker's own background work, subtracted
                await asyncio.sleep(1.0)
                idle_per_s = broker.cpu_s() - idle_cpu
                cpu = broker.cpu_s()
                started = time.perf_counter()
                await asyncio.gather(*(beat(i, c) for i, c in enumerate(opened)))
                beat_s = time.perf_counter() - started
                busy = broker.cpu_s() - cpu - idle_per_s * beat_s
                cpu_us = max(0.0, busy) * 1e6 / n
                rss_kb = (broker.rss_mb() - rss_before) * 1024 / max(1, n - prev_n)
                prev_n = n
                group_n = min(n, consumers)
                started = time.perf_counter()
                await asyncio.gather(*(rebalance(broker, i, opened[i]) for i in range(group_n)))
                rebalance_ms = (time.perf_counter() - started) * 1000
                rows.append(
                    [
                        n,
                        f"{broker.rss_mb():.0f}",
                        f"{rss_kb:.1f}",
                        f"{cpu_us:.0f}",
                        f"{beat_s * 1000:.0f}",
                        f"{rebalance_ms:.0f} ({group_n})",
                    ]
                )
                print(f"  clients {n} done", file=sys.stderr, flush=True)
        finally:
            for c in opened:
                await c.__aexit__(None, None, None)
    table(
        "connected clients (heartbeat as producer; the first ones consumers of one group)",
        [
            "clients",
            "broker RSS MB",
            "RSS per new client KB",
            "broker CPU us / heartbeat (idle subtracted)",
            "one round ms",
            "rebalance ms (consumers)",
        ],
        rows,
    )


async def rebalance(broker: Proc, i: int, client: RemotingClient) -> None:
    """One consumer's rebalance of ClientTopic: the group's ids from the broker, its queues by
    AllocateMessageQueueAveragely."""
    from rocketq.client.allocate_strategy import allocate_strategy
    from rocketq.common.message import MessageQueue
    from rocketq.remoting.protocol import fastjson

    r = await call(
        client, broker.addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "ScaleGroup"}
    )
    ids = sorted(fastjson.loads(r.body, "consumer list")["consumerIdList"])
    queues = [MessageQueue("ClientTopic", BROKER_NAME, q) for q in range(8)]
    allocate_strategy("AVG").allocate("ScaleGroup", f"client-{i}", queues, ids)


def beat_request(i: int, consumers: int) -> RemotingCommand:
    """HEART_BEAT of client ``i``: a producer; the first ``consumers`` also consume
    ClientTopic in ScaleGroup."""
    from rocketq.testing.wire import heartbeat

    if i < consumers:
        return heartbeat(f"client-{i}", "ScaleGroup", "ClientTopic")
    data = HeartbeatData(client_id=f"client-{i}", producer_data_set=[ProducerData(group_name="PG")])
    return RemotingCommand.create_request(RequestCode.HEART_BEAT, body=data.encode())
