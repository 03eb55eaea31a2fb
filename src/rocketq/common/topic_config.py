"""TopicConfig and the permission bits (RocketMQ's TopicConfig and PermName).

One class serves the broker's topic table (``topics.json``), the registration body it sends to
the name servers (JSON, or the space-separated text of a compressed registration) and the name
server's route table. Its JSON form derives from the fields (``remoting.protocol.json_body``),
as fastjson derives it from the Java fields. ``attributes`` (RocketMQ 5: ``message.type``,
``reserve.time``, ``queue.type``, ``cleanup.policy``) is left out while a topic has none, so an
untyped topic keeps RocketMQ 4's bytes; RocketMQ 5 also writes an empty ``"attributes":{}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Self

from rocketq.common.attribute import TOPIC_MESSAGE_TYPE_ATTRIBUTE, TopicMessageType
from rocketq.errors import RemotingCommandError

PERM_PRIORITY = 0x8
PERM_READ = 0x4
PERM_WRITE = 0x2
PERM_INHERIT = 0x1

DEFAULT_READ_QUEUE_NUMS = 16
DEFAULT_WRITE_QUEUE_NUMS = 16
SINGLE_TAG = "SINGLE_TAG"


def is_readable(perm: int) -> bool:
    return bool(perm & PERM_READ)


def is_writeable(perm: int) -> bool:
    return bool(perm & PERM_WRITE)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicConfig:
    topic_name: str
    read_queue_nums: int = DEFAULT_READ_QUEUE_NUMS
    write_queue_nums: int = DEFAULT_WRITE_QUEUE_NUMS
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = SINGLE_TAG
    topic_sys_flag: int = 0
    order: bool = False
    attributes: dict[str, str] | None = None

    @property
    def topic_message_type(self) -> TopicMessageType:
        """``getTopicMessageType``: the ``message.type`` attribute, NORMAL when absent."""
        value = (self.attributes or {}).get(TOPIC_MESSAGE_TYPE_ATTRIBUTE.name)
        return TopicMessageType.NORMAL if value is None else TopicMessageType(value)

    @property
    def readable(self) -> bool:
        return is_readable(self.perm)

    @property
    def writeable(self) -> bool:
        return is_writeable(self.perm)

    def encode_text(self) -> str:
        """``TopicConfig.encode()``: the space-separated form of the compressed registration
        (RocketMQ 5 appends the attributes as compact JSON; here only when there are some)."""
        text = (
            f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} "
            f"{self.perm} {self.topic_filter_type}"
        )
        if self.attributes:
            text += " " + json.dumps(self.attributes, separators=(",", ":"), ensure_ascii=False)
        return text

    @classmethod
    def decode_text(cls, text: str) -> Self:
        parts = text.split(" ")
        if len(parts) < 5:
            raise RemotingCommandError(f"topic config text has {len(parts)} fields: {text!r}")
        try:
            return cls(
                topic_name=parts[0],
                read_queue_nums=int(parts[1]),
                write_queue_nums=int(parts[2]),
                perm=int(parts[3]),
                topic_filter_type=parts[4],
                attributes=_attributes_text(parts[5]) if len(parts) >= 6 else None,
            )
        except ValueError:
            raise RemotingCommandError(f"topic config text is malformed: {text!r}") from None


def _attributes_text(text: str) -> dict[str, str] | None:
    """The sixth field of ``TopicConfig.decode``; unparseable text is ignored, as in Java."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    return {str(k): str(v) for k, v in obj.items()} or None
