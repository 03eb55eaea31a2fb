"""TopicConfig and the permission bits (RocketMQ's TopicConfig and PermName).

One class serves the broker's topic table (``topics.json``), the registration body it sends to
the name servers (JSON, or the space-separated text of a compressed registration) and the name
server's route table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from rocketq.common.json_body import JsonBody, as_bool, as_int, as_str
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
class TopicConfig(JsonBody):
    topic_name: str
    read_queue_nums: int = DEFAULT_READ_QUEUE_NUMS
    write_queue_nums: int = DEFAULT_WRITE_QUEUE_NUMS
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = SINGLE_TAG
    topic_sys_flag: int = 0
    order: bool = False

    @property
    def readable(self) -> bool:
        return is_readable(self.perm)

    @property
    def writeable(self) -> bool:
        return is_writeable(self.perm)

    def to_json(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": self.topic_filter_type,
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            topic_name=as_str(obj, "topicName"),
            read_queue_nums=as_int(obj, "readQueueNums", DEFAULT_READ_QUEUE_NUMS),
            write_queue_nums=as_int(obj, "writeQueueNums", DEFAULT_WRITE_QUEUE_NUMS),
            perm=as_int(obj, "perm", PERM_READ | PERM_WRITE),
            topic_filter_type=as_str(obj, "topicFilterType", SINGLE_TAG),
            topic_sys_flag=as_int(obj, "topicSysFlag"),
            order=as_bool(obj, "order"),
        )

    def encode_text(self) -> str:
        """``TopicConfig.encode()``: the space-separated form of the compressed registration."""
        return (
            f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} "
            f"{self.perm} {self.topic_filter_type}"
        )

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
            )
        except ValueError:
            raise RemotingCommandError(f"topic config text is malformed: {text!r}") from None
