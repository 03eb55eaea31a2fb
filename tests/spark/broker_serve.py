"""A name server and one broker in a process of their own (as ``bench/spark_topic_bench.py``
runs them), for tests that need the broker off the test's GIL.

``python -m tests.spark.broker_serve STORE TOPIC CHECK_INTERVAL_MS TIMEOUT_MS [BATCHES]`` (BATCHES
``off``: ``transactionBatchEnable=false``, one half per row) prints one JSON
line (``namesrv``, ``broker``) once serving, serves until its stdin closes, then prints a
second line: the check-backs sent and the messages in TOPIC's four queues.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from rocketq.broker.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv

QUEUES = 4


async def serve(
    store: str, topic: str, interval_ms: int, timeout_ms: int, batches: bool = True
) -> None:
    props = {"mapedFileSizeCommitLog": str(64 * 1024 * 1024)}
    async with (
        run_namesrv() as ns,
        run_broker(
            Path(store),
            namesrv_addr=ns.addr,
            store_properties=props,
            transaction_check_interval_ms=interval_ms,
            transaction_time_out_ms=timeout_ms,
            transaction_batch_enable=batches,
        ) as broker,
    ):
        broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=topic, read_queue_nums=QUEUES, write_queue_nums=QUEUES)
        )
        await broker.register_broker_all()
        print(json.dumps({"namesrv": ns.addr, "broker": broker.broker_addr}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        checker = broker.transactional_message_check_service
        store_ = broker.message_store
        for _ in range(300):  # what is stored, dispatched: the last commits may be in flight
            if store_.dispatch_behind_bytes() == 0:
                break
            await asyncio.sleep(0.1)
        summary = {
            "checks_sent": 0 if checker is None else checker.checks_sent,
            "messages": sum(store_.get_max_offset_in_queue(topic, q) for q in range(QUEUES)),
        }
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    store, topic, interval, timeout = sys.argv[1:5]
    batches = sys.argv[5:6] != ["off"]
    asyncio.run(serve(store, topic, int(interval), int(timeout), batches))
