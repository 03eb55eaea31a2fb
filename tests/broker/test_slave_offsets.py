"""Offsets a consumer committed on the slave while its master was down survive the master's
return, even when no consumer is left to commit them again: the slave hands them to the
returned master before it takes the master's table, and never lowers what the master has."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.broker.config import BrokerConfig, BrokerRole
from rocketq.broker.controller import BrokerController
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import SMALL_INDEX, run_broker, run_namesrv, start_broker_retrying
from rocketq.testing.store import ha_store_properties
from rocketq.testing.wait import until

STORE = ha_store_properties(flushDiskType="SYNC_FLUSH")

pytestmark = pytest.mark.timeout(60)


def commit(group: str, topic: str, queue_id: int, offset: int) -> RemotingCommand:
    header = UpdateConsumerOffsetRequestHeader(
        consumer_group=group, topic=topic, queue_id=queue_id, commit_offset=offset
    )
    return RemotingCommand.create_request(
        RequestCode.UPDATE_CONSUMER_OFFSET, header.to_ext_fields()
    )


@contextlib.asynccontextmanager
async def master_at(
    root: Path, namesrv: str, port: int = 0, ha_port: int = 0
) -> AsyncIterator[BrokerController]:
    """A master on any free ports, or on the ports it had (so that it returns at the same
    address): then retried a bounded while if something took one meanwhile."""
    config = dataclasses.replace(
        BrokerConfig(),
        listen_host="127.0.0.1",
        listen_port=port,
        broker_ip1="127.0.0.1",
        namesrv_addr=namesrv,
        register_name_server_period_ms=300,
        store_path_root_dir=str(root),
        store_properties={**SMALL_INDEX, **STORE, "haListenPort": str(ha_port)},
    )
    master = await start_broker_retrying(lambda: config)
    try:
        yield master
    finally:
        await master.shutdown()


async def test_offsets_committed_on_the_slave_while_the_master_was_down_reach_the_master(
    tmp_path: Path,
) -> None:
    async with (
        run_namesrv() as ns,
        RemotingClient() as client,
        master_at(tmp_path / "m", ns.addr) as master,
        run_broker(
            tmp_path / "s",
            namesrv_addr=ns.addr,
            broker_role=BrokerRole.SLAVE,
            broker_id=1,
            slave_read_enable=True,
            slave_sync_interval_ms=200,
            register_name_server_period_ms=300,
            store_properties=STORE,
        ) as slave,
    ):
        offsets = slave.consumer_offset_manager
        for queue_id, offset in ((0, 5), (1, 40)):
            done = await client.invoke(master.broker_addr, commit("G", "T", queue_id, offset))
            assert done.code == ResponseCode.SUCCESS
        assert await until(lambda: offsets.query_offset("G", "T", 1) == 40, 10)
        ports = master.port, master.ha_port
        await master.shutdown()  # the master is down: the consumer commits to the slave
        for queue_id, offset in ((0, 9), (1, 30)):
            done = await client.invoke(slave.broker_addr, commit("G", "T", queue_id, offset))
            assert done.code == ResponseCode.SUCCESS
        on_disk = ConsumerOffsetManager(tmp_path / "m")
        assert on_disk.load()
        assert on_disk.query_offset("G", "T", 0) == 5  # what the master returns with
        rounds = slave.slave_synchronize.sync_count
        async with master_at(tmp_path / "m", ns.addr, *ports) as returned:
            assert await until(lambda: slave.slave_synchronize.sync_count >= rounds + 2, 20)
            master_offsets = returned.consumer_offset_manager
            assert master_offsets.query_offset("G", "T", 0) == 9  # handed over
            assert master_offsets.query_offset("G", "T", 1) == 40  # never lowered
            assert offsets.query_offset("G", "T", 0) == 9
            assert offsets.query_offset("G", "T", 1) == 40  # the master's, as RocketMQ
