"""SQL92 property filters: selector evaluation in process, and pull scans through a broker.

    .venv/bin/python bench/filter_bench.py [--count 20000]

1. ``evaluate``: ``BooleanExpression.matches`` of a three-condition selector on one message's
   properties, and ``decode_record_properties`` of one stored record (what the broker does per
   record for an SQL92 pull), per second.
2. ``scan``: ``--count`` messages with properties in one queue of a broker on 127.0.0.1, then
   pulls (32 a pull, following nextBeginOffset) over the whole queue with a TAG expression and
   an SQL92 selector that match nothing, and with ``*`` and an SQL92 selector that match all:
   consume-queue units scanned per second. Sends are bounded by ``--count`` and 120 s.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocketq.common.filter import parse_sql92
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_record_properties, encode_message
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker
from rocketq.testing.wire import send_request

SELECTOR = "a > 100 AND color IN ('red', 'blue') AND TAGS IS NOT NULL"
TIME_CAP_S = 120.0


def rate(fn: object, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return n / (time.perf_counter() - start)


def bench_evaluate() -> None:
    selector = parse_sql92(SELECTOR)
    props = {"a": "500", "color": "red", "TAGS": "TagA", "KEYS": "k1", "UNIQ_KEY": "0" * 32}
    record = bytes(encode_message(MessageExt(topic="B", body=b"x" * 1024, properties=props)))
    print(f"evaluate {SELECTOR!r}: {rate(lambda: selector.matches(props), 200_000):,.0f}/s")
    decoded = rate(lambda: decode_record_properties(record), 200_000)
    print(f"decode_record_properties: {decoded:,.0f}/s")


def pull(expression: str, expression_type: str, offset: int) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group="G",
        topic="B",
        queue_id=0,
        queue_offset=offset,
        max_msg_nums=32,
        sys_flag=0x4,
        commit_offset=-1,
        suspend_timeout_millis=0,
        sub_version=0,
        subscription=expression,
        expression_type=expression_type,
    )
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


async def bench_scan(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            run_broker(Path(tmp) / "store", enable_property_filter=True) as broker,
            RemotingClient() as client,
        ):
            limit = asyncio.Semaphore(32)
            deadline = time.monotonic() + TIME_CAP_S

            async def send(i: int) -> None:
                async with limit:
                    if time.monotonic() > deadline:
                        return
                    props = {"a": str(i), "color": "red"}
                    request = send_request("B", b"x" * 256, tags=f"T{i % 10}", extra=props)
                    await client.invoke(broker.broker_addr, request, 30)

            await asyncio.gather(*(send(i) for i in range(count)))
            await asyncio.to_thread(broker.message_store.wait_for_dispatch, 60)
            total = broker.message_store.get_max_offset_in_queue("B", 0)
            cases = [("T99", "TAG"), ("a < 0", "SQL92"), ("*", "TAG"), ("a >= 0", "SQL92")]
            for expression, expression_type in cases:
                offset, pulls, start = 0, 0, time.perf_counter()
                while offset < total:
                    reply = await client.invoke(
                        broker.broker_addr, pull(expression, expression_type, offset), 60
                    )
                    pulls += 1
                    if reply.code not in (
                        ResponseCode.SUCCESS,
                        ResponseCode.PULL_RETRY_IMMEDIATELY,
                    ):
                        break
                    offset = int(reply.ext_fields["nextBeginOffset"])
                took = time.perf_counter() - start
                print(
                    f"scan {expression_type:5} {expression!r:10}: {total} units in {pulls} pulls, "
                    f"{took:.2f} s, {total / took:,.0f} units/s"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    bench_evaluate()
    asyncio.run(bench_scan(args.count))


if __name__ == "__main__":
    main()
