"""BlockingFacade: the loop thread is taken on start and always given back, whatever fails."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings

import pytest

from rocketq.admin import AdminClient
from rocketq.client import Message, Producer, PushConsumer
from rocketq.client.blocking_facade import (
    BlockingFacade,
    blocking_twin,
    shutdown_twin,
    start_twin,
)
from rocketq.client.loop_thread import LoopThread
from rocketq.common.message import MessageQueue
from rocketq.errors import ClientError, IllegalStateError
from rocketq.testing.cluster import FAST_CLIENT, Cluster

MQ = MessageQueue("TwinTopic", "broker-a", 0)


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rocketq-client-loop"]


class _Core:
    """An asyncio core that fails where the test says."""

    def __init__(self, fail_on: str) -> None:
        self.fail_on = fail_on
        self.started = False

    async def start(self) -> None:
        if self.fail_on == "start":
            raise ClientError("the core could not be built")
        self.started = True

    async def shutdown(self) -> None:
        if self.fail_on == "shutdown":
            raise ClientError("the core could not be closed")

    async def answer(self, x: int, *, plus: int = 0) -> int:
        return x + plus


class _Facade(BlockingFacade[_Core]):
    start = start_twin(_Core.start)
    shutdown = shutdown_twin(_Core.shutdown)
    answer = blocking_twin(_Core.answer)


def test_a_core_that_fails_to_start_leaves_no_loop_thread_running() -> None:
    assert LoopThread._shared is None
    facade = _Facade(_Core(fail_on="start"))
    with pytest.raises(ClientError, match="could not be built"):
        facade.start()
    assert not facade.started
    assert LoopThread._shared is None
    assert loop_threads() == []


def test_a_core_that_fails_to_shut_down_still_gives_the_loop_thread_back() -> None:
    facade = _Facade(_Core(fail_on="shutdown"))
    facade.start()
    assert facade.answer(40, plus=2) == 42
    with pytest.raises(ClientError, match="could not be closed"):
        facade.shutdown()
    assert not facade.started
    assert LoopThread._shared is None
    assert loop_threads() == []


def test_a_push_consumer_that_cannot_start_gives_the_loop_thread_back() -> None:
    consumer = PushConsumer("cg", namesrv_addr="127.0.0.1:1")  # no listener, no subscription
    with pytest.raises(ClientError, match="listener"):
        consumer.start()
    assert not consumer.started
    assert LoopThread._shared is None


def test_a_second_start_is_refused_and_the_first_keeps_its_loop_thread() -> None:
    with _Facade(_Core(fail_on="")) as facade:
        with pytest.raises(IllegalStateError, match="already started"):
            facade.start()
        assert facade.answer(1) == 1
    assert LoopThread._shared is None


def test_a_call_before_start_is_refused_before_any_coroutine_is_made() -> None:
    admin = AdminClient("127.0.0.1:1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(IllegalStateError, match="not started"):
            admin.fetch_all_topic_list()
        gc.collect()
    assert [w for w in caught if "never awaited" in str(w.message)] == []


def test_a_twin_must_keep_the_name_of_its_async_call() -> None:
    with pytest.raises(RuntimeError) as raised:

        class _Renamed(BlockingFacade[_Core]):
            reply = blocking_twin(_Core.answer)

    assert "names must match" in str(raised.value.__cause__)


async def test_an_admin_client_restarts_on_fresh_connections(cluster: Cluster) -> None:
    await cluster.create_topic("RestartTopic", 1)

    def run() -> tuple[bool, bool]:
        admin = AdminClient(cluster.addr)
        admin.start()
        first = "RestartTopic" in admin.fetch_all_topic_list()
        admin.shutdown()
        admin.start()
        try:
            second = "RestartTopic" in admin.fetch_all_topic_list()
        finally:
            admin.shutdown()
        return first, second

    assert await asyncio.to_thread(run) == (True, True)
    assert LoopThread._shared is None


async def test_the_admin_calls_that_had_no_blocking_twin_answer_through_the_facade(
    cluster: Cluster,
) -> None:
    """master_addrs_of_topic, broker_addr_by_name, get_broker_config_version and
    messages_of_topic had no blocking form before the facade derived them."""
    await cluster.create_topic("TwinTopic", 1)
    broker_addr = cluster.broker.broker_addr

    def send() -> None:
        with Producer("twin-pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            for i in range(3):
                producer.send(Message("TwinTopic", b"m%d" % i), message_queue=MQ)

    def run() -> tuple[dict[str, str], str, dict[str, int], list[bytes]]:
        with AdminClient(cluster.addr) as admin:
            return (
                admin.master_addrs_of_topic("TwinTopic"),
                admin.broker_addr_by_name("TwinTopic", "broker-a"),
                admin.get_broker_config_version(broker_addr),
                [m.body for m in admin.messages_of_topic("TwinTopic", None, None, 10)],
            )

    await asyncio.to_thread(send)
    await cluster.dispatched()  # messages_of_topic reads through the consume queue
    masters, addr, version, bodies = await asyncio.to_thread(run)
    assert masters == {"broker-a": broker_addr}
    assert addr == broker_addr
    assert set(version) == {"counter", "timestamp"}
    assert version["timestamp"] > 0
    assert bodies == [b"m0", b"m1", b"m2"]
