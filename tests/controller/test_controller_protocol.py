"""RocketMQ 5's controller protocol end to end: three in-process controllers driven over the
wire by brokers played with raw requests built from the protocol headers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.controller.manager import NOT_LEADER_REMARK
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.controller_bodies import (
    BrokerNameList,
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_group import WAIT_S
from rocketq.testing.controller_wire import CLUSTER, ControllerGroup, FakeBroker, metadata_of
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)
R = ResponseCode


@contextlib.asynccontextmanager
async def brokers(count: int, name: str = "broker-a") -> AsyncIterator[list[FakeBroker]]:
    started = [FakeBroker(name) for _ in range(count)]
    try:
        for broker in started:
            await broker.start()
        yield started
    finally:
        for broker in started:
            await broker.close()


async def replica_info(
    broker: FakeBroker, addr: str
) -> tuple[GetReplicaInfoResponseHeader, SyncStateSet]:
    response = await broker.call(
        addr,
        RequestCode.CONTROLLER_GET_REPLICA_INFO,
        GetReplicaInfoRequestHeader(broker_name=broker.broker_name),
    )
    assert response.code == R.SUCCESS, response.remark
    header = GetReplicaInfoResponseHeader.from_ext_fields(response.ext_fields)
    return header, SyncStateSet.decode(response.body)


def alter(
    broker: FakeBroker, master_epoch: int, ids: set[int], sss_epoch: int
) -> tuple[AlterSyncStateSetRequestHeader, bytes]:
    header = AlterSyncStateSetRequestHeader(
        broker_name=broker.broker_name, master_broker_id=broker.broker_id, master_epoch=master_epoch
    )
    return header, SyncStateSet(sync_state_set=ids, sync_state_set_epoch=sss_epoch).encode()


async def test_brokers_register_elect_and_alter_and_a_new_leader_keeps_the_state(
    tmp_path: Path,
) -> None:
    group = ControllerGroup(tmp_path)
    try:
        await group.start_all()
        leader = await group.leader()
        async with brokers(3) as (b1, b2, b3):
            # any controller tells where the leader is (CONTROLLER_GET_METADATA_INFO)
            follower = next(s for s in group.servers.values() if s is not leader)
            meta = metadata_of(
                await b1.call(follower.addr, RequestCode.CONTROLLER_GET_METADATA_INFO)
            )
            assert (meta.controller_leader_id, meta.controller_leader_address) == (
                leader.self_id,
                leader.addr,
            )
            assert meta.is_leader is False
            assert meta.group == "group1"
            assert meta.peers is not None
            assert f"{leader.self_id}:{leader.addr};" in meta.peers
            # a follower refuses with 2007, naming the leader
            refused = await b1.call(
                follower.addr,
                RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
                GetNextBrokerIdRequestHeader(cluster_name=CLUSTER, broker_name="broker-a"),
            )
            assert refused.code == R.CONTROLLER_NOT_LEADER
            assert refused.remark is not None
            assert refused.remark.startswith(NOT_LEADER_REMARK)
            assert leader.addr in refused.remark
            assert metadata_of(refused).controller_leader_address == leader.addr

            assert [await b.register(leader.addr) for b in (b1, b2, b3)] == [1, 2, 3]
            for broker in (b1, b2, b3):
                await broker.heartbeat(group.addrs, timeout_ms=60_000)
            elected = await b1.call(
                leader.addr,
                RequestCode.CONTROLLER_ELECT_MASTER,
                ElectMasterRequestHeader(
                    cluster_name=CLUSTER, broker_name="broker-a", broker_id=1, designate_elect=False
                ),
            )
            assert elected.code == R.SUCCESS, elected.remark
            header = ElectMasterResponseHeader.from_ext_fields(elected.ext_fields)
            assert (header.master_broker_id, header.master_address, header.master_epoch) == (
                1,
                b1.addr,
                1,
            )
            body = ElectMasterResponseBody.decode(elected.body)
            assert body.sync_state_set == {1}
            assert body.broker_member_group is not None
            assert body.broker_member_group.broker_addrs == {1: b1.addr, 2: b2.addr, 3: b3.addr}

            # the master expands its SyncStateSet; stale epochs are refused (CAS)
            expanded = await b1.call(
                leader.addr,
                RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET,
                *alter(b1, 1, {1, 2, 3}, 1),
            )
            assert expanded.code == R.SUCCESS, expanded.remark
            reply = AlterSyncStateSetResponseHeader.from_ext_fields(expanded.ext_fields)
            assert reply.new_sync_state_set_epoch == 2
            stale_set = await b1.call(
                leader.addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, *alter(b1, 1, {1, 2}, 1)
            )
            assert stale_set.code == R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
            stale_master = await b1.call(
                leader.addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, *alter(b1, 0, {1, 2}, 2)
            )
            assert stale_master.code == R.CONTROLLER_FENCED_MASTER_EPOCH

            # kill the leader: a new one serves the same state
            await group.stop(leader.self_id)
            new_leader = await group.leader()
            assert new_leader.self_id != leader.self_id
            async with asyncio.timeout(WAIT_S):
                master, sss = await replica_info(b2, new_leader.addr)
            assert (master.master_broker_id, master.master_address, master.master_epoch) == (
                1,
                b1.addr,
                1,
            )
            assert (sss.sync_state_set, sss.sync_state_set_epoch) == ({1, 2, 3}, 2)
            for broker in (b1, b2, b3):
                await broker.heartbeat(group.addrs, timeout_ms=60_000)
            data = await b1.call(
                new_leader.addr,
                RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
                body=BrokerNameList(["broker-a"]).encode(),
            )
            info = BrokerReplicasInfo.decode(data.body).replicas_info_table["broker-a"]
            assert [r.broker_id for r in info.in_sync_replicas] == [1, 2, 3]
            assert all(r.alive for r in info.in_sync_replicas)
    finally:
        await group.stop_all()


@pytest.mark.parametrize(
    ("not_active_ms", "inactive_master_ms"),
    [(100, 60_000), (60_000, 100)],
    ids=["scanNotActiveBroker", "scanInactiveMaster"],
)
async def test_the_liveness_scan_elects_a_new_master_when_the_master_stops_heartbeating(
    tmp_path: Path, not_active_ms: int, inactive_master_ms: int
) -> None:
    """Either scan alone finds the silent master (the other is made too slow to act)."""
    group = ControllerGroup(
        tmp_path,
        scan_not_active_broker_interval_ms=not_active_ms,
        scan_inactive_master_interval_ms=inactive_master_ms,
    )
    try:
        await group.start_all()
        leader = await group.leader()
        async with brokers(2) as (b1, b2):
            # b1's last heartbeat says 2 s: it lives through the setup, then goes silent
            for broker, timeout_ms in ((b1, 2_000), (b2, 10_000)):
                await broker.register(leader.addr)
                await broker.heartbeat(group.addrs, timeout_ms=timeout_ms)
            elect = ElectMasterRequestHeader(
                cluster_name=CLUSTER, broker_name="broker-a", broker_id=1, designate_elect=False
            )
            assert (
                await b1.call(leader.addr, RequestCode.CONTROLLER_ELECT_MASTER, elect)
            ).code == 0
            expand = alter(b1, 1, {1, 2}, 1)
            assert (
                await b1.call(leader.addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, *expand)
            ).code == 0
            async with asyncio.timeout(WAIT_S):  # the push of the first election
                first, _ = await b2.pushes.get()
            assert (first.master_broker_id, first.master_epoch) == (1, 1)
            # b1 is silent (its connection stays open); b2 keeps heartbeating
            beating = asyncio.ensure_future(b2.heartbeat_forever(group.addrs, timeout_ms=10_000))
            try:
                async with asyncio.timeout(WAIT_S):
                    push, body = await b2.pushes.get()
            finally:
                beating.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beating
            assert (push.master_broker_id, push.master_address, push.master_epoch) == (
                2,
                b2.addr,
                2,
            )
            assert SyncStateSet.decode(body).sync_state_set == {2}
            master, _ = await replica_info(b2, leader.addr)
            assert (master.master_broker_id, master.master_epoch) == (2, 2)
    finally:
        await group.stop_all()


async def test_a_closed_master_connection_elects_at_once(tmp_path: Path) -> None:
    group = ControllerGroup(tmp_path, size=1)
    try:
        await group.start_all()
        leader = await group.leader()
        manager = group.managers[leader.self_id]
        async with brokers(2) as (b1, b2):
            for broker in (b1, b2):
                await broker.register(leader.addr)
            # long heartbeat timeouts: only b1's closed connection can show it is gone
            for broker in (b1, b2):
                await broker.heartbeat(group.addrs, timeout_ms=60_000)
            elect = ElectMasterRequestHeader(
                cluster_name=CLUSTER, broker_name="broker-a", broker_id=1, designate_elect=False
            )
            assert (
                await b1.call(leader.addr, RequestCode.CONTROLLER_ELECT_MASTER, elect)
            ).code == 0
            expand = alter(b1, 1, {1, 2}, 1)
            assert (
                await b1.call(leader.addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, *expand)
            ).code == 0
            await b1.client.shutdown()  # kill -9 closes the socket

            def new_master() -> bool:
                bs = manager.state.get("broker-a")
                return bs is not None and bs.master_broker_id == 2

            assert await until(new_master, WAIT_S)
    finally:
        await group.stop_all()
