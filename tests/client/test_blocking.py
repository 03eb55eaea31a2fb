"""The blocking facade: the issue's example, run from plain threads against a real broker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rocketq.client import (
    ConsumeStatus,
    LitePullConsumer,
    Message,
    MessageExt,
    Producer,
    PushConsumer,
    SendStatus,
)
from rocketq.client.loop_thread import LoopThread
from rocketq.errors import IllegalStateError
from rocketq.testing import run_broker, run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import collect_sync, until_sync


def wait_for(predicate: Callable[[], bool], timeout_s: float) -> bool:
    return until_sync(predicate, timeout_s, 0.05)


def run_scenario(namesrv_addr: str) -> tuple[list[MessageExt], list[object], set[str]]:
    """Everything a script does, on threads that have no event loop of their own."""
    producer = Producer("pg", namesrv_addr=namesrv_addr, **FAST_CLIENT)
    producer.start()
    results = []
    for i in range(6):
        msg = Message(
            "Orders",
            b"...%d" % i,
            tags="TagA" if i % 2 else "TagB",
            keys=["k1"],
            properties={"a": "1"},
        )
        results.append(producer.send(msg))
    future = producer.send_async(Message("Orders", b"async", tags="TagA"))
    results.append(future.result(10))
    received: list[MessageExt] = []
    threads: set[str] = set()
    lock = threading.Lock()

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        with lock:
            received.extend(msgs)
            threads.add(threading.current_thread().name)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        "cg",
        namesrv_addr=namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe("Orders", "TagA || TagB")
    consumer.register_message_listener(listener)
    consumer.start()
    try:
        wait_for(lambda: len(received) >= 7, 30)
    finally:
        consumer.shutdown()
        producer.shutdown()
    return received, [r.status for r in results], threads


async def test_the_blocking_api_sends_and_consumes_from_plain_threads(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store", namesrv_addr=ns.addr, store_properties=small_store_properties()
        ),
    ):
        import asyncio

        received, statuses, threads = await asyncio.to_thread(run_scenario, ns.addr)
    assert statuses == [SendStatus.SEND_OK] * 7
    assert sorted(m.body for m in received) == sorted([b"...%d" % i for i in range(6)] + [b"async"])
    assert all(m.properties["a"] == "1" for m in received if m.body != b"async")
    assert all(t.startswith("ConsumeMessageThread") for t in threads)
    assert LoopThread._shared is None  # the last client stopped the loop thread


async def test_the_lite_pull_consumer_polls_from_a_thread(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store", namesrv_addr=ns.addr, store_properties=small_store_properties()
        ),
    ):
        import asyncio

        def scenario() -> list[MessageExt]:
            with Producer("pg", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
                for i in range(5):
                    producer.send(Message("Pulled", b"%d" % i))
                consumer = LitePullConsumer(
                    "lg",
                    namesrv_addr=ns.addr,
                    consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                    **FAST_CONSUMER,
                )
                consumer.subscribe("Pulled")
                with consumer:
                    got = collect_sync(lambda: consumer.poll(0.5), 5, 20)
                    queues = consumer.fetch_message_queues("Pulled")
                assigned = LitePullConsumer(
                    "lg2",
                    namesrv_addr=ns.addr,
                    consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                    **FAST_CONSUMER,
                )
                assigned.assign(queues)  # before start: applied when it starts
                with assigned:
                    got += collect_sync(lambda: assigned.poll(0.5), 10 - len(got), 20)
                    assert assigned.assignment() == queues
                return got

        got = await asyncio.to_thread(scenario)
    assert sorted(m.body for m in got) == sorted([b"%d" % i for i in range(5)] * 2)


def test_a_client_that_was_never_started_refuses_to_send() -> None:
    producer = Producer("pg", namesrv_addr="127.0.0.1:1")
    with pytest.raises(IllegalStateError):
        producer.send(Message("T", b"x"))


def test_blocking_calls_from_many_threads_share_one_loop_thread() -> None:
    loops = []

    def use() -> None:
        loop = LoopThread.acquire()
        loops.append(loop)
        assert loop.run(_answer()) == 42
        LoopThread.release()

    LoopThread.acquire()
    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: use(), range(8)))
    finally:
        LoopThread.release()
    assert len({id(loop) for loop in loops}) == 1
    assert LoopThread._shared is None


async def _answer() -> int:
    return 42
