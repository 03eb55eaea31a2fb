"""Drive the official RocketMQ 5 Python client (rocketmq-python-client 5.1.2) against a gRPC
endpoint; run in the client's own venv by ``rmq5_runner`` (never imports rocketq).

    python rmq5_driver.py SCENARIO --endpoint HOST:PORT [--topic T] [--group G] [...]

Each scenario prints JSON lines (``{"event": ..., ...}``) that the tests assert on; an
exception prints ``{"event": "error", ...}`` with the client's message and exits 0, so a
refusal is an assertable event too. Clients are shut down before the process exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rocketmq import (
    ClientConfiguration,
    ConsumeResult,
    Credentials,
    FilterExpression,
    Message,
    MessageListener,
    Producer,
    PushConsumer,
    SimpleConsumer,
    TransactionChecker,
    TransactionResolution,
)
from rocketmq.v5.model.filter_expression import FilterType

INVISIBLE_S = 10  # the proxy's minimum for a receive (Java refuses less)
AWAIT_S = 5  # the proxy's minimum long polling
GRACE_S = 3.0  # after the last expected delivery of a PushConsumer


def emit(event: str, **data: Any) -> None:
    print(json.dumps({"event": event, "t_ms": int(time.time() * 1000), **data}), flush=True)


def describe(msg: Any) -> dict[str, Any]:
    return {
        "topic": msg.topic,
        "body": msg.body.decode(errors="replace"),
        "tag": msg.tag,
        "keys": sorted(msg.keys or []),
        "properties": dict(msg.properties or {}),
        "message_id": msg.message_id,
        "message_group": msg.message_group,
        "message_type": str(msg.message_type),
        "delivery_attempt": msg.delivery_attempt,
        "delivery_timestamp": msg.delivery_timestamp,
        "corrupted": bool(msg.corrupted),
    }


def config(args: argparse.Namespace, secret: str | None = None) -> ClientConfiguration:
    credentials = Credentials(args.ak, args.sk if secret is None else secret)
    return ClientConfiguration(args.endpoint, credentials, request_timeout=args.request_timeout)


@contextmanager
def producer(args: argparse.Namespace, **kwargs: Any) -> Iterator[Producer]:
    client = Producer(config(args), topics=(args.topic,), tls_enable=args.tls, **kwargs)
    client.startup()
    try:
        yield client
    finally:
        client.shutdown()


@contextmanager
def simple(
    args: argparse.Namespace, expression: FilterExpression | None = None, topic: str = ""
) -> Iterator[SimpleConsumer]:
    subscription = {topic or args.topic: expression or FilterExpression()}
    client = SimpleConsumer(
        config(args), args.group, subscription, await_duration=AWAIT_S, tls_enable=args.tls
    )
    client.startup()
    try:
        yield client
    finally:
        client.shutdown()


def message(args: argparse.Namespace, body: str, **fields: Any) -> Message:
    msg = Message()
    msg.topic = fields.pop("topic", args.topic)
    msg.body = body.encode()
    for key, value in fields.pop("properties", {}).items():
        msg.add_property(key, value)
    keys = fields.pop("keys", ())
    if keys:
        msg.keys = keys[0]  # the client's setter keeps one key per assignment
    for key, value in fields.items():
        setattr(msg, key, value)
    return msg


def receive_until(
    consumer: SimpleConsumer, want: Callable[[list[dict[str, Any]]], bool], deadline_s: float,
    *, ack: bool = True, invisible_s: int = INVISIBLE_S, batch: int = 32,
) -> list[dict[str, Any]]:  # fmt: skip
    """Receive (and ack) until ``want(got)`` or the deadline; every message is emitted."""
    got: list[dict[str, Any]] = []
    end = time.monotonic() + deadline_s
    while not want(got) and time.monotonic() < end:
        for msg in consumer.receive(batch, invisible_s):
            seen = describe(msg)
            emit("received", **seen)
            got.append(seen)
            if ack:
                consumer.ack(msg)
    return got


def _bodies(n: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda got: len({m["body"] for m in got}) >= n


# ---------------------------------------------------------------- scenarios


def send_receive(args: argparse.Namespace) -> None:
    """Sync and async sends with tag, keys and properties; each received intact and acked."""
    with producer(args) as prod:
        for i in range(args.count):
            sent = message(
                args, f"sync-{i}", tag="TagS", keys=[f"key-{i}"], properties={"n": str(i)}
            )
            receipt = prod.send(sent)
            emit("sent", body=f"sync-{i}", message_id=receipt.message_id, offset=receipt.offset)
        futures = [
            (i, prod.send_async(message(args, f"async-{i}", tag="TagA", keys=[f"akey-{i}"],
                                        properties={"n": str(i)})))
            for i in range(args.count)
        ]  # fmt: skip
        for i, future in futures:
            receipt = future.result(timeout=10)
            emit("sent", body=f"async-{i}", message_id=receipt.message_id)
    with simple(args) as consumer:
        receive_until(consumer, _bodies(2 * args.count), args.deadline)
        again = consumer.receive(32, INVISIBLE_S)  # every one acked: nothing comes back
        emit("after_ack", count=len(again))


def filters(args: argparse.Namespace) -> None:
    """A tag filter and a SQL92 filter, each on its own group."""
    with producer(args) as prod:
        for i in range(6):
            tag = "TagA" if i % 2 == 0 else "TagB"
            prod.send(message(args, f"m-{i}", tag=tag, properties={"a": str(i)}))
    tag_args = argparse.Namespace(**{**vars(args), "group": args.group + "-tag"})
    with simple(tag_args, FilterExpression("TagA")) as consumer:
        got = receive_until(consumer, _bodies(3), args.deadline)
        emit("tag_filter", bodies=sorted(m["body"] for m in got))
    sql_args = argparse.Namespace(**{**vars(args), "group": args.group + "-sql"})
    with simple(sql_args, FilterExpression("a > 3", FilterType.SQL)) as consumer:
        got = receive_until(consumer, _bodies(2), args.deadline)
        emit("sql_filter", bodies=sorted(m["body"] for m in got))


def invisible(args: argparse.Namespace) -> None:
    """Three messages received unacked: one left to expire (back with delivery_attempt 2),
    one shortened to 1 s (back sooner), one lengthened to 60 s (not back; acked with the
    handle the change returned)."""
    with producer(args) as prod:
        for name in ("expire", "shorten", "lengthen"):
            prod.send(message(args, name))
    with simple(args) as consumer:
        first: dict[str, Any] = {}
        end = time.monotonic() + args.deadline
        while len(first) < 3 and time.monotonic() < end:
            asked_ms = int(time.time() * 1000)  # the pop, hence its invisible time, is later
            for msg in consumer.receive(32, INVISIBLE_S):
                first[msg.body.decode()] = msg
                emit("received", asked_ms=asked_ms, **describe(msg))
        emit("first_round", bodies=sorted(first))
        consumer.change_invisible_duration(first["shorten"], 1)
        emit("changed", body="shorten", seconds=1)
        consumer.change_invisible_duration(first["lengthen"], 60)
        emit("changed", body="lengthen", seconds=60)
        again = receive_until(
            consumer, lambda got: {"expire", "shorten"} <= {m["body"] for m in got}, 40
        )
        emit("second_round", bodies=[m["body"] for m in again])
        consumer.ack(first["lengthen"])  # the handle change_invisible_duration installed
        emit("acked", body="lengthen")


def fifo(args: argparse.Namespace) -> None:
    """Two message groups of 4 on a FIFO topic and an orderly group: per group in order, and
    nothing of a group comes while its previous message is in flight."""
    with producer(args) as prod:
        for i in range(4):
            for group in ("g1", "g2"):
                prod.send(message(args, f"{group}-{i}", message_group=group))
    with simple(args) as consumer:
        first = consumer.receive(1, INVISIBLE_S)
        for msg in first:
            emit("received", **describe(msg))
        held = consumer.receive(32, INVISIBLE_S)  # the first one's group must wait
        emit("while_in_flight", bodies=[m.body.decode() for m in held])
        for msg in [*first, *held]:
            if msg not in first:
                emit("received", **describe(msg))
            consumer.ack(msg)
        receive_until(consumer, _bodies(8 - len(first) - len(held)), args.deadline)


def delay_recall(args: argparse.Namespace) -> None:
    """Delay messages due in 2 s and 6 s, and one due in 5 s recalled at once (whole
    seconds, as the client sends them; each due time taken just before its send)."""
    with producer(args) as prod:
        for name, delay in (("due-early", 2), ("recalled", 5), ("due-late", 6)):
            due_s = int(time.time()) + delay
            receipt = prod.send(message(args, name, delivery_timestamp=due_s))
            emit("sent", body=name, due_ms=due_s * 1000, recall=receipt.recall_handle)
            if name == "recalled":
                recalled = prod.recall_message(args.topic, receipt.recall_handle)
                emit("recalled", message_id=recalled)
    with simple(args) as consumer:
        receive_until(consumer, lambda got: "due-late" in {m["body"] for m in got}, args.deadline)


class _Checker(TransactionChecker):
    """Answers as the application decided (a check may also come for a half message whose
    commit or rollback is still on its way: the broker checks after 1 s here)."""

    def check(self, message: Message) -> TransactionResolution:
        body = message.body.decode()
        emit("checked", body=body, message_id=message.message_id)
        if body == "rollback":
            return TransactionResolution.ROLLBACK
        return TransactionResolution.COMMIT


def transaction(args: argparse.Namespace) -> None:
    """Commit, rollback, and one left open that the server checks through Telemetry."""
    with producer(args, checker=_Checker()) as prod:
        for name in ("commit", "rollback", "open"):
            tx = prod.begin_transaction()
            receipt = prod.send(message(args, name), tx)
            emit("sent", body=name, transaction_id=receipt.transaction_id)
            if name == "commit":
                tx.commit()
            elif name == "rollback":
                tx.rollback()
        with simple(args) as consumer:  # the producer stays up to answer the check
            receive_until(consumer, _bodies(2), args.deadline)
            emit("after", count=len(consumer.receive(32, INVISIBLE_S)))


def refusals(args: argparse.Namespace) -> None:
    """A send to a topic that does not exist, and a FIFO message to a NORMAL topic."""
    with producer(args) as prod:
        for name, msg in (
            ("unknown_topic", message(args, "x", topic=args.topic + "-missing")),
            ("type_mismatch", message(args, "x", message_group="g")),
        ):
            try:
                receipt = prod.send(msg)
                emit("sent", case=name, message_id=receipt.message_id)
            except Exception as exc:  # noqa: BLE001 -- the refusal is the result
                emit("refused", case=name, error=f"{type(exc).__name__}: {exc}")


def dead_letter(args: argparse.Namespace) -> None:
    """A group with max attempts 2 (updateSubGroup -r 1): received, nacked to 1 s twice, then
    it is in %DLQ%<group> and no longer delivered."""
    with producer(args) as prod:
        prod.send(message(args, "doomed"))
    with simple(args) as consumer:
        end = time.monotonic() + args.deadline
        attempts = 0
        while time.monotonic() < end:
            batch = consumer.receive(32, INVISIBLE_S)
            for msg in batch:
                emit("received", **describe(msg))
                attempts += 1
                consumer.change_invisible_duration(msg, 1)
            if not batch and attempts >= 2:
                break
        emit("done", attempts=attempts)


class _Failing(MessageListener):
    def __init__(self, count: int) -> None:
        self.left = count
        self.done = threading.Event()

    def consume(self, message: Message) -> ConsumeResult:
        emit("consumed", **describe(message))
        self.left -= 1
        if self.left <= 0:
            self.done.set()
        return ConsumeResult.FAILURE


def push_failing(args: argparse.Namespace) -> None:
    """A PushConsumer whose listener always fails: retried by the group's policy, then DLQ.
    Stops ``GRACE_S`` after the ``--count``th delivery (the receive that dead-letters it)."""
    with producer(args) as prod:
        prod.send(message(args, "fails"))
    listener = _Failing(args.count)
    consumer = PushConsumer(
        config(args), args.group, listener, {args.topic: FilterExpression()},
        consumption_thread_count=2, tls_enable=args.tls,
    )  # fmt: skip
    consumer.startup()
    try:
        if listener.done.wait(args.deadline):
            time.sleep(GRACE_S)
    finally:
        consumer.shutdown()


def send_only(args: argparse.Namespace) -> None:
    """Send ``--count`` messages; with ``--until PATH`` at least that many, then on until the
    file ``PATH`` exists (the test says when it has seen what it waits for); ``--interval-ms``
    apart."""
    with producer(args) as prod:
        i = 0
        while i < args.count or (args.until and not os.path.exists(args.until)):
            try:
                receipt = prod.send(message(args, f"five-{i}", tag="FromFive"))
                emit("sent", body=f"five-{i}", message_id=receipt.message_id)
            except Exception as exc:  # noqa: BLE001 -- the refusal is the result
                emit("refused", error=f"{type(exc).__name__}: {exc}")
            i += 1
            time.sleep(args.interval_ms / 1000)


def receive_only(args: argparse.Namespace) -> None:
    """Receive and ack until ``--count`` distinct bodies arrived; with ``--parallel N``, N
    receives at a time (the 5.1.2 SimpleConsumer sends each receive to a random queue's
    broker, and one that has nothing left holds that receive for the whole long polling)."""
    with simple(args) as consumer:
        if args.parallel <= 1:
            receive_until(consumer, _bodies(args.count), args.deadline)
            return
        bodies: set[str] = set()
        lock = threading.Lock()
        end = time.monotonic() + args.deadline

        def receiver() -> None:
            while time.monotonic() < end:
                with lock:
                    if len(bodies) >= args.count:
                        return
                try:
                    for msg in consumer.receive(32, INVISIBLE_S):
                        seen = describe(msg)
                        with lock:
                            emit("received", **seen)
                            bodies.add(seen["body"])
                        consumer.ack(msg)
                except Exception as exc:  # noqa: BLE001 -- reported to the test as an event
                    with lock:
                        emit("error", error=f"{type(exc).__name__}: {exc}")
                    return

        threads = [threading.Thread(target=receiver) for _ in range(args.parallel)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


SCENARIOS: dict[str, Callable[[argparse.Namespace], None]] = {
    f.__name__: f
    for f in (
        send_receive, filters, invisible, fifo, delay_recall, transaction, refusals,
        dead_letter, push_failing, send_only, receive_only,
    )
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--topic", default="")
    parser.add_argument("--group", default="")
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=30.0)
    parser.add_argument("--until", default="")
    parser.add_argument("--interval-ms", type=int, default=0)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--ak", default="")
    parser.add_argument("--sk", default="")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--request-timeout", type=int, default=3)
    args = parser.parse_args()
    try:
        SCENARIOS[args.scenario](args)
    except Exception as exc:  # noqa: BLE001 -- reported to the test as an event
        emit("error", error=f"{type(exc).__name__}: {exc}")
    emit("end")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
