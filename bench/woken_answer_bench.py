"""The broker's cost of answering one woken pull, alone: ``PullMessageProcessor.answer_woken``.

    PYTHONPATH=<tree>/src .venv/bin/python bench/woken_answer_bench.py [--calls 5000] [--repeat 7]

A broker (``rocketq.testing.broker.run_broker``) runs in this process; one 1 KiB message is
sent and a pull is held past it on a real connection (as the latency phase's consumer's is).
Then the woken pull's answer (what an arrival runs: the checks, the filter, the C read of the
message from the page cache, the answer's frame, the stats and its write) is called
``--calls`` times in a row on a copy of that pull reading the message, its frames kept in the
connection's write window (no syscall, the same for every tree) and dropped between runs.
Printed: the best and the median of ``--repeat`` runs, microseconds a call. Best-of figures
hold on a loaded machine where a latency percentile does not: run it against two trees
(``PYTHONPATH``) to compare their answer's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rocketq.broker.long_polling import PullRequest
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting.codec import encode
from rocketq.testing.broker import run_broker
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic, pull_request, send_request

HELD = build_sys_flag(commit_offset=False, suspend=True, subscription=True)


async def bench(calls: int, repeat: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="woken-answer-") as tmp:
        async with run_broker(Path(tmp)) as broker:
            await create_topic([broker.broker_addr], "T", 1)
            reader, writer = await asyncio.open_connection(*broker.broker_addr.split(":"))
            writer.write(encode(send_request("T", b"x" * 1024, tags="A", queue_id=0)))
            await reader.readexactly(int.from_bytes(await reader.readexactly(4), "big"))
            assert broker.message_store.wait_for_dispatch()
            writer.write(encode(pull_request("G", "T", 0, 1, sys_flag=HELD, suspend_ms=60_000)))
            hold = broker.pull_request_hold_service
            assert await until(lambda: hold.held_count == 1, 10.0)
            (held,) = hold.held_pulls()
            assert held.header is not None
            pull = PullRequest(
                channel=held.channel,
                request=held.request,
                topic="T",
                queue_id=0,
                pull_from_this_offset=0,
                timeout_ms=held.timeout_ms,
                header=dataclasses.replace(held.header, queue_offset=0),
            )
            answer = hold.answer_now
            assert answer is not None
            channel = held.channel
            spent: list[float] = []
            for _ in range(repeat):
                channel._write_window_open = True  # frames queued, not written
                start = time.perf_counter()
                for _ in range(calls):
                    answer(pull)
                spent.append((time.perf_counter() - start) / calls * 1e6)
                assert len(channel._unwritten) >= calls  # every call answered
                channel._unwritten.clear()
                channel._write_window_open = False
            writer.close()
            return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    spent = asyncio.run(bench(args.calls, args.repeat))
    print(
        f"answer_woken: best {min(spent):.2f} us, median {statistics.median(spent):.2f} us "
        f"a call ({args.repeat} x {args.calls})",
        file=sys.stdout,
    )


if __name__ == "__main__":
    main()
