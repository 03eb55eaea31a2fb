"""Controller headers and bodies: the extFields and JSON a RocketMQ 5 peer writes (field names
from RocketMQ's ``header/controller`` classes and ``body`` beans), both ways."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.controller_bodies import (
    BrokerMemberGroup,
    BrokerNameList,
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    EpochEntry,
    EpochEntryCache,
    ReplicaIdentity,
    ReplicasInfo,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoResponseHeader,
    NotifyBrokerRoleChangedRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.response_code import ResponseCode

A = "127.0.0.1:30911"
HEADERS: list[tuple[CommandCustomHeader, dict[str, str]]] = [
    (
        BrokerHeartbeatRequestHeader(
            cluster_name="DefaultCluster",
            broker_addr=A,
            broker_name="broker-a",
            broker_id=1,
            epoch=3,
            max_offset=1 << 40,
            confirm_offset=1 << 39,
            heartbeat_timeout_mills=3000,
            election_priority=0,
        ),
        {
            "clusterName": "DefaultCluster",
            "brokerAddr": A,
            "brokerName": "broker-a",
            "brokerId": "1",
            "epoch": "3",
            "maxOffset": "1099511627776",
            "confirmOffset": "549755813888",
            "heartbeatTimeoutMills": "3000",
            "electionPriority": "0",
        },
    ),
    (
        AlterSyncStateSetRequestHeader(
            broker_name="broker-a", master_broker_id=1, master_epoch=2, invoke_time=1700000000000
        ),
        {
            "brokerName": "broker-a",
            "masterBrokerId": "1",
            "masterEpoch": "2",
            "invokeTime": "1700000000000",
        },
    ),
    (AlterSyncStateSetResponseHeader(new_sync_state_set_epoch=4), {"newSyncStateSetEpoch": "4"}),
    (
        ElectMasterRequestHeader(
            cluster_name="DefaultCluster",
            broker_name="broker-a",
            broker_id=-1,
            designate_elect=False,
        ),
        {
            "clusterName": "DefaultCluster",
            "brokerName": "broker-a",
            "brokerId": "-1",
            "designateElect": "false",
        },
    ),
    (
        ElectMasterResponseHeader(
            master_broker_id=2, master_address=A, master_epoch=5, sync_state_set_epoch=9
        ),
        {"masterBrokerId": "2", "masterAddress": A, "masterEpoch": "5", "syncStateSetEpoch": "9"},
    ),
    (
        GetReplicaInfoResponseHeader(master_broker_id=2, master_address=A, master_epoch=5),
        {"masterBrokerId": "2", "masterAddress": A, "masterEpoch": "5"},
    ),
    (
        GetMetaDataResponseHeader(
            group="group1",
            controller_leader_id="n0",
            controller_leader_address="127.0.0.1:9878",
            is_leader=True,
            peers="n0-127.0.0.1:9878;n1-127.0.0.1:9868",
        ),
        {
            "group": "group1",
            "controllerLeaderId": "n0",
            "controllerLeaderAddress": "127.0.0.1:9878",
            "isLeader": "true",
            "peers": "n0-127.0.0.1:9878;n1-127.0.0.1:9868",
        },
    ),
    (
        NotifyBrokerRoleChangedRequestHeader(
            master_address=A, master_epoch=5, sync_state_set_epoch=9, master_broker_id=2
        ),
        {"masterAddress": A, "masterEpoch": "5", "syncStateSetEpoch": "9", "masterBrokerId": "2"},
    ),
    (
        GetNextBrokerIdResponseHeader(cluster_name="c", broker_name="b", next_broker_id=1),
        {"clusterName": "c", "brokerName": "b", "nextBrokerId": "1"},
    ),
    (
        ApplyBrokerIdRequestHeader(
            cluster_name="c", broker_name="b", applied_broker_id=1, register_check_code=f"{A};17"
        ),
        {
            "clusterName": "c",
            "brokerName": "b",
            "appliedBrokerId": "1",
            "registerCheckCode": f"{A};17",
        },
    ),
    (
        RegisterBrokerToControllerRequestHeader(
            cluster_name="c", broker_name="b", broker_id=1, broker_address=A, invoke_time=17
        ),
        {
            "clusterName": "c",
            "brokerName": "b",
            "brokerId": "1",
            "brokerAddress": A,
            "invokeTime": "17",
        },
    ),
    (
        RegisterBrokerToControllerResponseHeader(
            cluster_name="c",
            broker_name="b",
            master_broker_id=1,
            master_address=A,
            master_epoch=1,
            sync_state_set_epoch=1,
        ),
        {
            "clusterName": "c",
            "brokerName": "b",
            "masterBrokerId": "1",
            "masterAddress": A,
            "masterEpoch": "1",
            "syncStateSetEpoch": "1",
        },
    ),
    (
        CleanControllerBrokerDataRequestHeader(
            cluster_name="c",
            broker_name="b",
            broker_controller_ids_to_clean="1;2",
            is_clean_living_broker=True,
        ),
        {
            "clusterName": "c",
            "brokerName": "b",
            "brokerControllerIdsToClean": "1;2",
            "isCleanLivingBroker": "true",
        },
    ),
]


@pytest.mark.parametrize(("header", "ext_fields"), HEADERS)
def test_controller_headers_use_rocketmqs_field_names(
    header: CommandCustomHeader, ext_fields: dict[str, str]
) -> None:
    assert header.to_ext_fields() == ext_fields
    assert type(header).from_ext_fields(ext_fields) == header


def test_required_fields_of_elect_master_and_heartbeat_are_required() -> None:
    with pytest.raises(RemotingCommandError, match="designateElect"):
        ElectMasterRequestHeader.from_ext_fields(
            {"clusterName": "c", "brokerName": "b", "brokerId": "1"}
        )
    with pytest.raises(RemotingCommandError, match="brokerAddr"):
        BrokerHeartbeatRequestHeader.from_ext_fields({"clusterName": "c", "brokerName": "b"})


def test_controller_codes_are_rocketmq_5s() -> None:
    assert RequestCode.BROKER_HEARTBEAT == 904
    assert [c.value for c in RequestCode if 1000 < c.value < 1014] == list(range(1001, 1014))
    assert ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH == 2000
    assert ResponseCode.CONTROLLER_NOT_LEADER == 2007
    assert ResponseCode.CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS == 2016


GROUP = BrokerMemberGroup(cluster="c", broker_name="broker-a", broker_addrs={2: "h:2", 1: "h:1"})
BODIES: list[tuple[object, bytes]] = [
    (
        SyncStateSet(sync_state_set={2, 1}, sync_state_set_epoch=3),
        b'{"syncStateSet":[1,2],"syncStateSetEpoch":3}',
    ),
    (GROUP, b'{"brokerAddrs":{1:"h:1",2:"h:2"},"brokerName":"broker-a","cluster":"c"}'),
    (
        ElectMasterResponseBody(broker_member_group=GROUP, sync_state_set={1}),
        b'{"brokerMemberGroup":{"brokerAddrs":{1:"h:1",2:"h:2"},"brokerName":"broker-a","cluster":"c"},'
        b'"syncStateSet":[1]}',
    ),
    (ElectMasterResponseBody(sync_state_set={1}), b'{"syncStateSet":[1]}'),
    (
        BrokerReplicasInfo(
            replicas_info_table={
                "broker-a": ReplicasInfo(
                    master_broker_id=1,
                    master_address="h:1",
                    master_epoch=2,
                    sync_state_set_epoch=3,
                    in_sync_replicas=[
                        ReplicaIdentity(
                            broker_name="broker-a", broker_id=1, broker_address="h:1", alive=True
                        )
                    ],
                    not_in_sync_replicas=[
                        ReplicaIdentity(
                            broker_name="broker-a", broker_id=2, broker_address="h:2", alive=False
                        )
                    ],
                )
            }
        ),
        b'{"replicasInfoTable":{"broker-a":{"inSyncReplicas":[{"alive":true,"brokerAddress":"h:1",'
        b'"brokerId":1,"brokerName":"broker-a"}],"masterAddress":"h:1","masterBrokerId":1,"masterEpoch":2,'
        b'"notInSyncReplicas":[{"alive":false,"brokerAddress":"h:2","brokerId":2,"brokerName":"broker-a"}],'
        b'"syncStateSetEpoch":3}}}',
    ),
    (
        EpochEntryCache(
            cluster_name="c",
            broker_name="b",
            broker_id=1,
            epoch_list=[
                EpochEntry(epoch=1, start_offset=0, end_offset=100),
                EpochEntry(epoch=2, start_offset=100),
            ],
            max_offset=150,
        ),
        b'{"brokerId":1,"brokerName":"b","clusterName":"c","epochList":[{"endOffset":100,"epoch":1,'
        b'"startOffset":0},{"endOffset":9223372036854775807,"epoch":2,"startOffset":100}],"maxOffset":150}',
    ),
    (BrokerNameList(["broker-a", "broker-b"]), b'["broker-a","broker-b"]'),
]


@pytest.mark.parametrize(("body", "data"), BODIES)
def test_controller_bodies_are_written_as_fastjson_writes_them(body: object, data: bytes) -> None:
    assert body.encode() == data  # type: ignore[attr-defined]
    assert type(body).decode(data) == body  # type: ignore[attr-defined]


def test_a_java_peers_quoted_or_bare_ids_both_read() -> None:
    assert BrokerMemberGroup.decode(b'{"brokerAddrs":{"1":"h:1"},"cluster":"c"}').broker_addrs == {
        1: "h:1"
    }
    with pytest.raises(RemotingCommandError):
        BrokerNameList.decode(b'{"a":1}')


@given(st.sets(st.integers(0, 2**63 - 1), max_size=5), st.integers(0, 2**31 - 1))
def test_sync_state_set_round_trips(members: set[int], epoch: int) -> None:
    body = SyncStateSet(sync_state_set=members, sync_state_set_epoch=epoch)
    assert SyncStateSet.decode(body.encode()) == body
