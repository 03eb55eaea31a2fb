"""The ACL admin headers (request codes 50-54, RocketMQ 4.x's plain ACL): one Java class
each in RocketMQ's ``remoting/protocol/header`` package. Every other header is in
``headers``."""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.remoting.protocol.custom_header import CommandCustomHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class CreateAccessConfigRequestHeader(CommandCustomHeader):
    access_key: str
    secret_key: str | None = None
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: str | None = None
    default_group_perm: str | None = None
    topic_perms: str | None = None
    group_perms: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteAccessConfigRequestHeader(CommandCustomHeader):
    access_key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class UpdateGlobalWhiteAddrsConfigRequestHeader(CommandCustomHeader):
    global_white_addrs: str
    acl_file_full_path: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class GetBrokerAclConfigResponseHeader(CommandCustomHeader):
    version: str
    all_acl_file_version: str | None = None
    broker_name: str
    broker_addr: str
    cluster_name: str
