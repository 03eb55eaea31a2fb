"""Where a consumer keeps its offsets: on the broker (clustering) or in a local file (broadcasting).

``OffsetTable`` is the in-memory part both share (``update_offset`` may be increase-only).
``LocalFileOffsetStore`` writes Java's ``offsets.json`` in fastjson's form, whose map keys are
MessageQueue objects::

    {"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:12}}

under ``<dir>/<clientId>/<group>/offsets.json`` (``.bak`` holds the previous version), the layout of
LocalFileOffsetStore + MixAll.string2File. The broker side lives in ``aio.offset_store``.
"""

from __future__ import annotations

import json
import os
import re
from enum import Enum
from pathlib import Path

from rocketq.common.message import MessageQueue
from rocketq.errors import ClientError

_ENTRY = re.compile(r"(\{[^{}]*\})\s*:\s*(-?\d+)")


class ReadOffsetType(Enum):
    READ_FROM_MEMORY = "READ_FROM_MEMORY"
    READ_FROM_STORE = "READ_FROM_STORE"
    MEMORY_FIRST_THEN_STORE = "MEMORY_FIRST_THEN_STORE"


class OffsetTable:
    """Offsets in memory. ``advanced`` holds the queues whose offset this client moved itself
    (consumption, not a read from the store): only those are persisted or piggy-backed, so a
    value read just before the previous owner's last commit landed never overwrites it."""

    def __init__(self) -> None:
        self.offsets: dict[MessageQueue, int] = {}
        self.advanced: set[MessageQueue] = set()

    def update_offset(self, mq: MessageQueue, offset: int, *, increase_only: bool) -> None:
        old = self.offsets.get(mq)
        if old is None or not increase_only or offset > old:
            self.offsets[mq] = offset
            self.advanced.add(mq)

    def load_offset(self, mq: MessageQueue, offset: int) -> None:
        """Set an offset read from the store (not an advance of ours)."""
        self.offsets[mq] = offset
        self.advanced.discard(mq)

    def read(self, mq: MessageQueue) -> int:
        return self.offsets.get(mq, -1)

    def remove_offset(self, mq: MessageQueue) -> None:
        self.offsets.pop(mq, None)
        self.advanced.discard(mq)


def encode_offsets(offsets: dict[MessageQueue, int]) -> str:
    entries = ",".join(
        "{"
        + f'"brokerName":{json.dumps(mq.broker_name)},"queueId":{mq.queue_id},'
        + f'"topic":{json.dumps(mq.topic)}'
        + "}"
        + f":{offset}"
        for mq, offset in sorted(offsets.items())
    )
    return '{"offsetTable":{' + entries + "}}"


def decode_offsets(text: str) -> dict[MessageQueue, int]:
    """Read fastjson's object-keyed offsetTable (pretty-printed or not)."""
    if '"offsetTable"' not in text:
        raise ClientError("offsets file has no offsetTable")
    out: dict[MessageQueue, int] = {}
    for key, offset in _ENTRY.findall(text):
        try:
            obj = json.loads(key)
            mq = MessageQueue(str(obj["topic"]), str(obj["brokerName"]), int(obj["queueId"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ClientError(f"bad offsets entry {key!r}: {exc}") from exc
        out[mq] = int(offset)
    return out


def default_offset_store_dir() -> Path:
    """``rocketmq.client.localOffsetStoreDir``: ~/.rocketmq_offsets."""
    return Path(os.environ.get("ROCKETMQ_CLIENT_LOCAL_OFFSET_STORE_DIR", "~/.rocketmq_offsets"))


class LocalFileOffsetStore(OffsetTable):
    def __init__(self, root: str | os.PathLike[str], client_id: str, group: str) -> None:
        super().__init__()
        self.path = Path(root).expanduser() / client_id / group / "offsets.json"

    def load(self) -> None:
        for candidate in (self.path, self.path.with_name("offsets.json.bak")):
            try:
                text = candidate.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            try:
                for mq, offset in decode_offsets(text).items():
                    self.load_offset(mq, offset)
                return
            except ClientError:
                continue

    def persist_all(self, mqs: set[MessageQueue]) -> None:
        """Write the offsets of ``mqs`` (string2File: tmp, keep the old one as .bak, rename)."""
        wanted = {mq: off for mq, off in self.offsets.items() if mq in mqs and mq in self.advanced}
        if not wanted:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name("offsets.json.tmp")
        tmp.write_text(encode_offsets(wanted), encoding="utf-8")
        if self.path.exists():
            os.replace(self.path, self.path.with_name("offsets.json.bak"))
        os.replace(tmp, self.path)
