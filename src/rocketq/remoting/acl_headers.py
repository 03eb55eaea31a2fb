"""Headers and bodies of the broker's ACL admin codes (4.9.x ``common/protocol/header``, ``body``).

UPDATE_AND_CREATE_ACL_CONFIG 50 ``CreateAccessConfigRequestHeader`` (permissions as one comma
separated text each); DELETE_ACL_CONFIG 51 ``DeleteAccessConfigRequestHeader``;
GET_BROKER_CLUSTER_ACL_INFO 52 answers ``GetBrokerAclConfigResponseHeader``;
UPDATE_GLOBAL_WHITE_ADDRS_CONFIG 53 ``UpdateGlobalWhiteAddrsConfigRequestHeader``;
GET_BROKER_CLUSTER_ACL_CONFIG 54 answers a ``GetBrokerClusterAclConfigResponseBody`` (JSON).
rocketq never puts a secretKey in that body (reliability.md S4): the field is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from rocketq.common.json_body import JsonBody, as_bool, as_object, as_str
from rocketq.remoting.header_base import CommandCustomHeader


def split_list(text: str | None) -> list[str] | None:
    """UtilAll.split(text, ","): None stays None, blanks are dropped."""
    if text is None:
        return None
    return [item.strip() for item in text.split(",") if item.strip()]


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


def _strings(obj: dict[str, Any], key: str) -> list[str]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [str(v) for v in value if v is not None]


@dataclass(slots=True, kw_only=True)
class PlainAccessConfig(JsonBody):
    """One account as the admin codes show it (no secret in rocketq's answers)."""

    access_key: str
    secret_key: str | None = field(default=None, repr=False)
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: str | None = None
    default_group_perm: str | None = None
    topic_perms: list[str] = field(default_factory=list)
    group_perms: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "accessKey": self.access_key,
            "admin": self.admin,
            "defaultGroupPerm": self.default_group_perm,
            "defaultTopicPerm": self.default_topic_perm,
            "groupPerms": self.group_perms,
            "secretKey": self.secret_key,
            "topicPerms": self.topic_perms,
            "whiteRemoteAddress": self.white_remote_address,
        }
        return {k: v for k, v in obj.items() if v is not None}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            access_key=as_str(obj, "accessKey"),
            secret_key=obj.get("secretKey"),
            white_remote_address=obj.get("whiteRemoteAddress"),
            admin=as_bool(obj, "admin"),
            default_topic_perm=obj.get("defaultTopicPerm"),
            default_group_perm=obj.get("defaultGroupPerm"),
            topic_perms=_strings(obj, "topicPerms"),
            group_perms=_strings(obj, "groupPerms"),
        )


@dataclass(slots=True, kw_only=True)
class GetBrokerClusterAclConfigResponseBody(JsonBody):
    global_white_addrs: list[str] = field(default_factory=list)
    plain_access_configs: list[PlainAccessConfig] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "globalWhiteAddrs": self.global_white_addrs,
            "plainAccessConfigs": [c.to_json() for c in self.plain_access_configs],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        configs = obj.get("plainAccessConfigs")
        return cls(
            global_white_addrs=_strings(obj, "globalWhiteAddrs"),
            plain_access_configs=[
                PlainAccessConfig.from_json(as_object(c, "plainAccessConfigs"))
                for c in (configs if isinstance(configs, list) else [])
            ],
        )
