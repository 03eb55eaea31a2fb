"""JSON bodies of the broker's ACL admin codes: GET_BROKER_CLUSTER_ACL_CONFIG (54) answers a
``GetBrokerClusterAclConfigResponseBody`` of ``PlainAccessConfig`` accounts (RocketMQ's
``remoting/protocol/body`` and ``common/PlainAccessConfig``). rocketq never puts a secretKey
in that body: the field is left out. The ACL headers (50-53) are in ``headers``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.remoting.protocol.json_body import JsonBody


def split_list(text: str | None) -> list[str] | None:
    """UtilAll.split(text, ","): None stays None, blanks are dropped."""
    if text is None:
        return None
    return [item.strip() for item in text.split(",") if item.strip()]


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


@dataclass(slots=True, kw_only=True)
class GetBrokerClusterAclConfigResponseBody(JsonBody):
    global_white_addrs: list[str] = field(default_factory=list)
    plain_access_configs: list[PlainAccessConfig] = field(default_factory=list)
