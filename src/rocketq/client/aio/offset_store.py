"""Where a consumer keeps its offsets (RocketMQ's OffsetStore): on the broker (clustering) or
in a local file (broadcasting).

``OffsetTable`` is the in-memory part both share (``update_offset`` may be increase-only).
``RemoteBrokerOffsetStore`` reads with QUERY_CONSUMER_OFFSET (``-1`` when the broker has none,
``-2`` when it could not be asked) and persists with UPDATE_CONSUMER_OFFSET to the queue's
master. ``LocalFileOffsetStore`` writes Java's ``offsets.json`` in fastjson's form, whose map
keys are MessageQueue objects::

    {"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:12}}

under ``<dir>/<clientId>/<group>/offsets.json`` (``.bak`` holds the previous version), the layout
of LocalFileOffsetStore + MixAll.string2File; ``LocalOffsetStore`` is its consumer-facing form.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from enum import Enum
from pathlib import Path
from typing import Protocol

from rocketq.client.aio.api import MQClientAPI
from rocketq.client.aio.route_refresher import needs_route_refresh
from rocketq.common.message import MessageQueue
from rocketq.errors import ClientError, RocketQError

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
                offsets = decode_offsets(text)
            except ClientError:
                continue
            for mq, offset in offsets.items():
                self.load_offset(mq, offset)
            return

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


log = logging.getLogger(__name__)

OFFSET_NOT_FOUND = -1
OFFSET_UNKNOWN = -2


class OffsetStore(Protocol):
    advanced: set[MessageQueue]

    def load(self) -> None: ...
    def update_offset(self, mq: MessageQueue, offset: int, *, increase_only: bool) -> None: ...
    def load_offset(self, mq: MessageQueue, offset: int) -> None: ...
    async def read_offset(self, mq: MessageQueue, read_type: ReadOffsetType) -> int: ...
    async def persist_all(self, mqs: set[MessageQueue]) -> None: ...
    def remove_offset(self, mq: MessageQueue) -> None: ...
    def read(self, mq: MessageQueue) -> int: ...


class BrokerFinder(Protocol):
    """What the broker-side offset store uses of the MQClientInstance: where a queue's master
    is, and the API to ask it."""

    api: MQClientAPI

    def find_broker_addr(self, broker_name: str, *, only_master: bool = True) -> str | None: ...

    async def find_broker_addr_or_refresh(self, broker_name: str, topic: str) -> str: ...

    def find_broker_address_in_subscribe(
        self, broker_name: str, broker_id: int = 0, *, only_this_broker: bool = False
    ) -> tuple[str, bool] | None: ...

    async def find_broker_addr_in_subscribe_or_refresh(
        self, broker_name: str, topic: str, broker_id: int = 0
    ) -> tuple[str, bool]: ...

    async def refresh_now(self, topic: str, timeout_s: float | None = None) -> bool: ...


class RemoteBrokerOffsetStore(OffsetTable):
    def __init__(self, instance: BrokerFinder, group: str) -> None:
        super().__init__()
        self.instance = instance
        self.group = group

    def load(self) -> None:
        """Nothing to load: the broker has the offsets."""

    async def read_offset(self, mq: MessageQueue, read_type: ReadOffsetType) -> int:
        if read_type is not ReadOffsetType.READ_FROM_STORE:
            offset = self.read(mq)
            if offset >= 0 or read_type is ReadOffsetType.READ_FROM_MEMORY:
                return offset
        try:
            addr, _ = await self.instance.find_broker_addr_in_subscribe_or_refresh(
                mq.broker_name, mq.topic
            )
            stored = await self.instance.api.query_consumer_offset(addr, self.group, mq)
        except (RocketQError, OSError) as exc:
            log.warning("query offset of %s for %s failed: %r", mq, self.group, exc)
            return OFFSET_UNKNOWN
        if stored is None:
            return OFFSET_NOT_FOUND
        self.load_offset(mq, stored)
        return stored

    async def persist_all(self, mqs: set[MessageQueue]) -> None:
        jobs = [self.persist(mq) for mq in sorted(mqs) if mq in self.advanced]
        await asyncio.gather(*jobs)

    async def persist(self, mq: MessageQueue) -> None:
        offset = self.offsets.get(mq)
        if offset is None or offset < 0:
            return
        found = self.instance.find_broker_address_in_subscribe(mq.broker_name)
        if found is None:  # no master: the slave keeps it until the master is back
            return
        try:
            await self.instance.api.update_consumer_offset(found[0], self.group, mq, offset)
        except (RocketQError, OSError) as exc:
            if not needs_route_refresh(exc):
                return
            # the broker went away or stopped being master: once more where the route now
            # points (a new master), so the commit does not wait for the next round
            await self.instance.refresh_now(mq.topic)
            moved = self.instance.find_broker_address_in_subscribe(mq.broker_name)
            if moved is not None and moved[0] != found[0]:
                with contextlib.suppress(RocketQError, OSError):
                    await self.instance.api.update_consumer_offset(moved[0], self.group, mq, offset)


class LocalOffsetStore(LocalFileOffsetStore):
    async def read_offset(self, mq: MessageQueue, read_type: ReadOffsetType) -> int:
        if read_type is ReadOffsetType.READ_FROM_STORE:
            stored = LocalFileOffsetStore(self.path.parents[2], "", "")
            stored.path = self.path
            stored.load()
            offset = stored.read(mq)
            if offset >= 0:
                self.load_offset(mq, offset)
            return offset
        return self.read(mq)

    async def persist_all(self, mqs: set[MessageQueue]) -> None:  # type: ignore[override]
        LocalFileOffsetStore.persist_all(self, mqs)  # a small file: written in place
