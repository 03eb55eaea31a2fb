"""Drive the official C++ client (PyPI ``rocketmq`` 0.4.4, librocketmq) for one scenario.

Run in a subprocess only (the native library can hang or crash its process); the test reads
JSON lines from stdout and kills the process by PID on timeout. Every line is an object with an
``event`` key: ``sent`` / ``send_error`` (produce), ``started``, ``msg`` (consume), ``done``.

    python cpp_driver.py produce --namesrv 127.0.0.1:9876 --topic T --count 10 --tags TagA
    python cpp_driver.py push --namesrv ... --topic T --group G --expect 10 [--broadcast|--orderly]
    python cpp_driver.py pull --namesrv ... --topic T --group G

Bodies are text (the C API passes them as NUL-terminated strings): ``body-<i>`` by default,
or ``--body-size`` bytes of a letter pattern; ``--compressible`` makes them repetitive.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import threading
import time
from typing import Any

WATCHED_PROPERTIES = ("UNIQ_KEY", "color", "seq", "CLUSTER", "TAGS", "KEYS")


def emit(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields, sort_keys=True) + "\n")
    sys.stdout.flush()


def make_body(i: int, size: int, compressible: bool) -> str:
    if size <= 0:
        return f"body-{i}"
    if compressible:
        unit = f"compressible-{i}-"
        return (unit * (size // len(unit) + 1))[:size]
    rng = random.Random(i)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))


def describe(msg: Any) -> dict[str, Any]:
    body = bytes(msg.body or b"")
    props = {}
    for name in WATCHED_PROPERTIES:
        value = msg.get_property(name)
        if value:
            props[name] = value.decode() if isinstance(value, bytes) else str(value)
    return {
        "topic": msg.topic,
        "tags": (msg.tags or b"").decode(),
        "keys": (msg.keys or b"").decode(),
        "body": body.decode("utf-8", "replace") if len(body) <= 256 else None,
        "body_len": len(body),
        "body_sha256": hashlib.sha256(body).hexdigest(),
        "msg_id": msg.id,
        "queue_id": int(msg.queue_id),
        "queue_offset": int(msg.queue_offset),
        "reconsume_times": int(msg.reconsume_times),
        "properties": props,
    }


def set_credentials(client: Any, args: argparse.Namespace) -> None:
    """ACL session credentials (SessionCredentials: accessKey, secretKey, OnsChannel)."""
    if args.access_key:
        client.set_session_credentials(args.access_key, args.secret_key, "ALIYUN")


def produce(args: argparse.Namespace) -> None:
    from rocketmq.client import Message, Producer

    kwargs: dict[str, Any] = {"timeout": args.send_timeout_ms}
    if args.max_size:
        kwargs["max_message_size"] = args.max_size
    producer = Producer(args.group, **kwargs)
    producer.set_namesrv_addr(args.namesrv)
    set_credentials(producer, args)
    producer.start()
    tags = args.tags.split(",") if args.tags else [""]
    try:
        for i in range(args.count):
            msg = Message(args.topic)
            tag = tags[i % len(tags)]
            if tag:
                msg.set_tags(tag)
            msg.set_keys(f"{args.key_prefix}{i}")
            msg.set_property("seq", str(i))
            if args.color:
                msg.set_property("color", args.color)
            body = make_body(i, args.body_size, args.compressible)
            msg.set_body(body)
            sha = hashlib.sha256(body.encode()).hexdigest()
            try:
                if args.oneway:
                    producer.send_oneway(msg)
                    emit(event="sent", i=i, tag=tag, oneway=True, body_sha256=sha)
                    continue
                if args.orderly:
                    result = producer.send_orderly(msg, i % args.order_keys)
                else:
                    result = producer.send_sync(msg)
                emit(
                    event="sent",
                    i=i,
                    tag=tag,
                    status=int(result.status),
                    msg_id=result.msg_id,
                    offset=int(result.offset),
                    body_sha256=sha,
                )
            except Exception as exc:  # noqa: BLE001 -- the scenario reports, the test decides
                emit(event="send_error", i=i, error=f"{type(exc).__name__}: {exc}")
        if args.oneway and args.hold_until_stdin_closes:
            sys.stdin.read()  # the test closes stdin once the broker has stored every frame
        elif args.oneway:
            time.sleep(1.0)  # oneway frames leave on the client's own thread
    finally:
        producer.shutdown()
    emit(event="done")


def push(args: argparse.Namespace) -> None:
    from rocketmq.client import PushConsumer
    from rocketmq.ffi import MessageModel

    model = MessageModel.BROADCASTING if args.broadcast else MessageModel.CLUSTERING
    consumer = PushConsumer(args.group, orderly=args.orderly, message_model=model)
    consumer.set_namesrv_addr(args.namesrv)
    set_credentials(consumer, args)
    if args.instance:
        consumer.set_instance_name(args.instance)
    consumer.set_thread_count(1)
    received = 0
    lock = threading.Lock()
    enough = threading.Event()
    failed_once: set[str] = set()

    def on_message(msg: Any) -> None:
        nonlocal received
        info = describe(msg)
        if args.fail_first and info["msg_id"] not in failed_once:
            failed_once.add(info["msg_id"])
            emit(event="reconsume_later", **info)
            raise RuntimeError("asked to reconsume later")
        with lock:
            received += 1
            emit(event="msg", thread=threading.get_ident(), **info)
            if args.expect and received >= args.expect:
                enough.set()

    consumer.subscribe(args.topic, on_message, args.expr)
    consumer.start()
    emit(event="started")
    enough.wait(args.timeout)
    time.sleep(args.linger)
    consumer.shutdown()
    emit(event="done", received=received)


def pull(args: argparse.Namespace) -> None:
    from rocketmq.client import PullConsumer

    consumer = PullConsumer(args.group)
    consumer.set_namesrv_addr(args.namesrv)
    consumer.start()
    emit(event="started")
    received = 0
    try:
        for msg in consumer.pull(args.topic, args.expr):
            received += 1
            emit(event="msg", **describe(msg))
    finally:
        consumer.shutdown()
    emit(event="done", received=received)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", choices=["produce", "push", "pull"])
    parser.add_argument("--namesrv", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", default="PG_CPP_INTEROP")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--tags", default="TagA")
    parser.add_argument("--key-prefix", default="key-")
    parser.add_argument("--color", default="")
    parser.add_argument("--body-size", type=int, default=0)
    parser.add_argument("--compressible", action="store_true")
    parser.add_argument("--max-size", type=int, default=0)
    parser.add_argument("--send-timeout-ms", type=int, default=3000)
    parser.add_argument("--oneway", action="store_true")
    parser.add_argument("--hold-until-stdin-closes", action="store_true")
    parser.add_argument("--orderly", action="store_true")
    parser.add_argument("--order-keys", type=int, default=2)
    parser.add_argument("--expr", default="*")
    parser.add_argument("--broadcast", action="store_true")
    parser.add_argument("--instance", default="")
    parser.add_argument("--expect", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--linger", type=float, default=0.5)
    parser.add_argument("--fail-first", action="store_true")
    parser.add_argument("--access-key", default="")
    parser.add_argument("--secret-key", default="")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    {"produce": produce, "push": push, "pull": pull}[args.scenario](args)


if __name__ == "__main__":
    main(sys.argv[1:])
