"""TopicConfig and the permission bits (RocketMQ's TopicConfig and PermName).

One class serves the broker's topic table (``topics.json``), the registration body it sends to
the name servers (JSON, or the space-separated text of a compressed registration) and the name
server's route table. Its JSON form derives from the fields (``remoting.protocol.json_body``),
as fastjson derives it from the Java fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

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

    @property
    def readable(self) -> bool:
        return is_readable(self.perm)

    @property
    def writeable(self) -> bool:
        return is_writeable(self.perm)

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
