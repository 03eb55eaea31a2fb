"""Allocate strategies: which of a topic's queues a consumer takes (AllocateMessageQueue*.java).

Every consumer of a group runs the same function on the same sorted inputs, so the group agrees
without talking. ``current_cid`` missing from ``cid_all`` gets nothing.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from typing import Protocol

from rocketq.common.message import MessageQueue
from rocketq.errors import ConfigError


class AllocateMessageQueueStrategy(Protocol):
    name: str

    def allocate(
        self,
        group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]: ...


class _SortedAllocator:
    """Checks the inputs, sorts them and hands ``_pick`` the consumer's index."""

    name = ""

    def allocate(
        self,
        group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        if not (current_cid and mq_all and current_cid in cid_all):
            return []
        cids = sorted(cid_all)
        return self._pick(sorted(mq_all), cids, cids.index(current_cid))

    def _pick(self, mqs: list[MessageQueue], cids: list[str], index: int) -> list[MessageQueue]:
        raise NotImplementedError


class AllocateMessageQueueAveragely(_SortedAllocator):
    name = "AVG"

    def _pick(self, mqs: list[MessageQueue], cids: list[str], index: int) -> list[MessageQueue]:
        n, c = len(mqs), len(cids)
        mod = n % c
        if n <= c:
            size = 1
        elif mod > 0 and index < mod:
            size = n // c + 1
        else:
            size = n // c
        start = index * size if mod > 0 and index < mod else index * size + mod
        return [mqs[(start + i) % n] for i in range(min(size, n - start))]


class AllocateMessageQueueAveragelyByCircle(_SortedAllocator):
    name = "AVG_BY_CIRCLE"

    def _pick(self, mqs: list[MessageQueue], cids: list[str], index: int) -> list[MessageQueue]:
        return [mq for i, mq in enumerate(mqs) if i % len(cids) == index]


def md5_hash(key: str) -> int:
    """ConsistentHashRouter's MD5Hash: the first four digest bytes as a big-endian number."""
    return int.from_bytes(hashlib.md5(key.encode()).digest()[:4], "big")


class AllocateMessageQueueConsistentHash(_SortedAllocator):
    name = "CONSISTENT_HASH"

    def __init__(self, virtual_node_count: int = 10) -> None:
        if virtual_node_count < 1:
            raise ConfigError("virtual_node_count must be positive")
        self.virtual_node_count = virtual_node_count

    def _pick(self, mqs: list[MessageQueue], cids: list[str], index: int) -> list[MessageQueue]:
        ring: dict[int, str] = {}
        for cid in cids:
            for i in range(self.virtual_node_count):
                ring[md5_hash(f"{cid}-{i}")] = cid
        points = sorted(ring)
        current = cids[index]
        result = []
        for mq in mqs:
            pos = bisect.bisect_left(points, md5_hash(str(mq)))
            if ring[points[pos % len(points)]] == current:
                result.append(mq)
        return result


def allocate_strategy(name: str) -> AllocateMessageQueueStrategy:
    strategies: dict[str, AllocateMessageQueueStrategy] = {
        "AVG": AllocateMessageQueueAveragely(),
        "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle(),
        "CONSISTENT_HASH": AllocateMessageQueueConsistentHash(),
    }
    try:
        return strategies[name]
    except KeyError:
        raise ConfigError(f"unknown allocate strategy {name!r}") from None
