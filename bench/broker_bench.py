"""Broker throughput: SEND_MESSAGE and PULL_MESSAGE over loopback against an in-process broker.

    .venv/bin/python bench/broker_bench.py --count 20000 --size 256 --concurrency 64

Prints one JSON line: sends/s and pulled msgs/s (ASYNC_FLUSH, one topic, 4 queues).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codes import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.e2e.wire


async def bench(count: int, size: int, concurrency: int, flush: str) -> dict[str, float]:
    from tests.e2e.wire import pull_request, send_request

    body = b"x" * size
    with tempfile.TemporaryDirectory() as tmp:
        props = {"flushDiskType": flush, "mapedFileSizeCommitLog": str(256 * 1024 * 1024)}
        async with (
            run_namesrv() as ns,
            run_broker(Path(tmp), namesrv_addr=ns.addr, store_properties=props) as broker,
            RemotingClient() as client,
        ):
            addr = broker.broker_addr
            await client.invoke(addr, send_request("BenchTopic", body), 10)
            queue = iter(range(count))

            async def sender() -> None:
                for i in queue:
                    r = await client.invoke(
                        addr, send_request("BenchTopic", body, queue_id=i % 4), 10
                    )
                    assert r.code == ResponseCode.SUCCESS, r.remark

            start = time.perf_counter()
            await asyncio.gather(*(sender() for _ in range(concurrency)))
            send_s = time.perf_counter() - start
            pulled = 0
            start = time.perf_counter()
            for q in range(4):
                offset = 0
                while True:
                    r = await client.invoke(
                        addr, pull_request("BenchGroup", "BenchTopic", q, offset), 10
                    )
                    if r.code != ResponseCode.SUCCESS:
                        break
                    offset = int(r.ext_fields["nextBeginOffset"])
                pulled += offset
            pull_s = time.perf_counter() - start
    return {
        "count": count,
        "size": size,
        "concurrency": concurrency,
        "flush": flush,
        "send_per_s": round(count / send_s, 1),
        "pull_msgs_per_s": round(pulled / pull_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--flush", choices=["ASYNC_FLUSH", "SYNC_FLUSH"], default="ASYNC_FLUSH")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.count, args.size, args.concurrency, args.flush))))


if __name__ == "__main__":
    main()
