"""Where a lone send's time goes inside the broker: wall time of each step, per send.

    PYTHONPATH=<tree>/src .venv/bin/python bench/lone_send_parts.py [--sends 3000] [--held-pull]

A broker (``rocketq.testing.broker.run_broker``, ASYNC_FLUSH) runs in this process with a
timer wrapped around each step of the send path (the read, the C split, the flush, the
put, the answers and their write, the dispatch run; with ``--held-pull`` also the held
pull's wake-up and its answer); a child process sends 1 KiB SEND_MESSAGE_V2 requests one at
a time over a raw socket, ``--gap-ms`` apart (a lone send: the broker idles in between).
With ``--held-pull`` each send is preceded by a pull held for it on the same connection,
so the send's dispatch wakes it (the latency phase's path). Printed: calls per send and the
median and mean microseconds of each step, the broker's CPU per send (``process_time``:
every thread, the idle broker's own ~10-15 ms a second included) and the client's RT (with
``--held-pull`` also the time to the first frame back, the pull's answer), and the
broker's garbage collections during the sends (its start-up heap frozen first, as
``rocketq server`` freezes it).

Run ``strace -c -f -p <pid>`` on this process meanwhile to count the loop's syscalls a send
(``epoll_pwait``, ``write``, ``read``); ``--pause-s`` gives the time to attach.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from rocketq.cli.startup import freeze_start_up_heap
from rocketq.remoting import event_loop
from rocketq.testing.broker import run_broker

#: (module, class, method) of each timed step
STEPS = (
    ("rocketq.remoting.channel_protocol", "ChannelProtocol", "data_received"),
    ("rocketq.remoting.codec", "FrameDecoder", "feed_sends"),
    ("rocketq.remoting.channel", "RemotingChannel", "_dispatch_send"),
    ("rocketq.broker.put_batcher", "PutBatcher", "flush"),
    ("rocketq.broker.put_batcher", "PutBatcher", "_flush_now"),
    ("rocketq.broker.processors.send_answer", "SendAnswers", "answer_now"),
    ("rocketq.store.message_store", "MessageStore", "async_put_sends"),
    ("rocketq.broker.processors.send_answer", "SendAnswers", "answer_sends"),
    ("rocketq.broker.processors.send_answer", "SendAnswers", "_record"),
    ("rocketq.broker.broker_stats_manager", "BrokerStatsManager", "record_put_latencies"),
    ("rocketq.broker.broker_stats_manager", "BrokerStatsManager", "record_single_puts"),
    ("rocketq.remoting.channel", "ProcessorTable", "tell_responses"),
    ("rocketq.remoting.channel", "RemotingChannel", "answer_frames"),
    ("rocketq.remoting.channel", "RemotingChannel", "_write_frames"),
    ("rocketq.store.reput", "ReputMessageService", "dispatch_now"),
    ("rocketq.store.commitlog", "CommitLog", "get_max_offset"),
    ("rocketq.store.commitlog", "CommitLog", "read_dispatch_requests"),
    ("rocketq.store.message_store", "MessageStore", "dispatch_direct"),
    ("rocketq.store.message_store", "MessageStore", "dispatch_batch"),
    ("rocketq.store.message_store", "MessageStore", "dispatch_index"),
    ("rocketq.store.reput", "ReputMessageService", "_notify"),
    ("rocketq.broker.long_polling", "PullRequestHoldService", "_fire"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_process"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_after_read"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "answer_woken"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_read_woken"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_answer_found"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_check"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_filter_of"),
    ("rocketq.store.message_store", "MessageStore", "get_message_body"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_answer_with_suggestion"),
    ("rocketq.broker.processors.pull", "PullMessageProcessor", "_record_get"),
    ("rocketq.broker.long_polling", "PullRequestHoldService", "suspend_pull_request"),
    ("rocketq.remoting.channel", "RemotingChannel", "write_joined"),
    ("rocketq.remoting.channel", "RemotingChannel", "write_joined_frame"),
    ("rocketq.remoting.channel", "RemotingChannel", "_write"),
)

CLIENT = r"""
import socket, struct, sys, time
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.testing.wire import pull_request, send_request

host, port, count, gap_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
held = sys.argv[5] == "1"
suspend = build_sys_flag(commit_offset=False, suspend=True, subscription=True)
send = encode(send_request("LoneSend", b"x" * 1024, queue_id=0, code=RequestCode.SEND_MESSAGE_V2))
sock = socket.create_connection((host, port))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = b""
first_at = None

def frames(k):
    global buf, first_at
    while True:
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
            buf = buf[4 + struct.unpack_from(">i", buf)[0]:]
            if first_at is None:
                first_at = time.perf_counter_ns()
            k -= 1
            if k == 0:
                return
        buf += sock.recv(65536)

sock.sendall(send)
frames(1)  # creates the topic (the Python path)
rts, firsts = [], []
for offset in range(1, count + 1):
    if held:
        pull = pull_request("LoneSendG", "LoneSend", 0, offset, sys_flag=suspend, suspend_ms=20000)
        sock.sendall(encode(pull))
        time.sleep(0.0005)  # held before the send comes
    start = time.perf_counter_ns()
    first_at = None
    sock.sendall(send)
    frames(2 if held else 1)
    rts.append(time.perf_counter_ns() - start)
    firsts.append(first_at - start)
    time.sleep(gap_s)
for name, spent in (("client RT", rts), ("first frame (the pull's answer)", firsts)):
    if name == "client RT" or held:
        spent.sort()
        p50, p99 = spent[len(spent) // 2] / 1e3, spent[int(len(spent) * 0.99)] / 1e3
        print(f"{name} p50 {p50:.1f} us, p99 {p99:.1f} us")
"""


def timed(steps: dict[str, list[int]], modname: str, clsname: str, meth: str) -> None:
    cls = getattr(importlib.import_module(modname), clsname)
    original: Callable[..., Any] | None = getattr(cls, meth, None)
    if original is None:  # a step that a later change folded into another: not timed
        print(f"  ({clsname}.{meth} is gone: not timed)")
        return
    spent = steps[f"{clsname}.{meth}"] = []
    clock = time.perf_counter_ns

    def step(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(clock() - start)

    setattr(cls, meth, step)


def gc_timer(pauses: dict[int, list[float]]) -> Callable[[str, dict[str, Any]], None]:
    """A ``gc.callbacks`` entry adding each collection's microseconds to ``pauses``."""
    started = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[int(info["generation"])].append((time.perf_counter() - started[0]) * 1e6)

    return callback


async def measure(sends: int, gap_ms: float, held: bool, pause_s: float) -> None:
    steps: dict[str, list[int]] = {}
    for modname, clsname, meth in STEPS:
        timed(steps, modname, clsname, meth)
    with tempfile.TemporaryDirectory() as root:
        async with run_broker(root) as broker:
            host, port = broker.broker_addr.split(":")
            if pause_s:
                print(f"pid {os.getpid()}: attach now", flush=True)
                await asyncio.sleep(pause_s)
            for spent in steps.values():
                spent.clear()
            freeze_start_up_heap()  # as ``rocketq server`` does once it listens
            pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
            collecting = gc_timer(pauses)
            gc.callbacks.append(collecting)
            cpu = time.process_time()
            args = (host, port, str(sends), str(gap_ms / 1000), "1" if held else "0")
            child = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, *args)
            await child.wait()
            cpu = time.process_time() - cpu
            gc.callbacks.remove(collecting)
    print(f"broker CPU {cpu / sends * 1e6:.1f} us a send (every thread, idle work included)")
    for generation, spent_us in pauses.items():
        if spent_us:
            print(
                f"  broker gc gen{generation}: {len(spent_us) / sends * 1000:.1f} a 1,000 sends,"
                f" median {statistics.median(spent_us):.0f} us, max {max(spent_us):.0f} us"
            )
    for name, spent in steps.items():
        if spent:
            print(
                f"  {name:42s} calls/send {len(spent) / sends:5.2f}"
                f"  median {statistics.median(spent) / 1e3:6.1f} us"
                f"  mean {sum(spent) / len(spent) / 1e3:6.1f} us"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sends", type=int, default=3000)
    ap.add_argument("--gap-ms", type=float, default=1.0, help="between a reply and the next")
    ap.add_argument("--held-pull", action="store_true", help="a pull held for each send")
    ap.add_argument("--pause-s", type=float, default=0.0, help="time to attach strace")
    args = ap.parse_args()
    event_loop.run(measure(args.sends, args.gap_ms, args.held_pull, args.pause_s))


if __name__ == "__main__":
    main()
