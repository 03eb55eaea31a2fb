"""The controller's requests and events, through a leader that applies what it proposes."""

from __future__ import annotations

from rocketq.controller.event import AlterSyncStateSetEvent, ElectMasterEvent, encode_event
from rocketq.controller.registration import (
    apply_broker_id,
    clean_broker_data,
    get_next_broker_id,
    get_replica_info,
    get_sync_state_data,
    register_broker,
)
from rocketq.controller.replicas_info import ControllerStateMachine
from rocketq.controller.request_handler import (
    alter_sync_state_set,
    role_change_notification,
    scan_need_reelect_broker_sets,
)
from rocketq.remoting.protocol.controller_bodies import (
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)
from rocketq.response_code import ResponseCode as R
from tests.controller.leader import CLUSTER, Leader, addr


def group_of_three() -> Leader:
    leader = Leader()
    for _ in range(3):
        leader.register("broker-a")
    return leader


def alter(leader: Leader, members: set[int], *, master: int, epoch: int, sss_epoch: int) -> R:
    header = AlterSyncStateSetRequestHeader(
        broker_name="broker-a", master_broker_id=master, master_epoch=epoch
    )
    proposed = SyncStateSet(sync_state_set=members, sync_state_set_epoch=sss_epoch)
    return leader.commit(alter_sync_state_set(leader.state, header, proposed, leader.alive()))[0]


def test_registration_hands_out_ids_from_one_and_refuses_a_taken_id() -> None:
    leader = group_of_three()
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert sorted(bs.brokers) == [1, 2, 3]
    assert bs.next_assign_broker_id == 4
    nxt = get_next_broker_id(leader.state, GetNextBrokerIdRequestHeader(broker_name="broker-a"))
    assert nxt.header.next_broker_id == 4  # type: ignore[union-attr]
    stolen = ApplyBrokerIdRequestHeader(
        cluster_name=CLUSTER, broker_name="broker-a", applied_broker_id=2, register_check_code="x;1"
    )
    assert apply_broker_id(leader.state, stolen).code == R.CONTROLLER_BROKER_ID_INVALID


def test_apply_broker_id_again_with_the_same_check_code_is_idempotent() -> None:
    leader = Leader()
    header = ApplyBrokerIdRequestHeader(
        cluster_name=CLUSTER, broker_name="b", applied_broker_id=1, register_check_code="a:1;5"
    )
    assert leader.commit(apply_broker_id(leader.state, header))[0] == R.SUCCESS
    assert leader.commit(apply_broker_id(leader.state, header))[0] == R.SUCCESS
    other = ApplyBrokerIdRequestHeader(
        cluster_name=CLUSTER, broker_name="c", applied_broker_id=2, register_check_code="a:1;5"
    )
    assert apply_broker_id(leader.state, other).code == R.CONTROLLER_BROKER_ID_INVALID


def test_first_election_takes_the_asking_broker_and_sets_epochs_to_one() -> None:
    leader = group_of_three()
    code, result = leader.elect("broker-a", 2)
    assert code == R.SUCCESS
    header = result.header
    assert isinstance(header, ElectMasterResponseHeader)
    assert (header.master_broker_id, header.master_epoch, header.sync_state_set_epoch) == (2, 1, 1)
    assert header.master_address == addr(2)
    body = ElectMasterResponseBody.decode(result.body or b"")
    assert body.sync_state_set == {2}
    assert body.broker_member_group is not None
    assert body.broker_member_group.broker_addrs == {1: addr(1), 2: addr(2), 3: addr(3)}
    again = leader.elect("broker-a", 1)
    assert again[0] == R.CONTROLLER_MASTER_STILL_EXIST


def test_alter_sync_state_set_follows_the_rules_of_the_controller() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    assert alter(leader, {1, 2}, master=2, epoch=1, sss_epoch=1) == R.CONTROLLER_INVALID_MASTER
    assert alter(leader, {1, 2}, master=1, epoch=0, sss_epoch=1) == R.CONTROLLER_FENCED_MASTER_EPOCH
    assert (
        alter(leader, {1, 2}, master=1, epoch=1, sss_epoch=0)
        == R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
    )
    assert alter(leader, {1, 9}, master=1, epoch=1, sss_epoch=1) == R.CONTROLLER_INVALID_REPLICAS
    assert alter(leader, {2, 3}, master=1, epoch=1, sss_epoch=1) == (
        R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    )
    assert alter(leader, {1}, master=1, epoch=1, sss_epoch=1) == (
        R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    )
    assert alter(leader, {1, 2, 3}, master=1, epoch=1, sss_epoch=1) == R.SUCCESS
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert (bs.sync_state_set, bs.sync_state_set_epoch) == ({1, 2, 3}, 2)


def test_alter_refuses_a_member_that_is_not_alive() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    leader.now_ms += 10_000
    leader.heartbeat("broker-a", 1)
    assert alter(leader, {1, 2}, master=1, epoch=1, sss_epoch=1) == R.CONTROLLER_BROKER_NOT_ALIVE


def test_an_alter_computed_before_an_election_is_refused_when_applied() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    alter(leader, {1, 2, 3}, master=1, epoch=1, sss_epoch=1)
    header = AlterSyncStateSetRequestHeader(
        broker_name="broker-a", master_broker_id=1, master_epoch=1
    )
    stale = alter_sync_state_set(
        leader.state,
        header,
        SyncStateSet(sync_state_set={1}, sync_state_set_epoch=2),
        leader.alive(),
    )
    assert stale.code == R.SUCCESS  # computed against epoch 1 ...
    leader.elect("broker-a", 2, designate=True)  # ... but epoch 2 commits first
    code, _ = leader.commit(stale)
    assert code == R.CONTROLLER_INVALID_MASTER
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert (bs.master_broker_id, bs.sync_state_set) == (2, {2})


def test_of_two_alters_computed_on_the_same_state_only_the_first_applies() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    header = AlterSyncStateSetRequestHeader(
        broker_name="broker-a", master_broker_id=1, master_epoch=1
    )
    first, second = (
        alter_sync_state_set(
            leader.state,
            header,
            SyncStateSet(sync_state_set=members, sync_state_set_epoch=1),
            leader.alive(),
        )
        for members in ({1, 2}, {1, 3})
    )
    assert leader.commit(first)[0] == R.SUCCESS
    assert leader.commit(second)[0] == R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert (bs.sync_state_set, bs.sync_state_set_epoch) == ({1, 2}, 2)


def test_election_picks_the_in_sync_replica_with_most_data_when_the_master_dies() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    alter(leader, {1, 2, 3}, master=1, epoch=1, sss_epoch=1)
    leader.now_ms += 5_000
    leader.heartbeat("broker-a", 2, epoch=1, max_offset=100)
    leader.heartbeat("broker-a", 3, epoch=1, max_offset=200)
    assert scan_need_reelect_broker_sets(leader.state, leader.alive()) == ["broker-a"]
    code, result = leader.elect("broker-a")
    assert code == R.SUCCESS
    assert result.header.master_broker_id == 3  # type: ignore[union-attr]
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert (bs.master_broker_id, bs.master_epoch, bs.sync_state_set, bs.sync_state_set_epoch) == (
        3,
        2,
        {3},
        3,
    )
    notify = role_change_notification(leader.state, "broker-a")
    assert notify is not None
    assert notify[0].master_epoch == 2
    assert SyncStateSet.decode(notify[1]).sync_state_set == {3}


def test_no_live_in_sync_replica_records_no_master_once_unless_unclean() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    leader.now_ms += 5_000
    leader.heartbeat("broker-a", 2)
    code, _ = leader.elect("broker-a")
    assert code == R.CONTROLLER_MASTER_NOT_AVAILABLE
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert (bs.master_broker_id, bs.master_epoch, bs.sync_state_set) == (None, 2, {1})
    entries = len(leader.log)
    assert leader.elect("broker-a")[0] == R.CONTROLLER_MASTER_NOT_AVAILABLE
    assert len(leader.log) == entries  # no second "no master" entry
    assert leader.elect("broker-a", 2)[0] == R.CONTROLLER_ELECT_MASTER_FAILED
    assert leader.elect("broker-a", unclean=True)[0] == R.SUCCESS
    assert (bs.master_broker_id, bs.master_epoch) == (2, 3)


def test_admin_elect_of_a_designated_broker() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    alter(leader, {1, 2, 3}, master=1, epoch=1, sss_epoch=1)
    assert leader.elect("broker-a", 3, designate=True)[0] == R.SUCCESS
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert bs.master_broker_id == 3
    assert leader.elect("broker-a", 2, designate=True)[0] == R.CONTROLLER_ELECT_MASTER_FAILED


def test_register_updates_an_address_and_names_the_live_master() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    header = RegisterBrokerToControllerRequestHeader(
        cluster_name=CLUSTER, broker_name="broker-a", broker_id=2, broker_address="10.0.0.2:1"
    )
    code, result = leader.commit(register_broker(leader.state, header, leader.alive()))
    assert code == R.SUCCESS
    response = result.header
    assert isinstance(response, RegisterBrokerToControllerResponseHeader)
    assert (response.master_broker_id, response.master_epoch) == (1, 1)
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert bs.broker_address(2) == "10.0.0.2:1"
    unknown = RegisterBrokerToControllerRequestHeader(
        cluster_name=CLUSTER, broker_name="broker-a", broker_id=7, broker_address="x"
    )
    assert register_broker(leader.state, unknown, leader.alive()).code == (
        R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    )


def test_replica_info_and_sync_state_data() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    alter(leader, {1, 2}, master=1, epoch=1, sss_epoch=1)
    info = get_replica_info(leader.state, GetReplicaInfoRequestHeader(broker_name="broker-a"))
    assert info.header == GetReplicaInfoResponseHeader(
        master_broker_id=1, master_address=addr(1), master_epoch=1
    )
    assert SyncStateSet.decode(info.body or b"") == SyncStateSet(
        sync_state_set={1, 2}, sync_state_set_epoch=2
    )
    missing = get_replica_info(leader.state, GetReplicaInfoRequestHeader(broker_name="nope"))
    assert missing.code == R.CONTROLLER_BROKER_METADATA_NOT_EXIST
    data = get_sync_state_data(leader.state, ["broker-a", "nope"], leader.alive())
    table = BrokerReplicasInfo.decode(data.body or b"").replicas_info_table
    assert list(table) == ["broker-a"]
    assert [r.broker_id for r in table["broker-a"].in_sync_replicas] == [1, 2]
    assert [r.broker_id for r in table["broker-a"].not_in_sync_replicas] == [3]


def test_clean_broker_data_refuses_live_brokers_and_keeps_epochs_growing() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    whole = CleanControllerBrokerDataRequestHeader(broker_name="broker-a")
    assert clean_broker_data(leader.state, whole, leader.alive()).code == (
        R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    )
    some = CleanControllerBrokerDataRequestHeader(
        broker_name="broker-a", broker_controller_ids_to_clean="2;3"
    )
    assert clean_broker_data(leader.state, some, leader.alive()).code == (
        R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    )
    forced = CleanControllerBrokerDataRequestHeader(
        broker_name="broker-a", is_clean_living_broker=True
    )
    assert leader.commit(clean_broker_data(leader.state, forced, leader.alive()))[0] == R.SUCCESS
    assert leader.state.get("broker-a") is None
    broker_id = leader.register("broker-a")
    assert broker_id == 1
    assert leader.elect("broker-a", 1)[0] == R.SUCCESS
    bs = leader.state.get("broker-a")
    assert bs is not None
    assert bs.master_epoch == 3  # 1 before the clean, never reused


def test_snapshot_restores_the_same_state_and_answers() -> None:
    leader = group_of_three()
    leader.elect("broker-a", 1)
    alter(leader, {1, 3}, master=1, epoch=1, sss_epoch=1)
    copy = ControllerStateMachine()
    copy.restore(leader.machine.snapshot())
    assert copy.snapshot() == leader.machine.snapshot()
    header = GetReplicaInfoRequestHeader(broker_name="broker-a")
    assert get_replica_info(copy.replicas_info, header) == get_replica_info(leader.state, header)


def test_apply_refuses_garbage_and_ignores_a_no_op_on_every_node_alike() -> None:
    machine = ControllerStateMachine()
    assert machine.apply(1, b"").ok
    assert machine.apply(2, b"\x00\x07{}").code == R.CONTROLLER_INVALID_REQUEST
    assert machine.apply(3, b"\x00\x01[1]").code == R.CONTROLLER_INVALID_REQUEST
    stray = ElectMasterEvent(
        broker_name="x", new_master_elected=True, new_master_broker_id=1, master_epoch=0
    )
    assert machine.apply(4, encode_event(stray)).code == R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    alter_unknown = AlterSyncStateSetEvent(
        broker_name="x",
        new_sync_state_set=frozenset({1}),
        master_broker_id=1,
        master_epoch=0,
        sync_state_set_epoch=0,
    )
    assert not machine.apply(5, encode_event(alter_unknown)).ok
    assert machine.snapshot() == ControllerStateMachine().snapshot()
