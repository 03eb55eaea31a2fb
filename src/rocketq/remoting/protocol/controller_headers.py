"""Headers of RocketMQ 5's controller requests: BROKER_HEARTBEAT (904), the controller codes
1001-1013 and the NOTIFY_BROKER_ROLE_CHANGED push (RocketMQ's ``remoting/protocol/header/
controller``, ``header/controller/register``, ``header/controller/admin``,
``header/namesrv/BrokerHeartbeatRequestHeader`` and
``header/NotifyBrokerRoleChangedRequestHeader``).

One dataclass per Java class, declared as ``headers`` declares its own (``custom_header``): the
wire names are the Java field names, ``Long``/``Integer`` fields are optional unless RocketMQ
marks them ``@CFNotNull``; a Java primitive (``long invokeTime``) is always on the wire, so our
writer gives it too when it is set. Broker ids are 64-bit, epochs 32-bit, as in Java.

=====  =================================  ====================================================
code   request header                     response header / body (``controller_bodies``)
=====  =================================  ====================================================
904    BrokerHeartbeatRequestHeader        -
1001   AlterSyncStateSetRequestHeader      AlterSyncStateSetResponseHeader; SyncStateSet both ways
1002   ElectMasterRequestHeader            ElectMasterResponseHeader; ElectMasterResponseBody
1003   RegisterBrokerToControllerRequest.  RegisterBrokerToControllerResponseHeader; SyncStateSet
1004   GetReplicaInfoRequestHeader         GetReplicaInfoResponseHeader; SyncStateSet
1005   -                                   GetMetaDataResponseHeader
1006   - (body: JSON array of names)       BrokerReplicasInfo
1007   -                                   EpochEntryCache (a broker answers it)
1008   NotifyBrokerRoleChangedRequestHea.  (oneway; body SyncStateSet)
1011   CleanControllerBrokerDataRequest.   -
1012   GetNextBrokerIdRequestHeader        GetNextBrokerIdResponseHeader
1013   ApplyBrokerIdRequestHeader          ApplyBrokerIdResponseHeader
=====  =================================  ====================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.remoting.protocol.custom_header import CommandCustomHeader

# ----------------------------------------------------------------------------- liveness (904)


@dataclass(frozen=True, kw_only=True, slots=True)
class BrokerHeartbeatRequestHeader(CommandCustomHeader):
    """header/namesrv/BrokerHeartbeatRequestHeader.java: liveness plus the election inputs."""

    cluster_name: str
    broker_addr: str
    broker_name: str
    broker_id: int | None = None
    epoch: int | None = None
    max_offset: int | None = None
    confirm_offset: int | None = None
    heartbeat_timeout_mills: int | None = None
    election_priority: int | None = None


# ----------------------------------------------------------------------------- sync state set


@dataclass(frozen=True, kw_only=True, slots=True)
class AlterSyncStateSetRequestHeader(CommandCustomHeader):
    """header/controller/AlterSyncStateSetRequestHeader.java; the body is a SyncStateSet."""

    broker_name: str | None = None
    master_broker_id: int | None = None
    master_epoch: int | None = None
    invoke_time: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AlterSyncStateSetResponseHeader(CommandCustomHeader):
    """header/controller/AlterSyncStateSetResponseHeader.java (an ``int``: always written)."""

    new_sync_state_set_epoch: int = 0


# ----------------------------------------------------------------------------- election


@dataclass(frozen=True, kw_only=True, slots=True)
class ElectMasterRequestHeader(CommandCustomHeader):
    """header/controller/ElectMasterRequestHeader.java. A broker at start sends its own id; the
    controller's own trigger sends brokerId -1 (``ofControllerTrigger``); mqadmin's electMaster
    sends ``designate_elect=True`` with the broker to elect (``ofAdminTrigger``)."""

    cluster_name: str
    broker_name: str
    broker_id: int
    designate_elect: bool
    invoke_time: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ElectMasterResponseHeader(CommandCustomHeader):
    """header/controller/ElectMasterResponseHeader.java; the body is ElectMasterResponseBody."""

    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None
    sync_state_set_epoch: int | None = None


# ----------------------------------------------------------------------------- replica info


@dataclass(frozen=True, kw_only=True, slots=True)
class GetReplicaInfoRequestHeader(CommandCustomHeader):
    """header/controller/GetReplicaInfoRequestHeader.java."""

    broker_name: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetReplicaInfoResponseHeader(CommandCustomHeader):
    """header/controller/GetReplicaInfoResponseHeader.java; the body is a SyncStateSet."""

    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetMetaDataResponseHeader(CommandCustomHeader):
    """header/controller/GetMetaDataResponseHeader.java: the Raft group, its leader (id and
    address), whether the answering controller leads, and the peers string."""

    group: str | None = None
    controller_leader_id: str | None = None
    controller_leader_address: str | None = None
    is_leader: bool = False
    peers: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class NotifyBrokerRoleChangedRequestHeader(CommandCustomHeader):
    """header/NotifyBrokerRoleChangedRequestHeader.java (controller -> broker, oneway)."""

    master_address: str | None = None
    master_epoch: int | None = None
    sync_state_set_epoch: int | None = None
    master_broker_id: int | None = None


# ----------------------------------------------------------------------------- registration


@dataclass(frozen=True, kw_only=True, slots=True)
class GetNextBrokerIdRequestHeader(CommandCustomHeader):
    """header/controller/register/GetNextBrokerIdRequestHeader.java."""

    cluster_name: str | None = None
    broker_name: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetNextBrokerIdResponseHeader(CommandCustomHeader):
    """header/controller/register/GetNextBrokerIdResponseHeader.java."""

    cluster_name: str | None = None
    broker_name: str | None = None
    next_broker_id: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ApplyBrokerIdRequestHeader(CommandCustomHeader):
    """header/controller/register/ApplyBrokerIdRequestHeader.java. ``register_check_code`` is
    ``<brokerAddress>;<millis>`` (``ReplicasManager``): the controller takes the address from
    it, and the same code applying the same id again is idempotent."""

    cluster_name: str | None = None
    broker_name: str | None = None
    applied_broker_id: int | None = None
    register_check_code: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ApplyBrokerIdResponseHeader(CommandCustomHeader):
    """header/controller/register/ApplyBrokerIdResponseHeader.java."""

    cluster_name: str | None = None
    broker_name: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RegisterBrokerToControllerRequestHeader(CommandCustomHeader):
    """header/controller/register/RegisterBrokerToControllerRequestHeader.java."""

    cluster_name: str | None = None
    broker_name: str | None = None
    broker_id: int | None = None
    broker_address: str | None = None
    invoke_time: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RegisterBrokerToControllerResponseHeader(CommandCustomHeader):
    """header/controller/register/RegisterBrokerToControllerResponseHeader.java; the master's
    fields are set only while a live master exists. The body is a SyncStateSet."""

    cluster_name: str | None = None
    broker_name: str | None = None
    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None
    sync_state_set_epoch: int | None = None


# ----------------------------------------------------------------------------- admin


@dataclass(frozen=True, kw_only=True, slots=True)
class CleanControllerBrokerDataRequestHeader(CommandCustomHeader):
    """header/controller/admin/CleanControllerBrokerDataRequestHeader.java.
    ``broker_controller_ids_to_clean`` is ``id;id;...``; none cleans the whole broker set."""

    cluster_name: str | None = None
    broker_name: str
    broker_controller_ids_to_clean: str | None = None
    is_clean_living_broker: bool = False
    invoke_time: int | None = None
