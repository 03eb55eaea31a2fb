"""The name server's request and response headers: RocketMQ's
``remoting/protocol/header/namesrv`` package (one Java class each there, one dataclass each
here). Every other header is in ``headers``."""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.remoting.protocol.custom_header import CommandCustomHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class GetRouteInfoRequestHeader(CommandCustomHeader):
    topic: str
    accept_standard_json_only: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RegisterBrokerRequestHeader(CommandCustomHeader):
    broker_name: str
    broker_addr: str
    cluster_name: str
    ha_server_addr: str
    broker_id: int
    compressed: bool = False
    body_crc32: int = 0
    #: rocketq: an incremental registration's base, the DataVersion (JSON) of the broker's
    #: previous registration; a name server holding another version records the broker's as
    #: unknown, so the next QUERY_DATA_VERSION asks for the full table (Java ignores the key)
    base_data_version: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RegisterBrokerResponseHeader(CommandCustomHeader):
    ha_server_addr: str | None = None
    master_addr: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class UnRegisterBrokerRequestHeader(CommandCustomHeader):
    broker_name: str
    broker_addr: str
    cluster_name: str
    broker_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryDataVersionRequestHeader(CommandCustomHeader):
    broker_name: str
    broker_addr: str
    cluster_name: str
    broker_id: int


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryDataVersionResponseHeader(CommandCustomHeader):
    changed: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class PutKVConfigRequestHeader(CommandCustomHeader):
    namespace: str
    key: str
    value: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GetKVConfigRequestHeader(CommandCustomHeader):
    namespace: str
    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GetKVConfigResponseHeader(CommandCustomHeader):
    value: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteKVConfigRequestHeader(CommandCustomHeader):
    namespace: str
    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GetKVListByNamespaceRequestHeader(CommandCustomHeader):
    namespace: str


@dataclass(frozen=True, kw_only=True, slots=True)
class WipeWritePermOfBrokerRequestHeader(CommandCustomHeader):
    broker_name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class WipeWritePermOfBrokerResponseHeader(CommandCustomHeader):
    wipe_topic_count: int


@dataclass(frozen=True, kw_only=True, slots=True)
class AddWritePermOfBrokerRequestHeader(CommandCustomHeader):
    broker_name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AddWritePermOfBrokerResponseHeader(CommandCustomHeader):
    add_topic_count: int
