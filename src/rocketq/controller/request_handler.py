"""The controller's requests as pure functions: read the state, return the events to propose
and the answer (the request half of RocketMQ 5's ``ReplicasInfoManager``: ``alterSyncStateSet``,
``electMaster``, ``getNextBrokerId``, ``applyBrokerId``, ``registerBroker``, ``getReplicaInfo``,
``getSyncStateData``, ``cleanBrokerData``, ``scanNeedReelectBrokerSets``).

How the server uses a ``ControllerResult``: with no events, answer ``code``/``remark``/
``header``/``body`` at once (after a read barrier for reads). With events, propose each (in
order) through the metadata log; if every ``ApplyResult`` is ``ok``, answer as the result says;
else answer the first refusal's code and remark (the state moved between the computation and
the commit, and the event's compare-and-set refused it). Liveness comes in as callables built
from ``heartbeat.BrokerHeartbeatManager`` (``alive_predicate(now)``,
``get_broker_live_info``); nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.controller.elect_policy import LiveInfoGetter, elect
from rocketq.controller.event import (
    AlterSyncStateSetEvent,
    ElectMasterEvent,
    Event,
)
from rocketq.controller.heartbeat import AlivePredicate
from rocketq.controller.replicas_info import (
    BrokerSet,
    ReplicasInfoManager,
)
from rocketq.remoting.protocol.controller_bodies import (
    BrokerMemberGroup,
    ElectMasterResponseBody,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    NotifyBrokerRoleChangedRequestHeader,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.response_code import ResponseCode

R = ResponseCode


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerResult:
    """ControllerResult.java: events to propose, and the answer once they commit."""

    events: tuple[Event, ...] = ()
    code: ResponseCode = R.SUCCESS
    remark: str | None = None
    header: CommandCustomHeader | None = None
    body: bytes | None = None


def refuse(
    code: ResponseCode, remark: str, header: CommandCustomHeader | None = None
) -> ControllerResult:
    return ControllerResult(code=code, remark=remark, header=header)


def alter_sync_state_set(
    state: ReplicasInfoManager,
    header: AlterSyncStateSetRequestHeader,
    proposed: SyncStateSet,
    is_alive: AlivePredicate,
) -> ControllerResult:
    """CONTROLLER_ALTER_SYNC_STATE_SET (1001): the master shrinks or expands its in-sync set."""
    bs = state.get(header.broker_name or "")
    if bs is None:
        return refuse(R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "Broker metadata is not existed")
    new_set = frozenset(proposed.sync_state_set)
    if new_set == bs.sync_state_set:
        return refuse(R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "the set is unchanged")
    if bs.master_broker_id is None or bs.master_broker_id != header.master_broker_id:
        return refuse(R.CONTROLLER_INVALID_MASTER, f"the master is {bs.master_broker_id}")
    if header.master_epoch != bs.master_epoch:
        return refuse(R.CONTROLLER_FENCED_MASTER_EPOCH, f"the master epoch is {bs.master_epoch}")
    if proposed.sync_state_set_epoch != bs.sync_state_set_epoch:
        epoch = bs.sync_state_set_epoch
        return refuse(R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, f"the set's epoch is {epoch}")
    for replica in sorted(new_set):
        if replica not in bs.brokers:
            return refuse(R.CONTROLLER_INVALID_REPLICAS, f"replica {replica} does not exist")
        if not is_alive(bs.cluster_name, bs.broker_name, replica):
            return refuse(R.CONTROLLER_BROKER_NOT_ALIVE, f"replica {replica} is not alive")
    if bs.master_broker_id not in new_set:
        return refuse(R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "the set must hold the master")
    epoch = bs.sync_state_set_epoch + 1
    event = AlterSyncStateSetEvent(
        broker_name=bs.broker_name,
        new_sync_state_set=new_set,
        master_broker_id=bs.master_broker_id,
        master_epoch=bs.master_epoch,
        sync_state_set_epoch=bs.sync_state_set_epoch,
    )
    return ControllerResult(
        events=(event,),
        header=AlterSyncStateSetResponseHeader(new_sync_state_set_epoch=epoch),
        body=SyncStateSet(sync_state_set=set(new_set), sync_state_set_epoch=epoch).encode(),
    )


def elect_master(
    state: ReplicasInfoManager,
    header: ElectMasterRequestHeader,
    *,
    is_alive: AlivePredicate,
    live_info: LiveInfoGetter,
    enable_elect_unclean_master: bool = False,
) -> ControllerResult:
    """CONTROLLER_ELECT_MASTER (1002): from a broker at start (its own id), the controller's
    scan (broker id -1) or mqadmin (``designate_elect`` with the broker to elect)."""
    bs = state.get(header.broker_name)
    if bs is None:
        return refuse(R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "Broker hasn't been registered")
    old_master = bs.master_broker_id
    new_master: int | None = None
    if bs.is_first_time_for_elect() and header.broker_id in bs.brokers:
        new_master = header.broker_id
    if new_master is None:
        new_master = elect(
            bs.cluster_name,
            bs.broker_name,
            sync_state_brokers=bs.sync_state_set,
            all_replica_brokers=bs.brokers.keys() if enable_elect_unclean_master else None,
            old_master=old_master,
            prefer_broker_id=header.broker_id if header.designate_elect else None,
            is_alive=is_alive,
            live_info=live_info,
        )
    if new_master is not None and new_master == old_master:
        response = _elect_header(bs, old_master, bs.master_epoch, bs.sync_state_set_epoch)
        body = ElectMasterResponseBody(sync_state_set=set(bs.sync_state_set)).encode()
        remark = f"The old master {old_master} is still alive"
        return ControllerResult(
            code=R.CONTROLLER_MASTER_STILL_EXIST, remark=remark, header=response, body=body
        )
    if new_master is not None:
        event = ElectMasterEvent(
            broker_name=bs.broker_name,
            new_master_elected=True,
            new_master_broker_id=new_master,
            master_epoch=bs.master_epoch,
        )
        group = BrokerMemberGroup(
            cluster=bs.cluster_name, broker_name=bs.broker_name, broker_addrs=bs.broker_id_table()
        )
        return ControllerResult(
            events=(event,),
            header=_elect_header(bs, new_master, bs.master_epoch + 1, bs.sync_state_set_epoch + 1),
            body=ElectMasterResponseBody(
                broker_member_group=group, sync_state_set={new_master}
            ).encode(),
        )
    if header.broker_id != -1:
        return refuse(R.CONTROLLER_ELECT_MASTER_FAILED, "Failed to elect a new master")
    remark = "Old master has down and failed to elect a new broker master"
    if old_master is None:  # "no master" is recorded already: no second event
        return refuse(R.CONTROLLER_MASTER_NOT_AVAILABLE, remark)
    no_master = ElectMasterEvent(
        broker_name=bs.broker_name,
        new_master_elected=False,
        new_master_broker_id=None,
        master_epoch=bs.master_epoch,
    )
    return ControllerResult(
        events=(no_master,), code=R.CONTROLLER_MASTER_NOT_AVAILABLE, remark=remark
    )


def _elect_header(
    bs: BrokerSet, master: int | None, master_epoch: int, sss_epoch: int
) -> ElectMasterResponseHeader:
    return ElectMasterResponseHeader(
        master_broker_id=master,
        master_address=bs.broker_address(master),
        master_epoch=master_epoch,
        sync_state_set_epoch=sss_epoch,
    )


def scan_need_reelect_broker_sets(
    state: ReplicasInfoManager, is_alive: AlivePredicate
) -> list[str]:
    """Broker names whose master is inactive while some replica lives
    (``scanNeedReelectBrokerSets``, every ``scanInactiveMasterInterval``); the leader then
    calls ``elect_master`` with broker id -1 for each. Hold it during the heartbeat grace."""
    names = []
    for name, bs in sorted(state.broker_sets.items()):
        master = bs.master_broker_id
        if master is None or is_alive(bs.cluster_name, name, master):
            continue
        if any(is_alive(bs.cluster_name, name, b) for b in bs.brokers):
            names.append(name)
    return names


def role_change_notification(
    state: ReplicasInfoManager, broker_name: str
) -> tuple[NotifyBrokerRoleChangedRequestHeader, bytes] | None:
    """NOTIFY_BROKER_ROLE_CHANGED (1008) for a broker set after an election: the header and the
    SyncStateSet body to push (oneway) to each live member; None if there is no master."""
    bs = state.get(broker_name)
    if bs is None or bs.master_broker_id is None:
        return None
    header = NotifyBrokerRoleChangedRequestHeader(
        master_address=bs.broker_address(bs.master_broker_id),
        master_epoch=bs.master_epoch,
        sync_state_set_epoch=bs.sync_state_set_epoch,
        master_broker_id=bs.master_broker_id,
    )
    body = SyncStateSet(
        sync_state_set=set(bs.sync_state_set), sync_state_set_epoch=bs.sync_state_set_epoch
    )
    return header, body.encode()
