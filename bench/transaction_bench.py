"""Transactional send throughput against plain sends, our blocking client, one broker.

    .venv/bin/python bench/transaction_bench.py --count 2000 --size 256

The name server + broker run in a subprocess (``client_bench.py serve``). Rows, each with
``--threads`` senders: plain sync send, ``send_message_in_transaction`` (half + local
transaction + END_TRANSACTION, two round trips), and ``send_half_message`` of a batch then
``end_transaction`` of each handle from a second "driver" producer (the Spark sink's split).
Prints one JSON line per row.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve()
SERVER = BENCH.with_name("client_bench.py")


class Commit:
    def execute_local_transaction(self, msg: Any, arg: Any) -> Any:
        from rocketq.client import LocalTransactionState

        return LocalTransactionState.COMMIT

    def check_local_transaction(self, msg: Any) -> Any:
        from rocketq.client import LocalTransactionState

        return LocalTransactionState.COMMIT


def timed(threads: int, count: int, work: Any) -> float:
    """Messages per second of ``count`` calls of ``work(i)`` spread over ``threads``."""
    per = count // threads
    pool = [
        threading.Thread(target=lambda t=t: [work(t * per + i) for i in range(per)])
        for t in range(threads)
    ]
    start = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return per * threads / (time.perf_counter() - start)


def run_rows(namesrv: str, count: int, size: int, threads: int) -> list[dict[str, Any]]:
    from rocketq.client import LocalTransactionState, Message, Producer, TransactionProducer

    body = b"x" * size
    rows: list[dict[str, Any]] = []
    with Producer("pg-plain", namesrv_addr=namesrv, instance_name="plain") as plain:
        plain.send(Message("TxBench", body))  # route + topic creation outside the timing
        tps = timed(threads, count, lambda i: plain.send(Message("TxBench", body)))
        rows.append({"row": "plain sync send", "threads": threads, "msgs_per_s": round(tps)})
    with TransactionProducer("pg-tx", Commit(), namesrv_addr=namesrv, instance_name="tx") as tx:
        tps = timed(
            threads, count, lambda i: tx.send_message_in_transaction(Message("TxBench", body))
        )
        rows.append(
            {"row": "send_message_in_transaction", "threads": threads, "msgs_per_s": round(tps)}
        )
        handles: list[Any] = [None] * count
        tps = timed(
            threads,
            count,
            lambda i: handles.__setitem__(i, tx.send_half_message(Message("TxBench", body))),
        )
        rows.append({"row": "send_half_message", "threads": threads, "msgs_per_s": round(tps)})
    with TransactionProducer(
        "pg-tx", Commit(), namesrv_addr=namesrv, instance_name="driver"
    ) as driver:
        sent = [h for h in handles if h is not None]
        tps = timed(
            threads,
            len(sent),
            lambda i: driver.end_transaction(None, sent[i], LocalTransactionState.COMMIT),
        )
        rows.append(
            {"row": "end_transaction (driver)", "threads": threads, "msgs_per_s": round(tps)}
        )
    return rows


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as store:
        server = subprocess.Popen(
            [sys.executable, str(SERVER), "serve", "--store", store],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            namesrv = json.loads(server.stdout.readline())["namesrv"]
            for threads in args.threads:
                for row in run_rows(namesrv, args.count, args.size, threads):
                    print(json.dumps(row), flush=True)
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(30)


if __name__ == "__main__":
    main(sys.argv[1:])
