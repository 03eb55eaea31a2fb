"""JSON bodies of RocketMQ 5's controller requests (``remoting/protocol/body`` and
``remoting/protocol/EpochEntry.java``), written as fastjson writes them: keys sorted, a
``Set<Long>`` as an array (sorted here), and ``Map<Long, String>`` with bare integer keys
(``ObjectKeyBody``), e.g. ``{"brokerAddrs":{1:"127.0.0.1:30911"},...}``.

SyncStateSet travels both ways on 1001 (the proposal and the answer) and answers 1003/1004 and
the 1008 push; ElectMasterResponseBody answers 1002, BrokerReplicasInfo answers 1006 (whose
request body is a JSON array of broker names, ``BrokerNameList``), EpochEntryCache answers 1007.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.json_body import JsonBody, ObjectKeyBody

#: EpochEntry.endOffset before an epoch is closed (Java's Long.MAX_VALUE).
OPEN_END_OFFSET = (1 << 63) - 1


@dataclass(slots=True, kw_only=True)
class SyncStateSet(JsonBody):
    """body/SyncStateSet.java: the in-sync broker ids and the epoch of that set."""

    sync_state_set: set[int] = field(default_factory=set)
    sync_state_set_epoch: int = 0


@dataclass(slots=True, kw_only=True)
class BrokerMemberGroup(ObjectKeyBody):
    """body/BrokerMemberGroup.java: a broker set's members, broker id -> address."""

    cluster: str = ""
    broker_name: str = ""
    broker_addrs: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ElectMasterResponseBody(ObjectKeyBody):
    """body/ElectMasterResponseBody.java: the members (null when the old master stays) and the
    new SyncStateSet."""

    broker_member_group: BrokerMemberGroup | None = None
    sync_state_set: set[int] = field(default_factory=set)


@dataclass(slots=True, kw_only=True)
class ReplicaIdentity(JsonBody):
    """body/BrokerReplicasInfo.java, ``ReplicaIdentity``."""

    broker_name: str = ""
    broker_id: int = 0
    broker_address: str = ""
    alive: bool | None = None


@dataclass(slots=True, kw_only=True)
class ReplicasInfo(JsonBody):
    """body/BrokerReplicasInfo.java, ``ReplicasInfo``: one broker set for getSyncStateSet."""

    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int = 0
    sync_state_set_epoch: int = 0
    in_sync_replicas: list[ReplicaIdentity] = field(default_factory=list)
    not_in_sync_replicas: list[ReplicaIdentity] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class BrokerReplicasInfo(JsonBody):
    """body/BrokerReplicasInfo.java: CONTROLLER_GET_SYNC_STATE_DATA's answer, by broker name."""

    replicas_info_table: dict[str, ReplicasInfo] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class EpochEntry(JsonBody):
    """remoting/protocol/EpochEntry.java: an epoch and the commitlog range it wrote."""

    epoch: int = 0
    start_offset: int = 0
    end_offset: int = OPEN_END_OFFSET


@dataclass(slots=True, kw_only=True)
class EpochEntryCache(JsonBody):
    """body/EpochEntryCache.java: a broker's epoch list (GET_BROKER_EPOCH_CACHE, 1007)."""

    cluster_name: str = ""
    broker_name: str = ""
    broker_id: int = 0
    epoch_list: list[EpochEntry] = field(default_factory=list)
    max_offset: int = 0


@dataclass(slots=True)
class BrokerNameList:
    """CONTROLLER_GET_SYNC_STATE_DATA's request body: ``["broker-a","broker-b"]``
    (``RemotingSerializable.encode(List<String>)`` in ``getSyncStateData``)."""

    names: list[str]

    def encode(self) -> bytes:
        return fastjson.dumps(self.names)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        value = fastjson.loads(data, cls.__name__)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RemotingCommandError("BrokerNameList is not a JSON array of strings")
        return cls(list(value))
