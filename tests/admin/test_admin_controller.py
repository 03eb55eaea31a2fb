"""rocketq.admin's controller calls against three in-process controllers (asked through a
follower, as mqadmin's ``-a`` may name any), their blocking twins, and the controller's
``/metrics`` scraped over HTTP."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from rocketq.admin import AdminClient, AsyncAdminClient
from rocketq.errors import BrokerResponseError, NoPermissionError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.controller_bodies import SyncStateSet
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    ElectMasterRequestHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_group import WAIT_S
from rocketq.testing.controller_wire import CLUSTER, ControllerGroup, FakeBroker

pytestmark = pytest.mark.timeout(60)


def sample(text: str, name: str, labels: dict[str, str]) -> float:
    """The value of the series ``name{labels}`` in a Prometheus text exposition."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return s.value
    raise AssertionError(f"no {name}{labels} in the scrape")


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=WAIT_S) as response:
        text: str = response.read().decode()
    return text


async def test_admin_reads_and_changes_the_controller_through_any_controller(
    tmp_path: Path,
) -> None:
    group = ControllerGroup(
        tmp_path, metrics_exporter_type="PROM", metrics_prom_exporter_host="127.0.0.1",
        metrics_prom_exporter_port=0,
    )  # fmt: skip
    brokers = [FakeBroker("broker-a") for _ in range(3)]
    try:
        await group.start_all()
        leader = await group.leader()
        follower = next(s for s in group.servers.values() if s is not leader)
        for broker in brokers:
            await broker.start()
            await broker.register(leader.addr)
        b1, b2, _ = brokers  # b3 registers, then goes away without a heartbeat
        for broker in (b1, b2):
            await broker.heartbeat(group.addrs, timeout_ms=60_000)
        elect = ElectMasterRequestHeader(
            cluster_name=CLUSTER, broker_name="broker-a", broker_id=1, designate_elect=False
        )
        assert (await b1.call(leader.addr, RequestCode.CONTROLLER_ELECT_MASTER, elect)).code == 0

        async with AsyncAdminClient(timeout_s=WAIT_S) as admin:
            meta = await admin.get_controller_meta_data(follower.addr)
            assert (meta.controller_leader_id, meta.controller_leader_address) == (
                leader.self_id,
                leader.addr,
            )
            info = await admin.get_in_sync_state_data(follower.addr, ["broker-a", "broker-x"])
            assert list(info.replicas_info_table) == ["broker-a"]
            replicas = info.replicas_info_table["broker-a"]
            assert (replicas.master_broker_id, replicas.master_epoch) == (1, 1)
            assert [r.broker_id for r in replicas.not_in_sync_replicas] == [2, 3]
            expand = AlterSyncStateSetRequestHeader(
                broker_name="broker-a", master_broker_id=1, master_epoch=1
            )
            body = SyncStateSet(sync_state_set={1, 2}, sync_state_set_epoch=1).encode()
            altered = await b1.call(
                leader.addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, expand, body
            )
            assert altered.code == ResponseCode.SUCCESS, altered.remark

            header, members = await admin.elect_master(follower.addr, CLUSTER, "broker-a", 2)
            assert (header.master_broker_id, header.master_address, header.master_epoch) == (
                2,
                b2.addr,
                2,
            )
            assert members is not None
            assert sorted(members.broker_addrs) == [1, 2, 3]
            with pytest.raises(BrokerResponseError) as still:
                await admin.elect_master(follower.addr, CLUSTER, "broker-a", 2)
            assert still.value.response_code == ResponseCode.CONTROLLER_MASTER_STILL_EXIST

            await admin.clean_controller_broker_data(follower.addr, CLUSTER, "broker-a", "3")
            with pytest.raises(BrokerResponseError) as living:
                await admin.clean_controller_broker_data(follower.addr, CLUSTER, "broker-a")
            assert (
                living.value.response_code == ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
            )
            info = await admin.get_in_sync_state_data(leader.addr, ["broker-a"])
            table = info.replicas_info_table["broker-a"]
            assert [r.broker_id for r in table.in_sync_replicas + table.not_in_sync_replicas] == [
                2,
                1,
            ]

            configs = await admin.get_controller_config(group.addrs)
            assert all(c["controllerDLegerGroup"] == "group1" for c in configs.values())
            assert configs[leader.addr]["notifyBrokerRoleChanged"] == "true"
            await admin.update_controller_config(
                {"notifyBrokerRoleChanged": "false"}, [leader.addr]
            )
            assert group.managers[leader.self_id].config.notify_broker_role_changed is False
            persisted = (tmp_path / f"{leader.self_id}.properties").read_text()
            assert "notifyBrokerRoleChanged=false\n" in persisted
            with pytest.raises(NoPermissionError):
                await admin.update_controller_config({"configStorePath": "/tmp/x"}, [leader.addr])

        blocking = AdminClient(timeout_s=WAIT_S)
        blocking.start()
        try:
            meta = await asyncio.to_thread(blocking.get_controller_meta_data, leader.addr)
            assert meta.is_leader is True
        finally:
            await asyncio.to_thread(blocking.shutdown)

        exporter = group.managers[leader.self_id].metrics_exporter
        assert exporter is not None
        text = await asyncio.to_thread(scrape, exporter.url)
        node = {"address": leader.addr, "group": "group1", "peer_id": leader.self_id}
        broker_set = {**node, "cluster": CLUSTER, "broker_set": "broker-a"}
        assert sample(text, "rocketmq_role", node) == 3
        elected = {**broker_set, "election_result": "new_master_elected"}
        assert sample(text, "rocketmq_election_total", elected) == 2
        kept = {**broker_set, "election_result": "keep_current_master"}
        assert sample(text, "rocketmq_election_total", kept) == 1
        requests = {**node, "request_type": "CONTROLLER_ELECT_MASTER"}
        answered = {**requests, "request_handle_status": "success"}
        assert sample(text, "rocketmq_request_total", answered) == 3
        assert sample(text, "rocketmq_request_latency_count", requests) == 3
        assert sample(text, "rocketmq_sync_state_set_size", broker_set) == 1
        assert sample(text, "rocketmq_active_broker_num", broker_set) == 2
        follower_exporter = group.managers[follower.self_id].metrics_exporter
        assert follower_exporter is not None
        follower_node = {"address": follower.addr, "group": "group1", "peer_id": follower.self_id}
        follower_text = await asyncio.to_thread(scrape, follower_exporter.url)
        assert sample(follower_text, "rocketmq_role", follower_node) == 2
    finally:
        for broker in brokers:
            await broker.close()
        await group.stop_all()
