"""Permission bits, their text form and the check rule of RocketMQ 4.x plain ACL.

``Permission`` (acl/common/Permission.java): DENY=1, ANY=2, PUB=4, SUB=8. A group's resource is
its retry topic (``%RETRY%<group>``), so one map holds topics and groups and a name with the
retry prefix is a group. ``check_permission(needed, owned)``: an owned DENY refuses; a needed
ANY is met by PUB or SUB; otherwise the bits must overlap.

Which request codes need an admin account: RocketMQ's five (topic and group create/delete,
UPDATE_BROKER_CONFIG) plus, stricter and harmless for real clients (RELIABILITY.md, ACL), every
other code that changes topics, groups, offsets, broker config or the ACL itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX, is_retry_topic, retry_topic
from rocketq.errors import ConfigError
from rocketq.remoting.protocol.codes import RequestCode

DENY = 1
ANY = 1 << 1
PUB = 1 << 2
SUB = 1 << 3

_TEXT_TO_PERM: dict[str, int] = {
    "DENY": DENY,
    "PUB": PUB,
    "SUB": SUB,
    "PUB|SUB": PUB | SUB,
    "SUB|PUB": PUB | SUB,
}

# RocketMQ's Permission.ADMIN_CODE
ROCKETMQ_ADMIN_CODES: frozenset[int] = frozenset(
    {
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        RequestCode.UPDATE_BROKER_CONFIG,
        RequestCode.DELETE_TOPIC_IN_BROKER,
        RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
        RequestCode.DELETE_SUBSCRIPTIONGROUP,
    }
)

# changes of ACL, offsets, broker state and name-server config: admin too (stricter)
ADMIN_CODES: frozenset[int] = ROCKETMQ_ADMIN_CODES | frozenset(
    {
        RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
        RequestCode.DELETE_ACL_CONFIG,
        RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
        RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG,
        RequestCode.TRIGGER_DELETE_FILES,
        RequestCode.WIPE_WRITE_PERM_OF_BROKER,
        RequestCode.ADD_WRITE_PERM_OF_BROKER,
        RequestCode.RESET_CONSUMER_OFFSET_IN_BROKER,
        RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
        RequestCode.CLONE_GROUP_OFFSET,
        RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE,
        RequestCode.CLEAN_UNUSED_TOPIC,
        RequestCode.DELETE_EXPIRED_COMMITLOG,
        RequestCode.RESUME_CHECK_HALF_MESSAGE,
        RequestCode.PUT_KV_CONFIG,
        RequestCode.DELETE_KV_CONFIG,
        RequestCode.UPDATE_NAMESRV_CONFIG,
    }
)


def need_admin_perm(code: int) -> bool:
    return code in ADMIN_CODES


def check_permission(needed: int, owned: int) -> bool:
    """Permission.checkPermission."""
    if owned & DENY:
        return False
    if needed & ANY:
        return bool(owned & (PUB | SUB))
    return bool(needed & owned)


def parse_perm_from_string(text: str | None) -> int:
    """``PUB``, ``SUB``, ``PUB|SUB``/``SUB|PUB``, ``DENY``; anything else (or None) is DENY."""
    if text is None:
        return DENY
    return _TEXT_TO_PERM.get(text.strip(), DENY)


def perm_to_string(perm: int) -> str:
    if perm & DENY:
        return "DENY"
    names = [name for name, bit in (("PUB", PUB), ("SUB", SUB)) if perm & bit]
    return "|".join(names) or "DENY"


def describe_resource(resource: str) -> str:
    """``topic:T`` or ``group:G`` (PlainAccessResource.printStr)."""
    if is_retry_topic(resource):
        return f"group:{resource[len(RETRY_GROUP_TOPIC_PREFIX) :]}"
    return f"topic:{resource}"


def parse_resource_perms(items: Iterable[object] | None, *, is_topic: bool) -> dict[str, int]:
    """``["topicA=PUB", "topicB=PUB|SUB"]`` as a map; groups are keyed by their retry topic.

    A malformed item raises ConfigError, as ``Permission.checkResourcePerms`` refuses it: no
    ``name=perm`` shape, an empty name, or a permission other than the four spellings.
    """
    perms: dict[str, int] = {}
    kind = "topic" if is_topic else "group"
    for item in items or ():
        if not isinstance(item, str):
            raise ConfigError(f"{kind} permission {item!r} is not text like {kind}A=SUB")
        parts = [p.strip() for p in item.split("=")]
        if len(parts) != 2 or not parts[0]:
            raise ConfigError(f"{kind} permission {item!r}: the expected format is 'Res=Perm'")
        if parts[1] not in _TEXT_TO_PERM:
            raise ConfigError(
                f"{kind} permission {item!r}: the expected permissions are "
                "'SUB', 'PUB', 'SUB|PUB', 'PUB|SUB' or 'DENY'"
            )
        name = parts[0] if is_topic else retry_topic(parts[0])
        perms[name] = _TEXT_TO_PERM[parts[1]]
    return perms
