"""The controller's replicated events and their codec (RocketMQ 5's ``controller/impl/event``:
``EventType``, ``EventSerializer`` and one class per event).

An event is what the leader proposes and every controller applies, in log order, to its
``ReplicasInfoManager``. The bytes are RocketMQ's ``EventSerializer`` layout::

    +----------------+-----------------------------------------------+
    | type  i16 (BE) | the event as compact JSON, keys sorted (UTF-8) |
    +----------------+-----------------------------------------------+
      2 bytes          the rest

with the Java field names as keys, sets as sorted arrays and nulls left out (fastjson also
writes the ``eventType`` getter; the type prefix says it already, so we leave it out).
Decoding checks every field's type and raises ``EventDecodeError``; nothing is evaluated or
unpickled.

rocketq adds the epochs the proposal was computed against (``masterEpoch``,
``syncStateSetEpoch``, ``masterBrokerId`` on an alter; ``masterEpoch`` on an election), so that
applying is a compare-and-set: RocketMQ computes events on the leader's single event thread
and applies them unchecked, which is safe only while one leader's proposals never interleave
with another's. With them, a proposal that lost a race is refused at apply, on every node alike.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from rocketq.errors import DecodeError

TYPE_STRUCT = struct.Struct(">h")  # EventType.id
TYPE_SIZE = TYPE_STRUCT.size
assert TYPE_SIZE == 2


class EventType(IntEnum):
    """EventType.java ids (READ_EVENT, 4, is DLedger's read barrier; we never log it)."""

    ALTER_SYNC_STATE_SET_EVENT = 1
    APPLY_BROKER_ID_EVENT = 2
    ELECT_MASTER_EVENT = 3
    READ_EVENT = 4
    CLEAN_BROKER_DATA_EVENT = 5
    UPDATE_BROKER_ADDRESS = 6


class EventDecodeError(DecodeError):
    """A log entry that is not an event this controller knows."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AlterSyncStateSetEvent:
    """AlterSyncStateSetEvent.java plus the CAS guard: the master and epochs it expects."""

    broker_name: str
    new_sync_state_set: frozenset[int]
    master_broker_id: int
    master_epoch: int
    sync_state_set_epoch: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ApplyBrokerIdEvent:
    """ApplyBrokerIdEvent.java: give ``new_broker_id`` to the broker at ``broker_address``."""

    cluster_name: str
    broker_name: str
    broker_address: str
    register_check_code: str
    new_broker_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ElectMasterEvent:
    """ElectMasterEvent.java plus the CAS guard ``master_epoch`` (the epoch before it). With
    ``new_master_elected`` False it records "no master" (the old one is gone, none electable)."""

    broker_name: str
    new_master_elected: bool
    new_master_broker_id: int | None
    master_epoch: int


@dataclass(frozen=True, kw_only=True, slots=True)
class CleanBrokerDataEvent:
    """CleanBrokerDataEvent.java: drop these ids, or the whole broker set when None/empty."""

    broker_name: str
    broker_id_set_to_clean: frozenset[int] | None


@dataclass(frozen=True, kw_only=True, slots=True)
class UpdateBrokerAddressEvent:
    """UpdateBrokerAddressEvent.java: a registered broker came back at another address."""

    cluster_name: str
    broker_name: str
    broker_address: str
    broker_id: int


Event = (
    AlterSyncStateSetEvent
    | ApplyBrokerIdEvent
    | ElectMasterEvent
    | CleanBrokerDataEvent
    | UpdateBrokerAddressEvent
)

_TYPES: dict[type[Any], EventType] = {
    AlterSyncStateSetEvent: EventType.ALTER_SYNC_STATE_SET_EVENT,
    ApplyBrokerIdEvent: EventType.APPLY_BROKER_ID_EVENT,
    ElectMasterEvent: EventType.ELECT_MASTER_EVENT,
    CleanBrokerDataEvent: EventType.CLEAN_BROKER_DATA_EVENT,
    UpdateBrokerAddressEvent: EventType.UPDATE_BROKER_ADDRESS,
}
_CLASSES = {code: cls for cls, code in _TYPES.items()}
# attribute -> (JSON key, kind): "s" str, "i" int, "b" bool, "I" set of ints, plus "?" nullable
_FIELDS: dict[type[Any], tuple[tuple[str, str, str], ...]] = {
    AlterSyncStateSetEvent: (
        ("broker_name", "brokerName", "s"),
        ("new_sync_state_set", "newSyncStateSet", "I"),
        ("master_broker_id", "masterBrokerId", "i"),
        ("master_epoch", "masterEpoch", "i"),
        ("sync_state_set_epoch", "syncStateSetEpoch", "i"),
    ),
    ApplyBrokerIdEvent: (
        ("cluster_name", "clusterName", "s"),
        ("broker_name", "brokerName", "s"),
        ("broker_address", "brokerAddress", "s"),
        ("register_check_code", "registerCheckCode", "s"),
        ("new_broker_id", "newBrokerId", "i"),
    ),
    ElectMasterEvent: (
        ("broker_name", "brokerName", "s"),
        ("new_master_elected", "newMasterElected", "b"),
        ("new_master_broker_id", "newMasterBrokerId", "i?"),
        ("master_epoch", "masterEpoch", "i"),
    ),
    CleanBrokerDataEvent: (
        ("broker_name", "brokerName", "s"),
        ("broker_id_set_to_clean", "brokerIdSetToClean", "I?"),
    ),
    UpdateBrokerAddressEvent: (
        ("cluster_name", "clusterName", "s"),
        ("broker_name", "brokerName", "s"),
        ("broker_address", "brokerAddress", "s"),
        ("broker_id", "brokerId", "i"),
    ),
}


def encode_event(event: Event) -> bytes:
    """The event as EventSerializer's bytes: type id, then compact sorted JSON."""
    body: dict[str, object] = {}
    for attr, key, _ in _FIELDS[type(event)]:
        value = getattr(event, attr)
        if isinstance(value, frozenset):
            value = sorted(value)
        if value is not None:
            body[key] = value
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return TYPE_STRUCT.pack(_TYPES[type(event)]) + text.encode()


def decode_event(data: bytes | bytearray | memoryview) -> Event:
    """Parse one log entry; anything but a well-formed known event raises EventDecodeError."""
    raw = bytes(data)
    if len(raw) < TYPE_SIZE:
        raise EventDecodeError(f"an event needs {TYPE_SIZE} bytes of type, got {len(raw)}")
    (type_id,) = TYPE_STRUCT.unpack_from(raw)
    cls = _CLASSES.get(type_id)
    if cls is None:
        raise EventDecodeError(f"unknown event type {type_id}")
    try:
        body = json.loads(raw[TYPE_SIZE:].decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise EventDecodeError(f"{cls.__name__} is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise EventDecodeError(f"{cls.__name__} is not a JSON object")
    values = {attr: _field(body, key, kind, cls.__name__) for attr, key, kind in _FIELDS[cls]}
    event: Event = cls(**values)
    return event


def _field(body: dict[str, Any], key: str, kind: str, what: str) -> object:
    value = body.get(key)
    if value is None:
        if kind.endswith("?"):
            return None
        raise EventDecodeError(f"{what}.{key} is missing")
    base = kind.rstrip("?")
    if base == "s" and isinstance(value, str):
        return value
    if base == "b" and isinstance(value, bool):
        return value
    if base == "i" and _is_int(value):
        return value
    if base == "I" and isinstance(value, list) and all(_is_int(v) for v in value):
        return frozenset(value)
    raise EventDecodeError(f"{what}.{key} has the wrong type: {value!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
