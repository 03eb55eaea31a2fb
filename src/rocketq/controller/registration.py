"""Broker registration and the read and admin requests of the controller, as pure functions
over ``ReplicasInfoManager`` (RocketMQ 5's ``ReplicasInfoManager.getNextBrokerId``,
``applyBrokerId``, ``registerBroker``, ``getReplicaInfo``, ``getSyncStateData``,
``cleanBrokerData``). They return a ``request_handler.ControllerResult``, used as described
there.

Registration (RocketMQ 5.1.1+, its design note "persistent unique broker id"): the broker asks
for the next id (1012), writes ``brokerIdentity-temp``, applies the id (1013, a compare-and-set
keyed by its register check code ``addr;millis``), renames the file to ``brokerIdentity``, then
registers (1003) and reads its replica info (1004) or asks for an election (1002). Each step may
be repeated after a crash.
"""

from __future__ import annotations

from rocketq.controller.event import (
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    UpdateBrokerAddressEvent,
)
from rocketq.controller.heartbeat import AlivePredicate
from rocketq.controller.replicas_info import FIRST_BROKER_CONTROLLER_ID, ReplicasInfoManager
from rocketq.controller.request_handler import ControllerResult, refuse
from rocketq.remoting.protocol.controller_bodies import (
    BrokerReplicasInfo,
    ReplicaIdentity,
    ReplicasInfo,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import (
    ApplyBrokerIdRequestHeader,
    ApplyBrokerIdResponseHeader,
    CleanControllerBrokerDataRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)
from rocketq.response_code import ResponseCode

R = ResponseCode


def get_next_broker_id(
    state: ReplicasInfoManager, header: GetNextBrokerIdRequestHeader
) -> ControllerResult:
    """CONTROLLER_GET_NEXT_BROKER_ID (1012): ids start at 1."""
    bs = state.get(header.broker_name or "")
    next_id = FIRST_BROKER_CONTROLLER_ID if bs is None else bs.next_assign_broker_id
    response = GetNextBrokerIdResponseHeader(
        cluster_name=header.cluster_name, broker_name=header.broker_name, next_broker_id=next_id
    )
    return ControllerResult(header=response)


def apply_broker_id(
    state: ReplicasInfoManager, header: ApplyBrokerIdRequestHeader
) -> ControllerResult:
    """CONTROLLER_APPLY_BROKER_ID (1013): a compare-and-set on the id; the same broker (same
    register check code ``addr;millis``) may apply its id again."""
    name, broker_id, code = header.broker_name, header.applied_broker_id, header.register_check_code
    if not name or broker_id is None or not code or header.cluster_name is None:
        return refuse(R.CONTROLLER_INVALID_REQUEST, "clusterName, brokerName, id and code needed")
    response = ApplyBrokerIdResponseHeader(cluster_name=header.cluster_name, broker_name=name)
    event = ApplyBrokerIdEvent(
        cluster_name=header.cluster_name,
        broker_name=name,
        broker_address=code.split(";")[0],
        register_check_code=code,
        new_broker_id=broker_id,
    )
    bs = state.get(name)
    if bs is None and broker_id != FIRST_BROKER_CONTROLLER_ID:
        remark = f"Broker-set {name} is not registered; apply {FIRST_BROKER_CONTROLLER_ID} first"
        return refuse(R.CONTROLLER_BROKER_ID_INVALID, remark, response)
    if bs is not None and broker_id in bs.brokers and bs.brokers[broker_id][1] != code:
        return refuse(R.CONTROLLER_BROKER_ID_INVALID, f"brokerId {broker_id} is taken", response)
    return ControllerResult(events=(event,), header=response)


def register_broker(
    state: ReplicasInfoManager,
    header: RegisterBrokerToControllerRequestHeader,
    is_alive: AlivePredicate,
) -> ControllerResult:
    """CONTROLLER_REGISTER_BROKER (1003): a broker with an id says where it is now; the answer
    names the live master, if any, and carries the SyncStateSet."""
    name, broker_id, address = header.broker_name or "", header.broker_id, header.broker_address
    response = RegisterBrokerToControllerResponseHeader(
        cluster_name=header.cluster_name, broker_name=header.broker_name
    )
    bs = state.get(name)
    if bs is None:
        return refuse(R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, f"Broker-set {name} is unknown")
    if broker_id is None or broker_id not in bs.brokers or not address:
        remark = f"BrokerId {broker_id} is not registered in broker-set {name}"
        return refuse(R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, remark)
    master = bs.master_broker_id
    if master is not None and is_alive(bs.cluster_name, name, master):
        response = RegisterBrokerToControllerResponseHeader(
            cluster_name=header.cluster_name,
            broker_name=name,
            master_broker_id=master,
            master_address=bs.broker_address(master),
            master_epoch=bs.master_epoch,
            sync_state_set_epoch=bs.sync_state_set_epoch,
        )
    events: tuple[UpdateBrokerAddressEvent, ...] = ()
    if address != bs.broker_address(broker_id):
        events = (
            UpdateBrokerAddressEvent(
                cluster_name=bs.cluster_name,
                broker_name=name,
                broker_address=address,
                broker_id=broker_id,
            ),
        )
    body = SyncStateSet(
        sync_state_set=set(bs.sync_state_set), sync_state_set_epoch=bs.sync_state_set_epoch
    )
    return ControllerResult(events=events, header=response, body=body.encode())


def get_replica_info(
    state: ReplicasInfoManager, header: GetReplicaInfoRequestHeader
) -> ControllerResult:
    """CONTROLLER_GET_REPLICA_INFO (1004): the master and the SyncStateSet of a broker set."""
    bs = state.get(header.broker_name or "")
    if bs is None:
        return refuse(R.CONTROLLER_BROKER_METADATA_NOT_EXIST, "Broker metadata is not existed")
    response = GetReplicaInfoResponseHeader(
        master_broker_id=bs.master_broker_id,
        master_address=bs.broker_address(bs.master_broker_id),
        master_epoch=bs.master_epoch,
    )
    body = SyncStateSet(
        sync_state_set=set(bs.sync_state_set), sync_state_set_epoch=bs.sync_state_set_epoch
    )
    return ControllerResult(header=response, body=body.encode())


def get_sync_state_data(
    state: ReplicasInfoManager, broker_names: list[str], is_alive: AlivePredicate
) -> ControllerResult:
    """CONTROLLER_GET_SYNC_STATE_DATA (1006, mqadmin getSyncStateSet): per known broker name,
    the master and its replicas split into in-sync and not, each with its liveness."""
    table: dict[str, ReplicasInfo] = {}
    for name in broker_names:
        bs = state.get(name)
        if bs is None:
            continue
        in_sync: list[ReplicaIdentity] = []
        not_in_sync: list[ReplicaIdentity] = []
        for broker_id, address in bs.broker_id_table().items():
            replica = ReplicaIdentity(
                broker_name=name,
                broker_id=broker_id,
                broker_address=address,
                alive=is_alive(bs.cluster_name, name, broker_id),
            )
            (in_sync if broker_id in bs.sync_state_set else not_in_sync).append(replica)
        table[name] = ReplicasInfo(
            master_broker_id=bs.master_broker_id,
            master_address=bs.broker_address(bs.master_broker_id),
            master_epoch=bs.master_epoch,
            sync_state_set_epoch=bs.sync_state_set_epoch,
            in_sync_replicas=in_sync,
            not_in_sync_replicas=not_in_sync,
        )
    return ControllerResult(body=BrokerReplicasInfo(replicas_info_table=table).encode())


def clean_broker_data(
    state: ReplicasInfoManager,
    header: CleanControllerBrokerDataRequestHeader,
    is_alive: AlivePredicate,
) -> ControllerResult:
    """CLEAN_BROKER_DATA (1011, mqadmin cleanBrokerMetadata): forget some ids (``1;2``) or the
    whole broker set; refused while they live unless ``isCleanLivingBroker``."""
    bs = state.get(header.broker_name)
    ids_text = (header.broker_controller_ids_to_clean or "").strip()
    ids: frozenset[int] | None = None
    if ids_text:
        try:
            ids = frozenset(int(part) for part in ids_text.split(";"))
        except ValueError:
            remark = f"brokerControllerIdsToClean is not id;id;...: {ids_text!r}"
            return refuse(R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, remark)
    if bs is None:
        remark = f"Broker {header.broker_name} is not existed, clean broker data failure."
        return refuse(R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, remark)
    if not header.is_clean_living_broker:
        if ids is None and bs.master_broker_id is not None:
            remark = f"Broker {bs.broker_name} is still alive, clean up failure"
            return refuse(R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, remark)
        for broker_id in sorted(ids or ()):
            if is_alive(bs.cluster_name, bs.broker_name, broker_id):
                remark = f"Broker [{bs.broker_name}, {broker_id}] is still alive, clean up failure"
                return refuse(R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, remark)
    event = CleanBrokerDataEvent(broker_name=bs.broker_name, broker_id_set_to_clean=ids)
    return ControllerResult(events=(event,))
