"""The client's CPU a pulled message, in isolation: a pull body's decode into MessageExt (what
the drain row's load generator does, ``decode_messages``) and the push consumer's
``process_pull_body`` (the decode, the tag filter, msg_id and the pull's offsets), best and
median of 9 timed runs, microseconds a message:

    PYTHONPATH=<tree>/src .venv/bin/python bench/pull_body_bench.py

Run it with each tree's ``src`` (and its built ``.so``) alternately for an A/B: a best-of
figure of a few microseconds' work holds on a loaded machine where a throughput does not.
The bodies are records as the broker stores them: 1 KiB bodies, a UNIQ_KEY and WAIT.
"""

from __future__ import annotations

import os
import statistics
import timeit

from rocketq.client.aio.pull_api import process_pull_body
from rocketq.client.status import PullResult, PullStatus
from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_messages, encode_message
from rocketq.remoting.protocol.subscription import build_subscription_data

RUNS = 9


def pull_body(count: int, size: int = 1024) -> bytes:
    out = bytearray()
    for i in range(count):
        msg = MessageExt("BenchBacklog", os.urandom(size), queue_offset=100 + i)
        msg.commitlog_offset = 5000 * i
        msg.properties = {"UNIQ_KEY": f"AC110001000018B4AAC2{i:012X}", "WAIT": "true"}
        msg.store_host, msg.born_host = ("127.0.0.1", 10911), ("127.0.0.1", 50000)
        out += encode_message(msg)
    return bytes(out)


def per_message_us(fn: object, count: int, number: int) -> tuple[float, float]:
    runs = timeit.repeat(fn, number=number, repeat=RUNS)  # type: ignore[arg-type]
    each = [r / number / count * 1e6 for r in runs]
    return min(each), statistics.median(each)


def main() -> None:
    print(f"record paths: {native_record.active()}")
    sub = build_subscription_data("BenchBacklog", "*")
    for count, number in ((32, 2_000), (1, 40_000)):
        body = pull_body(count)
        result = PullResult(
            status=PullStatus.FOUND, next_begin_offset=132, min_offset=0, max_offset=132
        )
        rows = {
            "decode_messages": per_message_us(lambda b=body: decode_messages(b), count, number),
            "process_pull_body": per_message_us(
                lambda b=body, r=result: process_pull_body(b, sub, r), count, number
            ),
        }
        for name, (best, median) in rows.items():
            print(f"{count:3d} a pull  {name:18s} best {best:6.2f}  median {median:6.2f} us a msg")


if __name__ == "__main__":
    main()
