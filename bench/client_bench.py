"""Client throughput: our client and the C++ client (PyPI ``rocketmq``) on one broker, one run.

    .venv/bin/python bench/client_bench.py --count 4000 --size 256

The name server + broker run in one subprocess, every client measurement in another (so the
client never shares a core's GIL with the broker). Rows: sync send TPS at 1, 8 and 32
concurrent senders (threads on the blocking API for both clients, plus asyncio tasks for ours),
batch send (32 messages a request) in messages/s, and push-consume TPS of a pre-filled topic.
Prints one JSON line per row and a ratio table at the end.

Issue 22, lever 2: every sync row also runs our asyncio client with the Python send codec
(``rocketq.client.send_codec.use(False)``, the frames still C's), and every row of ours prints
the client process's CPU microseconds per message, so the C send codec's gain shows in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rocketq.remoting import event_loop

BENCH = Path(__file__).resolve()
ROOT = BENCH.parents[1]
# the client processes import this tree's rocketq (src/), not whichever the venv installed
CLIENT_PATH = os.pathsep.join([str(ROOT / "src"), str(ROOT)])


# ---------------------------------------------------------------------- server process


def serve(store: str) -> None:
    from rocketq.testing import run_broker, run_namesrv

    async def run() -> None:
        props = {"mapedFileSizeCommitLog": str(256 * 1024 * 1024)}
        async with (
            run_namesrv() as ns,
            run_broker(Path(store), namesrv_addr=ns.addr, store_properties=props),
        ):
            print(json.dumps({"namesrv": ns.addr}), flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    event_loop.run(run())


# ---------------------------------------------------------------------- client processes


def split(count: int, parts: int) -> list[int]:
    return [count // parts + (1 if i < count % parts else 0) for i in range(parts)]


# the client process's CPU seconds over each timed section (every thread of the process)
TIMED_CPU_S: list[float] = []


def threaded(parts: list[int], work: Any) -> float:
    threads = [threading.Thread(target=work, args=(n,)) for n in parts]
    start, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    TIMED_CPU_S.append(time.process_time() - cpu)
    return time.perf_counter() - start


def ours_send(args: argparse.Namespace) -> float:
    from rocketq.client import Message, Producer

    body = b"x" * args.size
    with Producer(f"PG_{args.topic}", namesrv_addr=args.namesrv) as producer:
        producer.send(Message(args.topic, body))  # route + connection warm-up
        if args.mode == "batch":
            batch = [Message(args.topic, body) for _ in range(32)]

            def work_batch(n: int) -> None:
                for _ in range(n // 32):
                    producer.send_batch([Message(m.topic, m.body) for m in batch])

            return threaded(split(args.count, args.threads), work_batch)

        def work(n: int) -> None:
            for _ in range(n):
                producer.send(Message(args.topic, body))

        return threaded(split(args.count, args.threads), work)


def ours_send_asyncio(args: argparse.Namespace) -> float:
    from rocketq.client import Message
    from rocketq.client.aio import Producer

    body = b"x" * args.size

    async def run() -> float:
        async with Producer(f"PG_{args.topic}", namesrv_addr=args.namesrv) as producer:
            await producer.send(Message(args.topic, body))

            async def work(n: int) -> None:
                for _ in range(n):
                    await producer.send(Message(args.topic, body))

            start, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(work(n) for n in split(args.count, args.threads)))
            TIMED_CPU_S.append(time.process_time() - cpu)
            return time.perf_counter() - start

    return event_loop.run(run())


def ours_send_asyncio_python_codec(args: argparse.Namespace) -> float:
    """The asyncio client with the send fields and reply values in Python (the reference)."""
    from rocketq.client import send_codec

    send_codec.use(False)
    return ours_send_asyncio(args)


def cpp_send(args: argparse.Namespace) -> float:
    from rocketmq.client import Message, Producer

    body = "x" * args.size
    producer = Producer(f"PGC_{args.topic}", timeout=10000)
    producer.set_namesrv_addr(args.namesrv)
    producer.start()

    def msg() -> Any:
        m = Message(args.topic)
        m.set_body(body)
        return m

    try:
        producer.send_sync(msg())
        if args.mode == "batch":

            def work_batch(n: int) -> None:
                for _ in range(n // 32):
                    producer.send_batch([msg() for _ in range(32)])

            return threaded(split(args.count, args.threads), work_batch)

        def work(n: int) -> None:
            for _ in range(n):
                producer.send_sync(msg())

        return threaded(split(args.count, args.threads), work)
    finally:
        producer.shutdown()


def ours_consume(args: argparse.Namespace) -> float:
    from rocketq.client import ConsumeStatus, PushConsumer

    done = threading.Event()
    seen = 0
    lock = threading.Lock()
    first: list[float] = []

    def listener(msgs: list[Any]) -> ConsumeStatus:
        nonlocal seen
        with lock:
            if not first:
                first.append(time.perf_counter())
            seen += len(msgs)
            if seen >= args.count:
                done.set()
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        f"CG_{args.impl}_{args.topic}",
        namesrv_addr=args.namesrv,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
    )
    consumer.subscribe(args.topic)
    consumer.register_message_listener(listener)
    consumer.start()
    done.wait(120)
    end = time.perf_counter()
    consumer.shutdown()
    return end - first[0] if first else float("inf")


def cpp_consume(args: argparse.Namespace) -> float:
    from rocketmq.client import PushConsumer

    done = threading.Event()
    seen = 0
    lock = threading.Lock()
    first: list[float] = []

    def on_message(_msg: Any) -> None:
        nonlocal seen
        with lock:
            if not first:
                first.append(time.perf_counter())
            seen += 1
            if seen >= args.count:
                done.set()

    consumer = PushConsumer(f"CG_{args.impl}_{args.topic}")
    consumer.set_namesrv_addr(args.namesrv)
    consumer.set_thread_count(20)
    consumer.subscribe(args.topic, on_message)
    consumer.start()
    done.wait(120)
    end = time.perf_counter()
    consumer.shutdown()
    return end - first[0] if first else float("inf")


def client(args: argparse.Namespace) -> None:
    runners = {
        ("ours", "sync"): ours_send,
        ("ours", "batch"): ours_send,
        ("ours-asyncio", "sync"): ours_send_asyncio,
        ("ours-asyncio-pycodec", "sync"): ours_send_asyncio_python_codec,
        ("cpp", "sync"): cpp_send,
        ("cpp", "batch"): cpp_send,
        ("ours", "consume"): ours_consume,
        ("cpp", "consume"): cpp_consume,
    }
    elapsed = runners[(args.impl, args.mode)](args)
    row = {"tps": args.count / elapsed}
    if TIMED_CPU_S:  # the consume rows time from the first message: no CPU figure
        row["cpu_us"] = TIMED_CPU_S[-1] / args.count * 1e6
    print(json.dumps(row), flush=True)


# ---------------------------------------------------------------------- orchestration


def run_client(
    namesrv: str, impl: str, mode: str, topic: str, count: int, threads: int, size: int
) -> dict[str, float]:
    cmd = [
        sys.executable,
        str(BENCH),
        "client",
        "--namesrv",
        namesrv,
        "--impl",
        impl,
        "--mode",
        mode,
        "--topic",
        topic,
        "--count",
        str(count),
        "--threads",
        str(threads),
        "--size",
        str(size),
    ]
    with tempfile.TemporaryDirectory() as home:
        out = subprocess.run(
            cmd,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
            env={"HOME": home, "PATH": "/usr/bin:/bin", "PYTHONPATH": CLIENT_PATH},
        ).stdout
    row: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return row


def orchestrate(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as store:
        server = subprocess.Popen(
            [sys.executable, str(BENCH), "serve", "--store", store],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            namesrv = json.loads(server.stdout.readline())["namesrv"]
            rows = []
            plan = [("sync", t) for t in (1, 8, 32)] + [("batch", 8)]
            for mode, threads in plan:
                aio = ("ours-asyncio", "ours-asyncio-pycodec") if mode == "sync" else ()
                for impl in ("cpp", "ours", *aio):
                    topic = f"B_{mode}_{threads}_{impl.replace('-', '_')}"
                    got = run_client(namesrv, impl, mode, topic, args.count, threads, args.size)
                    rows.append({"mode": mode, "senders": threads, "impl": impl, **got})
                    print(json.dumps(rows[-1]), flush=True)
            run_client(namesrv, "ours", "sync", "B_consume", args.count, 8, args.size)
            for impl in ("cpp", "ours"):
                got = run_client(namesrv, impl, "consume", "B_consume", args.count, 1, args.size)
                rows.append({"mode": "consume", "senders": 0, "impl": impl, **got})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(30)
    print(
        "| mode | senders | C++ TPS | ours TPS | ours/C++ | ours asyncio TPS "
        "| client CPU us/msg: asyncio, C send codec | asyncio, Python send codec |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mode, senders in [(m, t) for m, t in plan] + [("consume", 0)]:
        cell = {r["impl"]: r for r in rows if r["mode"] == mode and r["senders"] == senders}
        ratio = cell["ours"]["tps"] / cell["cpp"]["tps"]
        print(
            f"| {mode} | {senders or '-'} | {cell['cpp']['tps']:.0f} | {cell['ours']['tps']:.0f} "
            f"| {ratio:.2f} | {_cell(cell, 'ours-asyncio', 'tps', '.0f')} "
            f"| {_cell(cell, 'ours-asyncio', 'cpu_us', '.1f')} "
            f"| {_cell(cell, 'ours-asyncio-pycodec', 'cpu_us', '.1f')} |"
        )


def _cell(cell: dict[str, dict[str, float]], impl: str, key: str, spec: str) -> str:
    return format(cell[impl][key], spec) if key in cell.get(impl, {}) else "-"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", nargs="?", default="bench", choices=["bench", "serve", "client"])
    parser.add_argument("--store", default="")
    parser.add_argument("--namesrv", default="")
    parser.add_argument("--impl", default="ours")
    parser.add_argument("--mode", default="sync")
    parser.add_argument("--topic", default="BenchTopic")
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args(argv)
    if args.role == "serve":
        serve(args.store)
    elif args.role == "client":
        client(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main(sys.argv[1:])
