"""Topic and subscription-group attributes (RocketMQ 5's ``common.attribute`` package,
``TopicAttributes``, ``SubscriptionGroupAttributes``, ``AttributeParser``, ``AttributeUtil``).

An attribute change travels as text, ``+key=value`` to add or update and ``-key`` to delete,
comma-separated (``+message.type=FIFO,-reserve.time``): updateTopic's ``-a`` puts it in
CreateTopicRequestHeader's ``attributes`` field, updateSubGroup's ``--attributes`` in the
group's ``attributes`` map (keys with their sign). The broker applies it to the stored
attributes with ``alter_current_attributes``: on creation only ``+`` is allowed; an unknown key,
a change of an unchangeable key (``queue.type``, ``cleanup.policy``) after creation, a delete of
a missing key, or a value outside the attribute's range is refused with RocketMQ's message.
``queue.type`` and ``cleanup.policy`` take only the values rocketq implements (``SimpleCQ``,
``DELETE``); the others RocketMQ knows are refused with a remark saying so. ``reserve.time``
(hours) is stored and changeable; RocketMQ 5 reads it only with a tiered store.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketq.common import message_const as mc
from rocketq.common.hashing import java_string_hash
from rocketq.errors import ConfigError

ADD_SIGN = "+"
DELETE_SIGN = "-"
SEPARATOR = ","
EQUAL_SIGN = "="


class AttributeRefusedError(ConfigError):
    """An attribute change the broker refuses; the message is RocketMQ's remark."""


class TopicMessageType(enum.Enum):
    """TopicMessageType: the ``message.type`` attribute's values, each its own name."""

    @staticmethod
    def _generate_next_value_(name: str, start: int, count: int, last_values: list[Any]) -> str:
        return name

    UNSPECIFIED = enum.auto()
    NORMAL = enum.auto()
    FIFO = enum.auto()
    DELAY = enum.auto()
    TRANSACTION = enum.auto()
    MIXED = enum.auto()

    @classmethod
    def parse_from_message_property(cls, properties: Mapping[str, str]) -> TopicMessageType:
        """``parseFromMessageProperty``: the type a message's properties give it."""
        if properties.get(mc.PROPERTY_TRANSACTION_PREPARED) == "true":
            return cls.TRANSACTION
        delay_keys = (
            mc.PROPERTY_DELAY_TIME_LEVEL,
            mc.PROPERTY_TIMER_DELIVER_MS,
            mc.PROPERTY_TIMER_DELAY_SEC,
            mc.PROPERTY_TIMER_DELAY_MS,
        )
        if any(properties.get(k) is not None for k in delay_keys):
            return cls.DELAY
        if properties.get(mc.PROPERTY_SHARDING_KEY) is not None:
            return cls.FIFO
        return cls.NORMAL


@dataclass(frozen=True, slots=True)
class Attribute:
    name: str
    changeable: bool

    def verify(self, value: str) -> None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class EnumAttribute(Attribute):
    """EnumAttribute; ``unsupported`` are values RocketMQ accepts and rocketq refuses."""

    universe: tuple[str, ...]
    default_value: str
    unsupported: tuple[str, ...] = ()

    def verify(self, value: str) -> None:
        if value in self.unsupported:
            raise AttributeRefusedError(
                f"{self.name}={value} is not supported by rocketq, only {self.default_value}"
            )
        if value not in self.universe:
            raise AttributeRefusedError(f"value is not in set: [{', '.join(self.universe)}]")


@dataclass(frozen=True, slots=True)
class LongRangeAttribute(Attribute):
    min_value: int
    max_value: int
    default_value: int

    def verify(self, value: str) -> None:
        try:
            number = int(value.strip())
        except ValueError:
            raise AttributeRefusedError(f'For input string: "{value}"') from None
        if not self.min_value <= number <= self.max_value:
            raise AttributeRefusedError(
                f"value is not in range({self.min_value}, {self.max_value})"
            )


LONG_MAX = (1 << 63) - 1
QUEUE_TYPE_ATTRIBUTE = EnumAttribute(
    "queue.type", False, ("BatchCQ", "SimpleCQ"), "SimpleCQ", unsupported=("BatchCQ",)
)
CLEANUP_POLICY_ATTRIBUTE = EnumAttribute(
    "cleanup.policy", False, ("DELETE", "COMPACTION"), "DELETE", unsupported=("COMPACTION",)
)
TOPIC_MESSAGE_TYPE_ATTRIBUTE = EnumAttribute(
    "message.type", True, tuple(t.value for t in TopicMessageType), TopicMessageType.NORMAL.value
)
TOPIC_RESERVE_TIME_ATTRIBUTE = LongRangeAttribute("reserve.time", True, -1, LONG_MAX, -1)

TOPIC_ATTRIBUTES: Mapping[str, Attribute] = {
    a.name: a
    for a in (
        QUEUE_TYPE_ATTRIBUTE,
        CLEANUP_POLICY_ATTRIBUTE,
        TOPIC_MESSAGE_TYPE_ATTRIBUTE,
        TOPIC_RESERVE_TIME_ATTRIBUTE,
    )
}
# SubscriptionGroupAttributes.ALL is empty in RocketMQ 5: every group attribute key is refused
SUBSCRIPTION_GROUP_ATTRIBUTES: Mapping[str, Attribute] = {}


def parse_to_map(modification: str | None) -> dict[str, str]:
    """AttributeParser.parseToMap: ``"+a=1,-b"`` -> ``{"+a": "1", "-b": ""}``."""
    if not modification:
        return {}
    attributes: dict[str, str] = {}
    for kv in modification.split(SEPARATOR):
        if EQUAL_SIGN in kv:
            key, value = kv.split(EQUAL_SIGN)[:2]
            if ADD_SIGN not in key:
                raise AttributeRefusedError(f"add/alter attribute format is wrong: {key}")
        else:
            key, value = kv, ""
            if DELETE_SIGN not in key:
                raise AttributeRefusedError(f"delete attribute format is wrong: {key}")
        if key in attributes:
            raise AttributeRefusedError(f"key duplication: {key}")
        attributes[key] = value
    return attributes


def parse_to_string(attributes: Mapping[str, str] | None) -> str:
    """AttributeParser.parseToString: the inverse of ``parse_to_map``."""
    if not attributes:
        return ""
    return SEPARATOR.join(f"{k}{EQUAL_SIGN}{v}" if v else k for k, v in attributes.items())


def alter_current_attributes(
    create: bool,
    universe: Mapping[str, Attribute],
    current: Mapping[str, str],
    modification: Mapping[str, str],
) -> dict[str, str]:
    """AttributeUtil.alterCurrentAttributes: the stored attributes after ``modification``
    (signed keys); AttributeRefusedError with RocketMQ's message when it is refused."""
    upserts: dict[str, str] = {}
    deletes: list[str] = []
    for key, value in modification.items():
        real = key[1:]
        if not real or ADD_SIGN in real or DELETE_SIGN in real:
            raise AttributeRefusedError("kv string format wrong.")
        if real in upserts or real in deletes:
            raise AttributeRefusedError(f"alter duplication key. key: {real}")
        if key.startswith(ADD_SIGN):
            upserts[real] = value
        elif create:
            raise AttributeRefusedError(
                f"only add attribute is supported while creating topic. key: {real}"
            )
        elif key.startswith(DELETE_SIGN):
            if real not in current:
                raise AttributeRefusedError(f"attempt to delete a nonexistent key: {real}")
            deletes.append(real)
        else:
            raise AttributeRefusedError(f"wrong format key: {real}")
    for real, value in upserts.items():
        _validate_alter(universe, real, value, init=create)
    for real in deletes:
        _validate_alter(universe, real, None, init=False)
    final = dict(current)
    final.update(upserts)
    for real in deletes:
        final.pop(real, None)
    return java_hash_map_order(final)


def java_hash_map_order(attributes: Mapping[str, str]) -> dict[str, str]:
    """The map in a ``java.util.HashMap``'s iteration order (16 buckets, what fastjson builds
    when it reads topics.json), so the attributes are written in the order RocketMQ writes
    them: by bucket (``(h ^ h >>> 16) & 15`` of ``String.hashCode``), then insertion."""

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 15

    return dict(sorted(attributes.items(), key=lambda kv: bucket(kv[0])))


def _validate_alter(
    universe: Mapping[str, Attribute], key: str, value: str | None, *, init: bool
) -> None:
    attribute = universe.get(key)
    if attribute is None:
        raise AttributeRefusedError(f"unsupported key: {key}")
    if not init and not attribute.changeable:
        raise AttributeRefusedError(f"attempt to update an unchangeable attribute. key: {key}")
    if value is not None:
        attribute.verify(value)
