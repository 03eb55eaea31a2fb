"""A master killed for good: consumers finish from its slave, producers carry on with the
second master, nothing acknowledged is lost, and once the master returns consumption goes
on without replaying what was committed while it was away."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from rocketq.client import ConsumeStatus
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.cluster import FAST_CONSUMER
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic
from tests.e2e.ha_support import (
    FAST_PRODUCER,
    TOPIC,
    Ledger,
    master_conf,
    run_slave,
    send_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(180)]


class Bodies:
    def __init__(self) -> None:
        self.got: Counter[bytes] = Counter()
        self.from_addr: Counter[str] = Counter()

    def __call__(self, msgs: list[MessageExt]) -> ConsumeStatus:
        for m in msgs:
            self.got[m.body] += 1
            self.from_addr[f"{m.store_host[0]}:{m.store_host[1]}"] += 1
        return ConsumeStatus.CONSUME_SUCCESS


def consumer(namesrv: str, listener: Bodies) -> PushConsumer:
    c = PushConsumer(
        "GroupHA",
        namesrv_addr=namesrv,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    c.subscribe(TOPIC, "*")
    c.register_message_listener(listener)
    return c


async def produce(producer: Producer, ledger: Ledger, tag: str, count: int) -> None:
    stop = asyncio.Event()
    target = len(ledger.acked) + count
    task = asyncio.create_task(send_until(producer, ledger, stop, tag, workers=2))
    try:
        assert await until(lambda: len(ledger.acked) >= target, 60), ledger
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def test_master_lost_for_good_consumers_finish_from_slave_and_nothing_is_replayed(
    tmp_path: Path,
) -> None:
    ledger = Ledger()
    async with run_namesrv() as ns:
        conf_a = master_conf(tmp_path / "a", ns.addr, name="broker-a")
        conf_b = master_conf(tmp_path / "b", ns.addr, name="broker-b", role="ASYNC_MASTER")
        master_a = BrokerProcess(tmp_path / "a-proc", conf_a)
        master_b = BrokerProcess(tmp_path / "b-proc", conf_b)
        await asyncio.gather(asyncio.to_thread(master_a.start), asyncio.to_thread(master_b.start))
        try:
            async with (
                run_slave(tmp_path / "a-slave", ns.addr, master_a.conf) as slave_a,
                Producer("pg", namesrv_addr=ns.addr, **FAST_PRODUCER) as producer,
            ):
                await create_topic([master_a.addr, master_b.addr], TOPIC)
                assert await until(
                    lambda: slave_a.message_store.ha_service.ha_client.connected.is_set(), 10
                )
                await produce(producer, ledger, "before", 200)
                on_a = [a for a in ledger.acked if a.broker_name == "broker-a"]
                assert on_a, "the producer never used broker-a"

                # the slave has copied the topic (it syncs every 0.5 s here, 10 s by default)
                topics = slave_a.topic_config_manager.topic_config_table
                assert await until(lambda: TOPIC in topics, 10)
                master_a.kill()  # for good, until the end of phase 2
                killed_at = len(ledger.acked)
                await produce(producer, ledger, "during", 100)
                during = {a.broker_name for a in ledger.acked[killed_at:]}
                assert during == {"broker-b"}

                first = Bodies()
                c1 = consumer(ns.addr, first)
                await c1.start()
                try:
                    acked = {a.body for a in ledger.acked}
                    assert await until(lambda: acked <= set(first.got), 60), len(
                        acked - set(first.got)
                    )
                    assert first.from_addr[slave_a.broker_addr] == 0  # STOREHOST is the master
                    # the offsets of broker-a's queues land on the slave (no master to take them)
                    wanted = {
                        q: 1 + max(a.queue_offset for a in on_a if a.queue_id == q)
                        for q in {a.queue_id for a in on_a}
                    }
                    assert await until(
                        lambda: all(
                            slave_a.consumer_offset_manager.query_offset("GroupHA", TOPIC, q) >= o
                            for q, o in wanted.items()
                        ),
                        20,
                    )
                    await asyncio.to_thread(master_a.start)  # the master returns
                    assert await until(
                        lambda: (
                            c1._instance.find_broker_address_in_subscribe(
                                "broker-a", only_this_broker=True
                            )
                            is not None
                        ),
                        20,
                    )
                    await produce(producer, ledger, "after", 100)
                    assert await until(lambda: {a.body for a in ledger.acked} <= set(first.got), 60)
                finally:
                    await c1.shutdown()  # persists its offsets, to the returned master now
                assert max(first.got.values()) == 1, "a message was delivered twice"

                second = Bodies()
                c2 = consumer(ns.addr, second)
                await c2.start()
                try:
                    await produce(producer, ledger, "last", 40)
                    last = {a.body for a in ledger.acked[-40:]}
                    assert await until(lambda: last <= set(second.got), 60)
                    await asyncio.sleep(1.0)  # time for a replay to show, if there were one
                finally:
                    await c2.shutdown()
                replayed = set(second.got) & set(first.got)
                assert replayed == set(), f"{len(replayed)} committed messages replayed"
                print(  # the figures RELIABILITY.md reports (pytest -s shows them)
                    f"HA master lost: {len(ledger.acked)} acknowledged "
                    f"({len(on_a)} on broker-a before its loss), {sum(first.got.values())} "
                    f"+ {sum(second.got.values())} delivered, lost 0, duplicates 0, replayed 0"
                )
        finally:
            await asyncio.to_thread(master_a.stop)
            await asyncio.to_thread(master_b.stop)
