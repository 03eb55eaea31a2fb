"""Request-reply round trips and admin call latency on one in-process broker.

    .venv/bin/python bench/request_reply_bench.py --count 500

Name server, broker, requester and replier share one process and one event loop (so the
numbers include all four parts' CPU on one core). Rows: ``Producer.request`` round trip
(request -> broker -> push consumer -> reply -> broker -> PUSH_REPLY_MESSAGE_TO_CLIENT), and
three admin calls (GET_CONSUME_STATS, GET_CONSUMER_RUNNING_INFO forwarded to the consumer,
QUERY_MESSAGE by key). Each row: count, p50 and p99 in ms, one JSON line. Bounded by
``--count`` and ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rocketq.admin import AsyncAdminClient
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.client.aio.request_reply import create_reply_message
from rocketq.common.message import MessageExt
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting import event_loop
from rocketq.testing.broker import run_broker, run_namesrv

FAST = {"poll_name_server_interval_s": 1.0, "heartbeat_broker_interval_s": 1.0}


async def timed(count: int, deadline: float, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    samples = []
    for i in range(count):
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        await call(i)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def row(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    p50 = statistics.median(ordered)
    fields = {"row": name, "count": len(ordered), "p50_ms": round(p50, 3), "p99_ms": round(p99, 3)}
    print(json.dumps(fields))


async def run(count: int, max_seconds: float) -> None:
    deadline = time.monotonic() + max_seconds
    with tempfile.TemporaryDirectory() as tmp:
        async with run_namesrv() as ns, run_broker(Path(tmp), namesrv_addr=ns.addr) as broker:
            replier = Producer("bench-reply", namesrv_addr=ns.addr, instance_name="r", **FAST)
            await replier.start()

            async def listen(msgs: list[MessageExt]) -> ConsumeStatus:
                for msg in msgs:
                    await replier.send(create_reply_message(msg, msg.body))
                return ConsumeStatus.CONSUME_SUCCESS

            consumer = PushConsumer("bench-rr", namesrv_addr=ns.addr, instance_name="r", **FAST)
            consumer.subscribe("BenchRequest")
            consumer.register_message_listener(listen)
            broker.topic_config_manager.update_topic_config(
                TopicConfig(topic_name="BenchRequest", read_queue_nums=4, write_queue_nums=4)
            )
            await broker.register_broker_all()
            await consumer.start()
            try:
                async with Producer("bench-req", namesrv_addr=ns.addr, **FAST) as producer:
                    await producer.request(Message("BenchRequest", b"warm"), timeout_s=30)
                    row(
                        "request_reply",
                        await timed(
                            count,
                            deadline,
                            lambda i: producer.request(
                                Message("BenchRequest", b"x" * 128, keys=f"k{i % 10}"),
                                timeout_s=10,
                            ),
                        ),
                    )
                async with AsyncAdminClient(ns.addr) as admin:
                    client_id = consumer.config.build_client_id()
                    admin_rows: dict[str, Callable[[int], Awaitable[Any]]] = {
                        "admin_consume_stats": lambda i: admin.examine_consume_stats("bench-rr"),
                        "admin_running_info": lambda i: admin.get_consumer_running_info(
                            "bench-rr", client_id
                        ),
                        "admin_query_by_key": lambda i: admin.query_message("BenchRequest", "k1"),
                    }
                    for name, call in admin_rows.items():
                        row(name, await timed(count, deadline, call))
            finally:
                await consumer.shutdown()
                await replier.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    args = parser.parse_args()
    event_loop.run(run(args.count, args.max_seconds))


if __name__ == "__main__":
    main()
