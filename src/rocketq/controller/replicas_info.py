"""The controller's replicated state (RocketMQ 5's ``controller/impl/manager``:
``ReplicasInfoManager``, ``BrokerReplicaInfo``, ``SyncStateInfo``) and the
``ControllerStateMachine`` that the metadata log drives.

Theory of operation. Per broker name, one ``BrokerSet`` joins Java's two records: the replicas
(broker id -> address and register check code, the next id to hand out) and the SyncStateSet
record (master id, master epoch, in-sync ids, SyncStateSet epoch). Requests never change it:
``request_handler`` reads it and returns events; the leader proposes them; every controller
applies them in log order with ``apply_event``, which checks each against the state it meets
(compare-and-set), so a proposal computed against an older state is refused with the code
the request would have got, identically on every node. The invariants:

- the master, when there is one, is a registered replica and a member of the SyncStateSet;
- ``master_epoch`` and ``sync_state_set_epoch`` only grow, per broker name, even across a
  clean of the whole set (its last epochs are kept, ``_retired_epochs``; Java restarts at 0);
- so at most one master is ever recorded for a (broker name, master epoch).

The snapshot is JSON (sorted keys), never pickle: ``{"version":1,"brokerSets":[...],
"retiredEpochs":{...}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rocketq.controller.event import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    Event,
    EventDecodeError,
    UpdateBrokerAddressEvent,
    decode_event,
)
from rocketq.errors import DecodeError
from rocketq.response_code import ResponseCode

#: MixAll.FIRST_BROKER_CONTROLLER_ID: controller-assigned broker ids start at 1.
FIRST_BROKER_CONTROLLER_ID = 1
SNAPSHOT_VERSION = 1


@dataclass(slots=True, kw_only=True)
class BrokerSet:
    """BrokerReplicaInfo + SyncStateInfo of one broker name."""

    cluster_name: str
    broker_name: str
    next_assign_broker_id: int = FIRST_BROKER_CONTROLLER_ID
    #: broker id -> (address, registerCheckCode)
    brokers: dict[int, tuple[str, str]] = field(default_factory=dict)
    master_broker_id: int | None = None
    master_epoch: int = 0
    sync_state_set: frozenset[int] = frozenset()
    sync_state_set_epoch: int = 0

    def broker_address(self, broker_id: int | None) -> str | None:
        entry = self.brokers.get(broker_id) if broker_id is not None else None
        return entry[0] if entry else None

    def broker_id_table(self) -> dict[int, str]:
        return {broker_id: addr for broker_id, (addr, _) in sorted(self.brokers.items())}

    def is_first_time_for_elect(self) -> bool:
        """No SyncStateSet yet: never elected (Java: masterEpoch == 0; ours survives a clean)."""
        return not self.sync_state_set


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What applying one entry gave: SUCCESS, or the code and reason of a refused event."""

    code: ResponseCode = ResponseCode.SUCCESS
    remark: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == ResponseCode.SUCCESS


_OK = ApplyResult()


def _refuse(code: ResponseCode, remark: str) -> ApplyResult:
    return ApplyResult(code, remark)


class ReplicasInfoManager:
    """The broker sets by name, and how events change them (ReplicasInfoManager.applyEvent)."""

    def __init__(self) -> None:
        self.broker_sets: dict[str, BrokerSet] = {}
        self._retired_epochs: dict[str, tuple[int, int]] = {}

    def get(self, broker_name: str) -> BrokerSet | None:
        return self.broker_sets.get(broker_name)

    def apply_event(self, event: Event) -> ApplyResult:
        if isinstance(event, AlterSyncStateSetEvent):
            return self._alter_sync_state_set(event)
        if isinstance(event, ApplyBrokerIdEvent):
            return self._apply_broker_id(event)
        if isinstance(event, ElectMasterEvent):
            return self._elect_master(event)
        if isinstance(event, CleanBrokerDataEvent):
            return self._clean_broker_data(event)
        return self._update_broker_address(event)

    def _alter_sync_state_set(self, event: AlterSyncStateSetEvent) -> ApplyResult:
        bs = self.broker_sets.get(event.broker_name)
        if bs is None:
            return _refuse(
                ResponseCode.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "no such broker set"
            )
        if bs.master_broker_id is None or bs.master_broker_id != event.master_broker_id:
            return _refuse(
                ResponseCode.CONTROLLER_INVALID_MASTER, f"master is {bs.master_broker_id}"
            )
        if bs.master_epoch != event.master_epoch:
            return _refuse(
                ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH, f"master epoch is {bs.master_epoch}"
            )
        if bs.sync_state_set_epoch != event.sync_state_set_epoch:
            return _refuse(
                ResponseCode.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH,
                f"syncStateSet epoch is {bs.sync_state_set_epoch}",
            )
        unknown = sorted(event.new_sync_state_set - bs.brokers.keys())
        if unknown:
            return _refuse(ResponseCode.CONTROLLER_INVALID_REPLICAS, f"no replicas {unknown}")
        if bs.master_broker_id not in event.new_sync_state_set:
            return _refuse(
                ResponseCode.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "the set must hold the master"
            )
        bs.sync_state_set = event.new_sync_state_set
        bs.sync_state_set_epoch += 1
        return _OK

    def _apply_broker_id(self, event: ApplyBrokerIdEvent) -> ApplyResult:
        bs = self.broker_sets.get(event.broker_name)
        if bs is None:
            master_epoch, sss_epoch = self._retired_epochs.pop(event.broker_name, (0, 0))
            bs = BrokerSet(
                cluster_name=event.cluster_name,
                broker_name=event.broker_name,
                master_epoch=master_epoch,
                sync_state_set_epoch=sss_epoch,
            )
            self.broker_sets[event.broker_name] = bs
        held = bs.brokers.get(event.new_broker_id)
        if held is not None:
            if held[1] == event.register_check_code:
                return _OK  # the same broker applying again after a crash
            return _refuse(
                ResponseCode.CONTROLLER_BROKER_ID_INVALID, f"id {event.new_broker_id} is taken"
            )
        bs.brokers[event.new_broker_id] = (event.broker_address, event.register_check_code)
        bs.next_assign_broker_id = max(bs.next_assign_broker_id, event.new_broker_id + 1)
        return _OK

    def _elect_master(self, event: ElectMasterEvent) -> ApplyResult:
        bs = self.broker_sets.get(event.broker_name)
        if bs is None:
            return _refuse(ResponseCode.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "not registered")
        if bs.master_epoch != event.master_epoch:
            return _refuse(
                ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH, f"master epoch is {bs.master_epoch}"
            )
        new_master = event.new_master_broker_id if event.new_master_elected else None
        if event.new_master_elected and new_master not in bs.brokers:
            return _refuse(ResponseCode.CONTROLLER_INVALID_REPLICAS, f"no replica {new_master}")
        bs.master_broker_id = new_master
        bs.master_epoch += 1
        if new_master is not None:
            bs.sync_state_set = frozenset({new_master})
            bs.sync_state_set_epoch += 1
        return _OK

    def _clean_broker_data(self, event: CleanBrokerDataEvent) -> ApplyResult:
        bs = self.broker_sets.get(event.broker_name)
        if bs is None:
            return _refuse(ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "no such set")
        ids = event.broker_id_set_to_clean
        for broker_id in ids or ():
            bs.brokers.pop(broker_id, None)
        if ids and bs.brokers:
            bs.sync_state_set = bs.sync_state_set - ids
            if bs.master_broker_id in ids:  # record "no master", as a failed election would
                bs.master_broker_id = None
                bs.master_epoch += 1
            return _OK
        del self.broker_sets[event.broker_name]
        self._retired_epochs[event.broker_name] = (bs.master_epoch + 1, bs.sync_state_set_epoch)
        return _OK

    def _update_broker_address(self, event: UpdateBrokerAddressEvent) -> ApplyResult:
        bs = self.broker_sets.get(event.broker_name)
        held = bs.brokers.get(event.broker_id) if bs is not None else None
        if bs is None or held is None:
            return _refuse(ResponseCode.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "not registered")
        bs.brokers[event.broker_id] = (event.broker_address, held[1])
        return _OK

    # ------------------------------------------------------------------------- snapshot

    def to_json(self) -> dict[str, Any]:
        sets = [_broker_set_json(bs) for _, bs in sorted(self.broker_sets.items())]
        retired = {k: list(v) for k, v in sorted(self._retired_epochs.items())}
        return {"version": SNAPSHOT_VERSION, "brokerSets": sets, "retiredEpochs": retired}

    @classmethod
    def from_json(cls, obj: Any) -> ReplicasInfoManager:
        try:
            if obj["version"] != SNAPSHOT_VERSION:
                raise DecodeError(f"snapshot version {obj['version']!r} is not {SNAPSHOT_VERSION}")
            manager = cls()
            for item in obj["brokerSets"]:
                bs = _broker_set_from_json(item)
                manager.broker_sets[bs.broker_name] = bs
            for name, (master_epoch, sss_epoch) in obj["retiredEpochs"].items():
                manager._retired_epochs[str(name)] = (int(master_epoch), int(sss_epoch))
        except (KeyError, TypeError, ValueError) as e:
            raise DecodeError(f"controller snapshot does not parse: {e!r}") from None
        return manager


def _broker_set_json(bs: BrokerSet) -> dict[str, Any]:
    return {
        "clusterName": bs.cluster_name,
        "brokerName": bs.broker_name,
        "nextAssignBrokerId": bs.next_assign_broker_id,
        "brokers": [
            {"brokerId": i, "brokerAddress": a, "registerCheckCode": c}
            for i, (a, c) in sorted(bs.brokers.items())
        ],
        "masterBrokerId": bs.master_broker_id,
        "masterEpoch": bs.master_epoch,
        "syncStateSet": sorted(bs.sync_state_set),
        "syncStateSetEpoch": bs.sync_state_set_epoch,
    }


def _broker_set_from_json(item: dict[str, Any]) -> BrokerSet:
    master = item["masterBrokerId"]
    return BrokerSet(
        cluster_name=str(item["clusterName"]),
        broker_name=str(item["brokerName"]),
        next_assign_broker_id=int(item["nextAssignBrokerId"]),
        brokers={
            int(b["brokerId"]): (str(b["brokerAddress"]), str(b["registerCheckCode"]))
            for b in item["brokers"]
        },
        master_broker_id=None if master is None else int(master),
        master_epoch=int(item["masterEpoch"]),
        sync_state_set=frozenset(int(i) for i in item["syncStateSet"]),
        sync_state_set_epoch=int(item["syncStateSetEpoch"]),
    )


class ControllerStateMachine:
    """``ReplicatedStateMachine`` over a ``ReplicasInfoManager``: what the Raft driver applies.

    ``apply`` returns an ``ApplyResult``; an empty entry (a leader's no-op) or one that does not
    decode changes nothing (the latter answers CONTROLLER_INVALID_REQUEST), the same on every
    node."""

    def __init__(self) -> None:
        self.replicas_info = ReplicasInfoManager()

    def apply(self, index: int, data: bytes) -> ApplyResult:
        if not data:
            return _OK
        try:
            event = decode_event(data)
        except EventDecodeError as e:
            return _refuse(ResponseCode.CONTROLLER_INVALID_REQUEST, e.reason)
        return self.replicas_info.apply_event(event)

    def snapshot(self) -> bytes:
        return json.dumps(
            self.replicas_info.to_json(), sort_keys=True, separators=(",", ":")
        ).encode()

    def restore(self, data: bytes) -> None:
        try:
            obj = json.loads(data.decode())
        except (UnicodeDecodeError, ValueError) as e:
            raise DecodeError(f"controller snapshot is not JSON: {e}") from None
        self.replicas_info = ReplicasInfoManager.from_json(obj)
