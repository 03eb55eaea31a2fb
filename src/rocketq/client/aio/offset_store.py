"""Offset stores as the consumers use them: on the broker (clustering) or a local file.

``RemoteBrokerOffsetStore`` reads with QUERY_CONSUMER_OFFSET (``-1`` when the broker has none,
``-2`` when it could not be asked) and persists with UPDATE_CONSUMER_OFFSET to the queue's
master. ``LocalOffsetStore`` wraps the file store of ``rocketq.client.offset_store``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.offset_store import LocalFileOffsetStore, OffsetTable, ReadOffsetType
from rocketq.common.message import MessageQueue
from rocketq.errors import RocketQError

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


class RemoteBrokerOffsetStore(OffsetTable):
    def __init__(self, instance: MQClientInstance, group: str) -> None:
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
        addr = found[0]
        with contextlib.suppress(RocketQError, OSError):
            await self.instance.api.update_consumer_offset(addr, self.group, mq, offset)


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
