"""The load of bench/grpc_bench.py's gRPC rows, run in the official Python 5.x client's venv
(``.venv-rmq5``; never imports rocketq): ``sync N`` sends, then receive+ack of what was sent.

    .venv-rmq5/bin/python bench/rmq5_load.py --endpoint 127.0.0.1:8081 --topic T --group G

Each phase prints ``{"phase": name, "state": "start"}`` just before it starts and ``{"phase":
name, "state": "stop", "messages": n, "seconds": s, "rts_ms": [...]}`` when it ends, so the
bench reads the server's CPU around it.
"""

from __future__ import annotations

import argparse
import json
import threading
import time

from rocketmq import (
    ClientConfiguration,
    Credentials,
    FilterExpression,
    Message,
    Producer,
    SimpleConsumer,
)

INVISIBLE_S = 30
AWAIT_S = 5


def emit(**data: object) -> None:
    print(json.dumps(data), flush=True)


def send_phase(args: argparse.Namespace, config: ClientConfiguration) -> None:
    producer = Producer(config, topics=(args.topic,))
    producer.startup()
    body = b"x" * args.size
    counter = iter(range(args.count))
    lock = threading.Lock()
    rts: list[float] = []

    def sender() -> None:
        while True:
            with lock:
                if next(counter, None) is None:
                    return
            msg = Message()
            msg.topic, msg.body = args.topic, body
            t0 = time.perf_counter()
            producer.send(msg)
            rts.append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=sender) for _ in range(args.senders)]
    emit(phase=f"sync {args.senders}", state="start")
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    emit(phase=f"sync {args.senders}", state="stop", messages=len(rts), seconds=seconds, rts_ms=rts)
    producer.shutdown()


def receive_phase(args: argparse.Namespace, config: ClientConfiguration) -> None:
    consumer = SimpleConsumer(
        config, args.group, {args.topic: FilterExpression()}, await_duration=AWAIT_S
    )
    consumer.startup()
    got, rts = 0, []
    emit(phase="receive+ack", state="start")
    start = time.perf_counter()
    deadline = start + args.cap_s
    while got < args.count and time.perf_counter() < deadline:
        t0 = time.perf_counter()
        msgs = consumer.receive(32, INVISIBLE_S)
        for msg in msgs:
            consumer.ack(msg)
        rts.append((time.perf_counter() - t0) * 1000)
        got += len(msgs)
    seconds = time.perf_counter() - start
    emit(phase="receive+ack", state="stop", messages=got, seconds=seconds, rts_ms=rts)
    consumer.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--senders", type=int, default=32)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--cap-s", type=float, default=60.0)
    args = ap.parse_args()
    config = ClientConfiguration(args.endpoint, Credentials("", ""), request_timeout=10)
    send_phase(args, config)
    receive_phase(args, config)


if __name__ == "__main__":
    main()
