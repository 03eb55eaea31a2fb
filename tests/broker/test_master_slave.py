"""A master and its slave as real brokers in one process, found through a real name server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketq.broker.config import BrokerRole
from rocketq.broker.controller import BrokerController
from rocketq.broker.topic_config import TopicConfig
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.client.status import SendStatus
from rocketq.namesrv.server import NamesrvController
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv, start_broker_retrying
from rocketq.testing.broker_process import free_port_pair
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.store import commitlog_bytes, ha_store_properties, slave_linked
from rocketq.testing.wait import until
from rocketq.testing.wire import pull_request, send_request

pytestmark = pytest.mark.timeout(60)

STORE = ha_store_properties(flushDiskType="SYNC_FLUSH")


@dataclass
class Group:
    namesrv: NamesrvController
    master: BrokerController
    slave: BrokerController


@contextlib.asynccontextmanager
async def master_and_slave(
    tmp: Path,
    role: BrokerRole,
    *,
    slave_read_enable: bool = True,
    master_store: dict[str, str] | None = None,
    slave_store: dict[str, str] | None = None,
) -> AsyncIterator[Group]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp / "master",
            namesrv_addr=ns.addr,
            broker_role=role,
            slave_read_enable=slave_read_enable,
            store_properties={**STORE, **(master_store or {})},
        ) as master,
        run_broker(
            tmp / "slave",
            namesrv_addr=ns.addr,
            broker_role=BrokerRole.SLAVE,
            broker_id=1,
            slave_read_enable=slave_read_enable,
            slave_sync_interval_ms=200,
            store_properties={**STORE, **(slave_store or {})},
        ) as slave,
    ):
        assert await until(lambda: slave_linked(master.message_store), 10)
        yield Group(ns, master, slave)


async def test_sync_master_acknowledges_sends_the_slave_already_holds(tmp_path: Path) -> None:
    async with (
        master_and_slave(tmp_path, BrokerRole.SYNC_MASTER) as g,
        Producer("pg", namesrv_addr=g.namesrv.addr, **FAST_CLIENT) as producer,
    ):
        ends = []
        for i in range(120):
            result = await producer.send(Message("TopicHA", b"m%04d" % i + b"." * 700))
            assert result.status is SendStatus.SEND_OK
            ends.append(g.slave.message_store.get_max_phy_offset())
        assert ends == sorted(ends)
        assert g.slave.message_store.get_max_phy_offset() == (
            g.master.message_store.get_max_phy_offset()
        )
        slave_log = commitlog_bytes(g.slave.message_store)
        assert slave_log == commitlog_bytes(g.master.message_store)  # across two 64 KiB rolls
        assert await until(lambda: g.slave.message_store.dispatch_behind_bytes() == 0, 10)
        total = sum(g.slave.message_store.get_max_offset_in_queue("TopicHA", q) for q in range(8))
        assert total == 120


async def test_slave_copies_topics_offsets_delay_offsets_and_groups_from_its_master(
    tmp_path: Path,
) -> None:
    delay = {"messageDelayLevel": "1s 1s"}
    async with master_and_slave(
        tmp_path, BrokerRole.ASYNC_MASTER, master_store=delay, slave_store=delay
    ) as g:
        g.master.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="SyncedTopic", read_queue_nums=3, write_queue_nums=3)
        )
        await g.master.register_broker_all()
        async with Producer("pg", namesrv_addr=g.namesrv.addr, **FAST_CLIENT) as producer:
            for _ in range(3):  # the master's schedule service delivers them: level 2 at 3
                sent = await producer.send(Message("SyncedTopic", b"later", delay_time_level=2))
                assert sent.status is SendStatus.SEND_OK
        schedule = g.master.schedule_message_service
        assert schedule is not None
        assert await until(lambda: schedule.offset_table.get(2) == 3, 10)
        slave_schedule = g.slave.schedule_message_service
        assert slave_schedule is not None
        assert await until(lambda: slave_schedule.offset_table.get(2) == 3, 10)
        delay_file = tmp_path / "slave" / "config" / "delayOffset.json"
        assert await until(
            lambda: delay_file.exists() and '"offsetTable"' in delay_file.read_text(), 10
        )
        g.master.consumer_offset_manager.commit_offset("x", "SyncedGroup", "SyncedTopic", 2, 42)
        g.master.subscription_group_manager.find_subscription_group_config("SyncedGroup")
        assert await until(
            lambda: (
                g.slave.consumer_offset_manager.query_offset("SyncedGroup", "SyncedTopic", 2) == 42
            ),
            10,
        )
        assert await until(
            lambda: "SyncedTopic" in g.slave.topic_config_manager.topic_config_table, 10
        )
        assert await until(
            lambda: "SyncedGroup" in g.slave.subscription_group_manager.subscription_group_table,
            10,
        )
        assert g.slave.slave_synchronize.master_addr == g.master.broker_addr
        assert (tmp_path / "slave" / "config" / "topics.json").read_text().count("SyncedTopic")


async def test_slave_refuses_sends_and_stores_nothing(tmp_path: Path) -> None:
    async with master_and_slave(tmp_path, BrokerRole.ASYNC_MASTER) as g:
        g.slave.topic_config_manager.update_topic_config(TopicConfig(topic_name="T"))
        client = RemotingClient()
        try:
            response = await client.invoke(g.slave.broker_addr, send_request("T", b"no"), 5)
        finally:
            await client.shutdown()
        assert response.code == ResponseCode.SERVICE_NOT_AVAILABLE
        assert "slave" in (response.remark or "")
        assert g.slave.message_store.get_max_phy_offset() == 0


async def test_sync_master_without_its_slave_answers_slave_not_available(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "m",
            namesrv_addr=ns.addr,
            broker_role=BrokerRole.SYNC_MASTER,
            store_properties=STORE,
        ) as master,
    ):
        master.topic_config_manager.update_topic_config(TopicConfig(topic_name="T"))
        client = RemotingClient()
        try:
            response = await client.invoke(master.broker_addr, send_request("T", b"x"), 5)
        finally:
            await client.shutdown()
        assert response.code == ResponseCode.SLAVE_NOT_AVAILABLE
        assert master.message_store.get_max_phy_offset() > 0


async def test_registration_advertises_the_port_the_ha_service_listens_on(
    tmp_path: Path,
) -> None:
    async with master_and_slave(tmp_path, BrokerRole.ASYNC_MASTER) as g:
        ha_port = g.master.message_store.ha_service.listen_port
        assert g.master.identity().ha_server_addr == f"127.0.0.1:{ha_port}"
        client = g.slave.message_store.ha_service.ha_client
        assert client is not None
        assert client.master_address == f"127.0.0.1:{ha_port}"


async def pull(addr: str, queue_id: int = 0, offset: int = 0) -> RemotingCommand:
    client = RemotingClient()
    try:
        return await client.invoke(addr, pull_request("G", "T", queue_id, offset, suspend_ms=0), 5)
    finally:
        await client.shutdown()


async def dispatched(*brokers: BrokerController) -> None:
    """Wait until each broker's store dispatched what it holds: an answered send (and a
    slave's copy of it) is read back only from the consume queue."""
    for broker in brokers:
        assert await asyncio.to_thread(broker.message_store.wait_for_dispatch, 10.0)


async def test_master_suggests_the_slave_to_a_consumer_reading_beyond_memory(
    tmp_path: Path,
) -> None:
    beyond = {"accessMessageInMemoryMaxRatio": "0"}  # every read is "beyond memory"
    async with master_and_slave(tmp_path, BrokerRole.SYNC_MASTER, master_store=beyond) as g:
        g.master.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="T", read_queue_nums=1, write_queue_nums=1)
        )
        await g.master.register_broker_all()
        async with Producer("pg", namesrv_addr=g.namesrv.addr, **FAST_CLIENT) as producer:
            for i in range(5):
                assert (await producer.send(Message("T", b"%d" % i))).status is SendStatus.SEND_OK
        await dispatched(g.master, g.slave)  # a SYNC_MASTER's SEND_OK: the slave holds them
        response = await pull(g.master.broker_addr)
        assert response.code == ResponseCode.SUCCESS
        assert response.ext_fields["suggestWhichBrokerId"] == "1"
        assert await until(lambda: "T" in g.slave.topic_config_manager.topic_config_table, 10)
        from_slave = await pull(g.slave.broker_addr)
        assert from_slave.code == ResponseCode.SUCCESS
        assert from_slave.body == response.body  # the same records, byte for byte
        assert from_slave.ext_fields["suggestWhichBrokerId"] == "0"


async def test_a_slave_without_slave_read_enable_sends_consumers_back_to_the_master(
    tmp_path: Path,
) -> None:
    async with master_and_slave(tmp_path, BrokerRole.SYNC_MASTER, slave_read_enable=False) as g:
        g.master.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="T", read_queue_nums=1, write_queue_nums=1)
        )
        await g.master.register_broker_all()
        async with Producer("pg", namesrv_addr=g.namesrv.addr, **FAST_CLIENT) as producer:
            assert (await producer.send(Message("T", b"x"))).status is SendStatus.SEND_OK
        assert await until(lambda: "T" in g.slave.topic_config_manager.topic_config_table, 10)
        response = await pull(g.slave.broker_addr)
        assert response.code == ResponseCode.PULL_RETRY_IMMEDIATELY
        assert response.ext_fields["suggestWhichBrokerId"] == "0"
        assert not response.body
        assert (await pull(g.master.broker_addr)).ext_fields["suggestWhichBrokerId"] == "0"


async def test_our_consumer_follows_the_suggestion_and_pulls_from_the_slave(
    tmp_path: Path,
) -> None:
    from rocketq.client import ConsumeStatus
    from rocketq.client.aio import PushConsumer
    from rocketq.testing.cluster import FAST_CONSUMER

    beyond = {"accessMessageInMemoryMaxRatio": "0"}
    async with master_and_slave(tmp_path, BrokerRole.SYNC_MASTER, master_store=beyond) as g:
        g.master.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="T", read_queue_nums=1, write_queue_nums=1)
        )
        await g.master.register_broker_all()
        async with Producer("pg", namesrv_addr=g.namesrv.addr, **FAST_CLIENT) as producer:
            for i in range(40):
                assert (await producer.send(Message("T", b"%d" % i))).status is SendStatus.SEND_OK
        assert await until(lambda: "T" in g.slave.topic_config_manager.topic_config_table, 10)
        got: list[bytes] = []

        def listener(msgs: list[object]) -> ConsumeStatus:
            got.extend(m.body for m in msgs)  # type: ignore[attr-defined]
            return ConsumeStatus.CONSUME_SUCCESS

        consumer = PushConsumer(
            "G",
            namesrv_addr=g.namesrv.addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            pull_batch_size=4,
            **FAST_CONSUMER,
        )
        consumer.subscribe("T", "*")
        consumer.register_message_listener(listener)
        await consumer.start()
        try:
            assert await until(lambda: len(got) >= 40, 30)
        finally:
            await consumer.shutdown()
        assert sorted(got) == sorted(b"%d" % i for i in range(40))
        # the master suggested broker 1 after its first answer: the slave served pulls too
        assert g.slave.broker_stats_manager.get_message_times_total_found > 0
        assert g.master.broker_stats_manager.get_message_times_total_found > 0


async def test_a_slave_refuses_topic_changes_they_come_from_its_master(tmp_path: Path) -> None:
    from rocketq.testing.wire import create_topic

    async with master_and_slave(tmp_path, BrokerRole.ASYNC_MASTER) as g:
        with pytest.raises(AssertionError, match="from master broker"):
            await create_topic([g.slave.broker_addr], "OnSlave")
        assert "OnSlave" not in g.slave.topic_config_manager.topic_config_table
        await create_topic([g.master.broker_addr], "OnMaster")
        topics = g.slave.topic_config_manager.topic_config_table
        assert await until(lambda: "OnMaster" in topics, 10)


async def test_the_ha_port_is_the_listen_port_plus_one_unless_ha_listen_port_is_set(
    tmp_path: Path,
) -> None:
    import dataclasses

    from rocketq.broker.config import BrokerConfig

    def configure() -> BrokerConfig:  # a picked pair: picked again if taken
        return dataclasses.replace(
            BrokerConfig(),
            listen_host="127.0.0.1",
            listen_port=free_port_pair(),
            broker_ip1="127.0.0.1",
            broker_role=BrokerRole.SYNC_MASTER,
            store_path_root_dir=str(tmp_path / "m"),
            store_properties=dict(STORE),  # no haListenPort: BrokerStartup's listenPort + 1
        )

    master = await start_broker_retrying(configure, pause_s=0.0)
    port = master.config.listen_port
    try:
        assert master.message_store.ha_service.listen_port == port + 1
        assert master.identity().ha_server_addr == f"127.0.0.1:{port + 1}"
    finally:
        await master.shutdown()
