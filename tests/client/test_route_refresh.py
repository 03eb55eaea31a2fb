"""Clients see a new route at once when a broker fails, not at the 30 s route poll: a real name
server and brokers on port 0, clients with RocketMQ's default ``pollNameServerInterval``."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.client import ConsumeStatus, Message, SendStatus
from rocketq.client.aio import LitePullConsumer, Producer, PushConsumer
from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.offset_store import RemoteBrokerOffsetStore
from rocketq.client.config import ClientConfig
from rocketq.client.status import SendResult
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RemotingConnectError, ServiceNotAvailableError
from rocketq.remoting.protocol.topic_route import BrokerData, TopicRouteData
from rocketq.store.config import BrokerRole
from rocketq.testing import run_broker, run_namesrv, until
from rocketq.testing.broker import topic_records
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import collect
from rocketq.testing.wire import create_topic

pytestmark = pytest.mark.timeout(30)

POLL_S = 30.0  # RocketMQ's pollNameServerInterval: no test here may wait for it
#: the slowest send after the stop takes a connect failure and one route read (1.5 s seen on
#: the shared 2-core machine at load average 40-75); one that waited for the poll takes POLL_S
ROUTE_READ_BOUND_S = 5.0


@dataclass
class TwoGroups:
    """broker-a and broker-b serving one topic; ``stop_a`` takes broker-a away."""

    namesrv_addr: str
    broker_a: BrokerController
    broker_b: BrokerController
    a_cm: contextlib.AbstractAsyncContextManager[BrokerController]
    stopped_at: float = 0.0
    a_stopped: bool = False

    async def stop_a(self) -> None:
        """broker-a's port closes (requests there fail from ``stopped_at``), then it leaves
        the name server (its unregistration is answered when this returns)."""
        self.a_stopped = True
        await self.broker_a.remoting_server.stop()
        self.stopped_at = time.monotonic()
        await self.a_cm.__aexit__(None, None, None)


@contextlib.asynccontextmanager
async def two_groups(tmp_path: Path, topic: str) -> AsyncIterator[TwoGroups]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "b",
            namesrv_addr=ns.addr,
            broker_name="broker-b",
            store_properties=small_store_properties(),
        ) as broker_b,
    ):
        a_cm = run_broker(
            tmp_path / "a",
            namesrv_addr=ns.addr,
            broker_name="broker-a",
            store_properties=small_store_properties(),
        )
        groups = TwoGroups(ns.addr, await a_cm.__aenter__(), broker_b, a_cm)
        try:
            await create_topic([groups.broker_a.broker_addr, broker_b.broker_addr], topic, 2)
            for broker in (groups.broker_a, broker_b):
                await broker.register_broker_all()
            yield groups
        finally:
            if not groups.a_stopped:
                await a_cm.__aexit__(None, None, None)


async def test_sends_leave_a_stopped_broker_after_one_route_read(tmp_path: Path) -> None:
    async with two_groups(tmp_path, "Fail") as groups:
        # without the latency fault tolerance a stale route would send every other
        # message to the stopped broker first: only the route read keeps them away
        producer = Producer(
            "pg",
            namesrv_addr=groups.namesrv_addr,
            poll_name_server_interval_s=POLL_S,
            send_latency_fault_enable=False,
        )
        await producer.start()
        refresher = producer.instance.route_refresher
        results: list[tuple[float, float, SendResult]] = []
        stop = asyncio.Event()

        async def keep_sending() -> None:
            i = 0
            while not stop.is_set():
                started = time.monotonic()
                result = await producer.send(Message("Fail", b"f%d" % i))
                results.append((started, time.monotonic(), result))
                i += 1
                await asyncio.sleep(0.002)

        sender = asyncio.create_task(keep_sending())
        try:
            assert await until(
                lambda: (
                    {r.message_queue.broker_name for *_, r in results} == {"broker-a", "broker-b"}
                ),
                10,
            )
            requests_before = refresher.requests_count
            await groups.stop_a()
            reads_at_unregister = refresher.requests_count
            during = len(results)
            assert await until(lambda: len(results) >= during + 100, 10)
        finally:
            stop.set()
            await sender  # a send that failed for good would raise here
            await producer.shutdown()
    stopped_at = groups.stopped_at
    after = [(s, e, r) for s, e, r in results if s >= stopped_at]
    assert all(r.status is SendStatus.SEND_OK for *_, r in after)
    # no send waited for the poll: the slowest took a connect failure and one route read
    assert max(e - s for s, e, _ in after) < ROUTE_READ_BOUND_S
    assert all(r.message_queue.broker_name == "broker-b" for *_, r in after)
    queues = producer._publish_infos["Fail"].message_queue_list
    assert {mq.broker_name for mq in queues} == {"broker-b"}
    # one route read per rate-limit window, not one per send: 100+ sends, a few reads
    elapsed = results[-1][1] - stopped_at
    reads = refresher.requests_count - requests_before
    assert 1 <= reads <= 1 + elapsed / refresher.min_interval_s
    # while the name server still lists the stopped broker (its unregistration is slow under
    # load) the sends poll once a window; once it is gone, one read sees the new route
    assert refresher.requests_count - reads_at_unregister <= 2


async def test_a_send_to_a_suspect_group_that_left_the_route_does_not_wait_for_a_successor(
    tmp_path: Path,
) -> None:
    """A send whose group's master failed last waits up to half its time for the route to name
    a new master; a group that left the route altogether (it unregistered) gets none, so the
    send gives up on it after the route read that shows it gone (CI once saw a send poll the
    route ten times for the successor of a broker that had left)."""
    timeout_s = 8.0  # a send that waited for a successor would take timeout_s / 2
    async with two_groups(tmp_path, "Left") as groups:
        producer = Producer(
            "pg",
            namesrv_addr=groups.namesrv_addr,
            poll_name_server_interval_s=POLL_S,
            send_latency_fault_enable=False,
        )
        async with producer:
            await producer.send(Message("Left", b"warm"))  # the route, with both groups
            queue_a = MessageQueue("Left", "broker-a", 0)
            await groups.stop_a()
            with pytest.raises(Exception):  # noqa: B017 - the refused connect, any error class
                await producer.send(Message("Left", b"a1"), message_queue=queue_a)
            # broker-a's address is suspect now; the route read it started drops the group
            assert await until(
                lambda: (
                    {q.broker_name for q in producer._publish_infos["Left"].message_queue_list}
                    == {"broker-b"}
                ),
                ROUTE_READ_BOUND_S,
            )
            refresher = producer.instance.route_refresher
            reads_before = refresher.requests_count
            started = time.monotonic()
            with pytest.raises(RemotingConnectError, match="no longer in the route"):
                await producer.send(
                    Message("Left", b"a2"), message_queue=queue_a, timeout_s=timeout_s
                )
            assert time.monotonic() - started < timeout_s / 4
            assert refresher.requests_count - reads_before <= 1
            # and a send that picks its queue goes to the group still there, at once
            result = await producer.send(Message("Left", b"b"), timeout_s=timeout_s)
            assert result.message_queue.broker_name == "broker-b"


async def test_a_push_consumer_drops_a_stopped_brokers_queues_at_once(tmp_path: Path) -> None:
    async with two_groups(tmp_path, "Gone") as groups:
        # RocketMQ's defaults: a 20 s rebalance, a 30 s route poll; the wait after a failed
        # pull (3 s) as long as the poll, so a drop that waited for it cannot pass either
        consumer = PushConsumer(
            "cg", namesrv_addr=groups.namesrv_addr, pull_time_delay_when_exception_s=POLL_S
        )
        consumer.subscribe("Gone")
        consumer.register_message_listener(lambda msgs: ConsumeStatus.CONSUME_SUCCESS)
        async with consumer:

            def brokers() -> set[str]:
                return {mq.broker_name for mq in consumer.assigned_queues() if mq.topic == "Gone"}

            assert await until(lambda: brokers() == {"broker-a", "broker-b"}, 5)
            await groups.stop_a()  # its long-polled pulls fail now, and it leaves
            assert await until(lambda: brokers() == {"broker-b"}, ROUTE_READ_BOUND_S)
            assert time.monotonic() - groups.stopped_at < ROUTE_READ_BOUND_S


async def test_producer_and_consumer_move_to_the_new_master_of_their_group(
    tmp_path: Path,
) -> None:
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    async with (
        run_namesrv() as ns,
        # the old master, demoted: registered as broker-a's id 0 but refusing writes
        # (a slave's store answers SERVICE_NOT_AVAILABLE, DefaultMessageStore.checkStoreStatus)
        run_broker(
            tmp_path / "old",
            namesrv_addr=ns.addr,
            broker_name="broker-a",
            broker_role=BrokerRole.SLAVE,
            store_properties=small_store_properties(),
        ) as old,
    ):
        # a slave takes no UPDATE_AND_CREATE_TOPIC: the topic as its master had synced it
        old.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="Move", read_queue_nums=2, write_queue_nums=2)
        )
        await old.register_broker_all()
        producer = Producer("pg", namesrv_addr=ns.addr, poll_name_server_interval_s=POLL_S)
        consumer = PushConsumer(
            "cg",
            namesrv_addr=ns.addr,
            instance_name="consumer",  # a route table of its own: the producer's reads not shared
            poll_name_server_interval_s=POLL_S,
            pull_time_delay_when_exception_s=POLL_S,  # a move that waited for it cannot pass
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        )
        consumer.subscribe("Move")
        consumer.register_message_listener(listener)
        async with producer, consumer:
            refresher = producer.instance.route_refresher
            with pytest.raises(ServiceNotAvailableError):
                await producer.send(Message("Move", b"refused"))
            assert await until(
                lambda: len({mq for mq in consumer.assigned_queues() if mq.topic == "Move"}) == 2,
                5,
            )
            async with run_broker(
                tmp_path / "new",
                namesrv_addr=ns.addr,
                broker_name="broker-a",
                store_properties=small_store_properties(),
            ) as new:
                await create_topic([new.broker_addr], "Move", 2)
                await new.register_broker_all()  # the name server now routes broker-a here
                # the refusal above opened a rate-limit window: let it close
                assert await until(lambda: time.monotonic() >= refresher.window_end("Move"), 1)
                started = time.monotonic()
                result = await producer.send(Message("Move", b"moved"))
                assert time.monotonic() - started < ROUTE_READ_BOUND_S
                assert result.status is SendStatus.SEND_OK
                assert await until(
                    lambda: [m.body for m in topic_records(new, "Move")] == [b"moved"], 10
                )
                # the consumer long-polls the old broker; close its port (in-process kill)
                closed_at = time.monotonic()
                await old.remoting_server.stop()
                assert await until(lambda: [m.body for m in got] == [b"moved"], ROUTE_READ_BOUND_S)
                # well within pull_time_delay_when_exception_s and the poll (both 30 s here)
                assert time.monotonic() - closed_at < ROUTE_READ_BOUND_S


async def test_lite_pull_consumer_polls_and_commits_on_the_new_master(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "old",
            namesrv_addr=ns.addr,
            broker_name="broker-a",
            broker_role=BrokerRole.SLAVE,
            store_properties=small_store_properties(),
        ) as old,
    ):
        old.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="Lite", read_queue_nums=1, write_queue_nums=1)
        )
        await old.register_broker_all()
        consumer = LitePullConsumer(
            "lg",
            namesrv_addr=ns.addr,
            poll_name_server_interval_s=POLL_S,
            pull_time_delay_when_exception_s=POLL_S,  # a move that waited for it cannot pass
            auto_commit=False,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        )
        consumer.subscribe("Lite")
        async with consumer:
            assert await until(lambda: len(consumer.assignment()) == 1, 5)
            async with run_broker(
                tmp_path / "new",
                namesrv_addr=ns.addr,
                broker_name="broker-a",
                store_properties=small_store_properties(),
            ) as new:
                await create_topic([new.broker_addr], "Lite", 1)
                await new.register_broker_all()
                async with Producer(
                    "pg", namesrv_addr=ns.addr, instance_name="producer"
                ) as producer:
                    await producer.send(Message("Lite", b"lite"))
                closed_at = time.monotonic()
                await old.remoting_server.stop()
                got = await collect(lambda: consumer.poll(0.2), 1, ROUTE_READ_BOUND_S)
                assert [m.body for m in got] == [b"lite"]
                assert time.monotonic() - closed_at < ROUTE_READ_BOUND_S
                await consumer.commit()
                assert new.consumer_offset_manager.query_offsets("lg", "Lite") == {0: 1}


async def test_an_offset_commit_refused_by_a_gone_master_goes_to_the_new_one(
    tmp_path: Path,
) -> None:
    with socket.socket() as sock:  # an address where nothing listens any more
        sock.bind(("127.0.0.1", 0))
        gone = f"127.0.0.1:{sock.getsockname()[1]}"
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "new",
            namesrv_addr=ns.addr,
            broker_name="broker-a",
            store_properties=small_store_properties(),
        ) as new,
    ):
        await create_topic([new.broker_addr], "Commit", 1)
        await new.register_broker_all()
        instance = MQClientInstance.get(ClientConfig(namesrv_addr=ns.addr))
        try:
            instance.broker_addr_table["broker-a"] = {0: gone}  # the route before the switch
            store = RemoteBrokerOffsetStore(instance, "og")
            mq = MessageQueue("Commit", "broker-a", 0)
            store.update_offset(mq, 7, increase_only=False)
            await store.persist_all({mq})
            assert new.consumer_offset_manager.query_offsets("og", "Commit") == {0: 7}
            assert instance.route_refresher.requests_count == 1
        finally:
            await instance.shutdown()


async def test_a_rebalance_asks_the_new_route_for_the_group_when_its_broker_is_gone(
    tmp_path: Path,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        gone = f"127.0.0.1:{sock.getsockname()[1]}"
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "new",
            namesrv_addr=ns.addr,
            broker_name="broker-a",
            store_properties=small_store_properties(),
        ) as new,
    ):
        await create_topic([new.broker_addr], "Ids", 1)
        await new.register_broker_all()
        consumer = PushConsumer("ig", namesrv_addr=ns.addr, poll_name_server_interval_s=POLL_S)
        consumer.subscribe("Ids")
        consumer.register_message_listener(lambda msgs: ConsumeStatus.CONSUME_SUCCESS)
        async with consumer:
            instance = consumer.rebalance.instance
            # the route as it was before broker-a's master moved
            instance.topic_route_table["Ids"] = TopicRouteData(
                broker_datas=[
                    BrokerData(cluster="c", broker_name="broker-a", broker_addrs={0: gone})
                ]
            )
            ids = await consumer.rebalance.find_consumer_id_list("Ids")
            assert ids == [instance.client_id]
            assert instance.topic_route_table["Ids"].broker_datas[0].broker_addrs == {
                0: new.broker_addr
            }
