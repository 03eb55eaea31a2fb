"""Three brokers in controller mode around one in-process controller: registration with
persistent ids, one master elected, slaves joining the SyncStateSet, SYNC sends answered only
once the whole set holds them, the epoch cache, and the master's fencing on a stale epoch."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common.message_id import decode_message_id
from rocketq.namesrv.server import NamesrvController
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_bodies import OPEN_END_OFFSET, EpochEntryCache
from rocketq.remoting.protocol.controller_headers import ElectMasterRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.controller_mode import (
    CLUSTER,
    autoswitch,
    manager,
    run_controller_mode_broker,
    send_one,
)
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.pop import pop
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(90)

TOPIC = "TopicCM"


@contextlib.asynccontextmanager
async def group_of_three(
    tmp: Path,
) -> AsyncIterator[tuple[list[BrokerController], NamesrvController, str]]:
    controllers = ControllerGroup(tmp / "controller", size=1)
    await controllers.start_all()
    try:
        leader = await controllers.leader()
        async with (
            run_namesrv() as ns,
            contextlib.AsyncExitStack() as stack,
        ):
            brokers = [
                await stack.enter_async_context(
                    run_controller_mode_broker(tmp / f"b{i}", ns.addr, [leader.addr])
                )
                for i in range(3)
            ]
            yield brokers, ns, leader.addr
    finally:
        await controllers.stop_all()


def roles_settled(brokers: list[BrokerController]) -> bool:
    managers = [manager(b) for b in brokers]
    masters = [m for m in managers if m.is_master]
    return len(masters) == 1 and all(not m.fenced for m in managers)


async def test_a_group_elects_one_master_persists_ids_and_acks_only_what_the_set_holds(
    tmp_path: Path,
) -> None:
    async with group_of_three(tmp_path) as (brokers, _, _):
        assert await until(lambda: roles_settled(brokers), 20)
        ids = sorted(manager(b).broker_controller_id or 0 for b in brokers)
        assert ids == [1, 2, 3]
        for i, b in enumerate(brokers):
            text = (tmp_path / f"b{i}" / "brokerIdentity").read_text()
            assert text == f"{CLUSTER}#broker-a#{manager(b).broker_controller_id}"
            assert not (tmp_path / f"b{i}" / "brokerIdentity-temp").exists()
        master = next(b for b in brokers if manager(b).is_master)
        slaves = [b for b in brokers if b is not master]
        assert master.config.broker_id == 0
        assert {s.config.broker_id for s in slaves} == {
            manager(s).broker_controller_id for s in slaves
        }
        assert await until(lambda: len(manager(master).sync_state_set) == 3, 20)
        client = RemotingClient()
        try:
            for n in range(5):
                response = await send_one(client, master.broker_addr, TOPIC, b"m%d" % n)
                assert response.code == ResponseCode.SUCCESS, response.remark
                _, phy = decode_message_id(response.ext_fields["msgId"])
                for s in slaves:  # acked: every member of the set holds the whole record
                    assert s.message_store.get_max_phy_offset() > phy
            refused = await send_one(client, slaves[0].broker_addr, TOPIC, b"to a slave")
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
            epochs = await client.invoke(
                master.broker_addr,
                RemotingCommand.create_request(RequestCode.GET_BROKER_EPOCH_CACHE),
                5,
            )
        finally:
            await client.shutdown()
        assert epochs.code == ResponseCode.SUCCESS, epochs.remark
        cache = EpochEntryCache.decode(epochs.body)
        assert (cache.broker_name, cache.broker_id) == ("broker-a", 0)
        assert [(e.epoch, e.start_offset, e.end_offset) for e in cache.epoch_list] == [
            (1, 0, OPEN_END_OFFSET)
        ]
        assert cache.max_offset == master.message_store.get_max_phy_offset()


async def test_a_broker_with_no_reachable_controller_stays_fenced_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = "127.0.0.1:1"  # nothing listens on port 1
    async with (
        run_namesrv() as ns,
        run_controller_mode_broker(tmp_path / "b", ns.addr, [dead]) as broker,
    ):
        rm = manager(broker)
        assert await until(lambda: rm.start_attempts >= 3, 20)
        client = RemotingClient()
        try:
            response = await send_one(client, broker.broker_addr, TOPIC, b"fenced")
        finally:
            await client.shutdown()
        assert rm.fenced
        assert response.code == ResponseCode.SERVICE_NOT_AVAILABLE
        assert "fenced" in (response.remark or "")
        said = [r for r in caplog.records if "no controller reachable" in r.getMessage()]
        assert len(said) == 1
        assert not (tmp_path / "b" / "brokerIdentity").exists()
        assert autoswitch(broker).epoch_cache.last_epoch() == -1


async def test_a_master_deposed_by_a_newer_epoch_turns_slave_and_refuses_sends(
    tmp_path: Path,
) -> None:
    """mqadmin electMaster moves the master: the push reaches both; the old master refuses
    sends as a slave, learns the new master's HA address from the name server (which keeps
    the id-0 claim of the higher epoch) and rejoins the SyncStateSet."""
    async with group_of_three(tmp_path) as (brokers, ns, controller_addr):
        assert await until(lambda: roles_settled(brokers), 20)
        old = next(b for b in brokers if manager(b).is_master)
        assert await until(lambda: len(manager(old).sync_state_set) == 3, 20)
        new = next(b for b in brokers if b is not old)
        new_id = manager(new).broker_controller_id
        assert new_id is not None
        client = RemotingClient()
        try:
            assert (await send_one(client, old.broker_addr, TOPIC, b"epoch 1")).code == 0
            header = ElectMasterRequestHeader(
                cluster_name=CLUSTER, broker_name="broker-a", broker_id=new_id, designate_elect=True
            )
            request = RemotingCommand.create_request(
                RequestCode.CONTROLLER_ELECT_MASTER, header.to_ext_fields()
            )
            elected = await client.invoke(controller_addr, request, 10)
            assert elected.code == ResponseCode.SUCCESS, elected.remark
            assert await until(lambda: manager(new).is_master and not manager(old).is_master, 20)
            refused = await send_one(client, old.broker_addr, TOPIC, b"to the deposed")
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
            assert (await send_one(client, new.broker_addr, TOPIC, b"epoch 2")).code == 0
        finally:
            await client.shutdown()
        assert (manager(new).master_epoch, manager(old).master_epoch) == (2, 2)
        assert old.config.broker_id == manager(old).broker_controller_id
        assert await until(lambda: len(manager(new).sync_state_set) == 3, 20)
        addrs = ns.route_info_manager.broker_addr_table["broker-a"].broker_addrs
        assert addrs[0] == new.broker_addr
        assert addrs[old.config.broker_id] == old.broker_addr
        assert autoswitch(old).epoch_cache.last_epoch() == 2


async def test_the_controller_leader_lost_sends_go_on_and_the_next_leader_commits_a_shrink(
    tmp_path: Path,
) -> None:
    """Three controllers: the brokers heartbeat to all, find the new leader after the old one
    stops, and the master's shrink (a slave stopped) is committed by the new leader."""
    controllers = ControllerGroup(tmp_path / "controller", size=3)
    await controllers.start_all()
    client = RemotingClient()
    try:
        first = await controllers.leader()
        async with run_namesrv() as ns, contextlib.AsyncExitStack() as stack:
            brokers = [
                await stack.enter_async_context(
                    run_controller_mode_broker(tmp_path / f"b{i}", ns.addr, controllers.addrs)
                )
                for i in range(3)
            ]
            assert await until(lambda: roles_settled(brokers), 20)
            master = next(b for b in brokers if manager(b).is_master)
            assert await until(lambda: len(manager(master).sync_state_set) == 3, 20)
            await controllers.stop(first.self_id)
            second = await controllers.leader()
            assert second.addr != first.addr
            for n in range(5):  # the data path never waits for a controller
                response = await send_one(client, master.broker_addr, TOPIC, b"c%d" % n)
                assert response.code == ResponseCode.SUCCESS, response.remark
            slave = next(b for b in brokers if b is not master)
            await slave.shutdown()
            gone = manager(slave).broker_controller_id
            assert await until(lambda: gone not in manager(master).sync_state_set, 20)
            assert len(manager(master).sync_state_set) == 2
            assert manager(master).client.leader_addr == second.addr
            assert manager(master).is_master  # no election: the master kept its epoch
            assert manager(master).master_epoch == 1
    finally:
        await client.shutdown()
        await controllers.stop_all()


async def test_a_broker_identity_of_another_broker_name_keeps_the_broker_fenced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that belongs to broker-b: start-up refuses it in one line and stays fenced."""
    controllers = ControllerGroup(tmp_path / "controller", size=1)
    await controllers.start_all()
    try:
        leader = await controllers.leader()
        root = tmp_path / "b"
        root.mkdir()
        (root / "brokerIdentity").write_text(f"{CLUSTER}#broker-b#1")
        async with run_controller_mode_broker(root, None, [leader.addr]) as broker:
            rm = manager(broker)
            assert await until(lambda: bool(rm.start_failure), 20)
            assert rm.fenced
            assert "broker-b" in rm.start_failure
            said = [r for r in caplog.records if "cannot start" in r.getMessage()]
            assert len(said) == 1
    finally:
        await controllers.stop_all()


async def test_a_replica_that_is_not_a_serving_master_refuses_pops_at_once(
    tmp_path: Path,
) -> None:
    """A pop read on a slave could put its check point the instant the slave became master,
    before its pop offsets moved past the old master's last pops (RELIABILITY.md, a partition
    of the master): the slave refuses a pop before reading anything; the master serves it."""
    async with group_of_three(tmp_path) as (brokers, _, _):
        assert await until(lambda: roles_settled(brokers), 20)
        master = next(b for b in brokers if manager(b).is_master)
        slave = next(b for b in brokers if not manager(b).is_master)
        client = RemotingClient()
        try:
            assert (await send_one(client, master.broker_addr, TOPIC, b"popped")).code == 0
            tables = slave.topic_config_manager.topic_config_table
            assert await until(lambda: TOPIC in tables, 20)  # the slave knows the topic
            assert await until(lambda: slave.message_store.get_max_phy_offset() > 0, 20)
            refused, got = await pop(
                client, slave.broker_addr, "broker-a", "GroupCM", TOPIC, poll_ms=0
            )
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE, refused.remark
            assert "not a serving master" in (refused.remark or "")
            assert got == []
            served, got = await pop(
                client, master.broker_addr, "broker-a", "GroupCM", TOPIC, poll_ms=1000
            )
            assert served.code == ResponseCode.SUCCESS, served.remark
            assert [p.msg.body for p in got] == [b"popped"]
        finally:
            await client.shutdown()
