"""Metadata follows within 2 s in controller mode (broker/metadata_acks.py): a topic create on
the master is answered once the in-sync slave holds it, refused with a remark when the slave
does not confirm in time, and committed offsets and subscription groups reach the slave
within 2 s, the topic table crossing the wire only when its version moved. The slave follows
the table by long polls (broker/topic_config_feed.py): a create is answered in round trips,
not in poll periods, and a held poll is answered with the change alone."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.broker import slave_sync
from rocketq.broker.controller import BrokerController
from rocketq.broker.metadata_acks import TOPIC_SYNC_WAIT_S
from rocketq.broker.topic_config_feed import TOPIC_CONFIG_CHANGES
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.controller_mode import manager, run_controller_mode_broker
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic_request, request

pytestmark = pytest.mark.timeout(60)


@contextlib.asynccontextmanager
async def master_and_slave(tmp: Path) -> AsyncIterator[tuple[BrokerController, BrokerController]]:
    """A group of two, both in the SyncStateSet, the slave's metadata poll running."""
    controllers = ControllerGroup(tmp / "controller", size=1)
    await controllers.start_all()
    try:
        leader = await controllers.leader()
        async with (
            run_namesrv() as ns,
            run_controller_mode_broker(tmp / "b0", ns.addr, [leader.addr]) as b0,
            run_controller_mode_broker(tmp / "b1", ns.addr, [leader.addr]) as b1,
        ):
            brokers = [b0, b1]
            assert await until(lambda: any(manager(b).is_master for b in brokers), 20)
            master = next(b for b in brokers if manager(b).is_master)
            slave = b1 if master is b0 else b0
            assert await until(lambda: len(manager(master).sync_state_set) == 2, 20)
            assert await until(lambda: slave.slave_synchronize.sync_count > 0, 10)
            yield master, slave
    finally:
        await controllers.stop_all()


async def test_a_topic_create_is_answered_once_the_in_sync_slave_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with master_and_slave(tmp_path) as (master, slave):
        client = RemotingClient()
        try:
            # the follower's poll period, past the master's wait for the slave: a create whose
            # answer waited for a poll period would be refused, however fast the machine
            monkeypatch.setattr(slave_sync, "METADATA_POLL_S", TOPIC_SYNC_WAIT_S * 10)
            response = await client.invoke(master.broker_addr, create_topic_request("TopicNew"), 10)
            assert response.code == ResponseCode.SUCCESS, response.remark
            # no wait: the answer came once the slave reported the new version
            assert "TopicNew" in slave.topic_config_manager.topic_config_table
            assert (
                slave.topic_config_manager.data_version == master.topic_config_manager.data_version
            )

            # each create waits for the slave's next poll, sent as soon as it applied the
            # change: round trips, never the poll period (answered within the master's wait)
            for i in range(10):
                answer = await client.invoke(
                    master.broker_addr, create_topic_request(f"TopicQuick{i}"), 10
                )
                assert answer.code == ResponseCode.SUCCESS, answer.remark
                assert f"TopicQuick{i}" in slave.topic_config_manager.topic_config_table
            monkeypatch.undo()  # the stalled slave below retries after the real period

            # the slave's poll no longer moves the table while nothing changed
            before = slave.slave_synchronize.sync_count
            assert await until(lambda: slave.slave_synchronize.sync_count >= before + 2, 5)
            assert "TopicNew" in slave.topic_config_manager.topic_config_table

            # offsets committed on the master reach the slave within 2 s
            master.consumer_offset_manager.commit_offset("h", "G1", "TopicNew", 2, 77)
            assert await until(
                lambda: slave.consumer_offset_manager.query_offset("G1", "TopicNew", 2) == 77, 2.0
            )

            # a slave that stops syncing: the create is refused with a remark, not acked
            stalled = slave.slave_synchronize.master_addr
            slave.slave_synchronize.master_addr = None
            late = await client.invoke(
                master.broker_addr, create_topic_request("TopicLate"), TOPIC_SYNC_WAIT_S + 5
            )
            assert late.code == ResponseCode.SYSTEM_ERROR
            assert "did not confirm" in (late.remark or "")
            assert "TopicLate" in master.topic_config_manager.topic_config_table
            assert "TopicLate" not in slave.topic_config_manager.topic_config_table
            slave.slave_synchronize.master_addr = stalled
            assert await until(
                lambda: "TopicLate" in slave.topic_config_manager.topic_config_table, 2.0
            )
        finally:
            await client.shutdown()


async def test_a_poll_with_the_current_version_gets_the_version_alone_or_is_held(
    tmp_path: Path,
) -> None:
    async with master_and_slave(tmp_path) as (master, _):
        client = RemotingClient()
        try:
            full = await client.invoke(
                master.broker_addr, request(RequestCode.GET_ALL_TOPIC_CONFIG), 5
            )
            assert b"topicConfigTable" in (full.body or b"")
            version = fastjson.dumps(master.topic_config_manager.data_version.to_json())
            poll = await client.invoke(
                master.broker_addr,
                request(
                    RequestCode.GET_ALL_TOPIC_CONFIG,
                    slaveBrokerId=9,
                    topicDataVersion=version.decode(),
                ),
                5,
            )
            # held while the version stands; answered with the change alone once it moves
            held = asyncio.create_task(
                client.invoke(
                    master.broker_addr,
                    request(
                        RequestCode.GET_ALL_TOPIC_CONFIG,
                        slaveBrokerId=9,
                        topicDataVersion=version.decode(),
                        topicWaitMillis=20_000,
                    ),
                    30,
                )
            )
            created = await client.invoke(master.broker_addr, create_topic_request("TopicHeld"), 10)
            assert created.code == ResponseCode.SUCCESS, created.remark
            changed = await asyncio.wait_for(held, 10)
        finally:
            await client.shutdown()
        assert poll.code == ResponseCode.SUCCESS
        assert b"topicConfigTable" not in (poll.body or b"")
        assert b"dataVersion" in (poll.body or b"")
        assert 9 in master.slave_version_acks.reported
        answer = fastjson.loads(bytes(changed.body or b""))
        assert "topicConfigTable" not in answer
        assert [c["topicConfig"]["topicName"] for c in answer[TOPIC_CONFIG_CHANGES]] == [
            "TopicHeld"
        ]
        assert answer["dataVersion"] == master.topic_config_manager.data_version.to_json()


async def test_a_metadata_round_counts_for_the_pop_offsets_only_while_the_ha_link_transfers(
    tmp_path: Path,
) -> None:
    """A new master reads back the cks stored since its last offset sync (pop_offsets.py); a
    round answered on the master's address while the HA link is down may come from the old
    master restarted, holding offsets from before its last pops (CI saw a promoted slave skip
    those cks and serve acknowledged messages again), so such a round moves nothing."""
    async with master_and_slave(tmp_path) as (_, slave):
        role = manager(slave)
        assert await until(lambda: role.offsets_synced_ms > 0, 10)
        client = slave.message_store.ha_service.ha_client
        assert client is not None
        ha_addr = client.master_address
        with socket.socket() as nowhere:  # bound, never listening: connections are refused
            nowhere.bind(("127.0.0.1", 0))
            client.update_ha_master_address(f"127.0.0.1:{nowhere.getsockname()[1]}")
            assert await until(lambda: not client.connected.is_set(), 10)
            rounds = slave.slave_synchronize.sync_count
            frozen = role.offsets_synced_ms
            # the master answers every round meanwhile; none of them counts
            assert await until(lambda: slave.slave_synchronize.sync_count >= rounds + 3, 10)
            assert role.offsets_synced_ms == frozen
            client.update_ha_master_address(ha_addr)
            assert await until(lambda: role.offsets_synced_ms > frozen, 10)
