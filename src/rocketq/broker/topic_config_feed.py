"""TopicConfigFeed: a master's recent topic-config changes, which its controller-mode slaves
follow by long polling.

Beyond RocketMQ (whose slaves copy the whole table every 10 s, ``SlaveSynchronize``): a
controller-mode slave sends GET_ALL_TOPIC_CONFIG with the DataVersion it holds
(``topicDataVersion``) and ``topicWaitMillis``. While the master's table is at that version
the request is held, as a PULL_MESSAGE is suspended (``AdminBrokerProcessor
.get_all_topic_config``); once it moves, the answer carries only the changes since
(``topicConfigChanges``: the journal records of ``topic_config_journal``, with the version
after them) when this feed still holds every one of them, else the whole table. The slave
applies them and sends its next poll at once; that poll reports the new version, which is the
ack a topic create waits for (``metadata_acks``). A create is so answered after two loopback
round trips instead of a poll period.

Every change the TopicConfigManager journals is recorded here, from whatever thread made it
(under the manager's lock, so in version order); the last ``FEED_MAX_CHANGES`` are kept, each
as its records' JSON text: a string is not an object the cyclic collector walks, where the
records' dicts were one per topic of a batch create (up to 4,096 x 1,000 of them, walked by
every full collection; ``rocketq.common.heap_freeze``). A
version step without a journal record (a new master stamping its epoch) leaves a gap, and a
slave behind a gap gets the whole table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from typing import Any

#: changes kept for slaves that are behind (each one version step: a create, a batch, a delete)
FEED_MAX_CHANGES = 4096
#: the request field: how long the master may hold a poll whose version has not moved
TOPIC_WAIT_MILLIS = "topicWaitMillis"
#: the answer's key for the changes since the slave's version
TOPIC_CONFIG_CHANGES = "topicConfigChanges"
#: the longest hold a master grants
MAX_WAIT_MS = 30_000

Records = list[dict[str, Any]]


class TopicConfigFeed:
    def __init__(self, max_changes: int = FEED_MAX_CHANGES) -> None:
        self._lock = threading.Lock()
        # (stateVersion, counter, the version's JSON, the change's records as JSON text)
        self._changes: deque[tuple[int, int, dict[str, Any], str]] = deque(maxlen=max_changes)
        self._loop: asyncio.AbstractEventLoop | None = None  # set by the first waiter
        self._changed = asyncio.Event()

    def record(self, records: Records, version: dict[str, Any]) -> None:
        """A journaled change and the table's version after it (any thread)."""
        state, counter = int(version.get("stateVersion") or 0), int(version.get("counter") or 0)
        text = json.dumps(records, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            self._changes.append((state, counter, version, text))
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def changed_event(self) -> asyncio.Event:
        """The event the next change sets; take it before checking the version (on the loop)."""
        self._loop = asyncio.get_running_loop()
        return self._changed

    def changes_since(self, state: int, counter: int) -> tuple[Records, dict[str, Any]] | None:
        """The records of every change after ``(state, counter)`` and the version after the
        last; None unless the feed holds all of them (none, older, or a gap)."""
        picked: list[tuple[int, int, dict[str, Any], str]] = []
        with self._lock:
            for entry in reversed(self._changes):
                if entry[0] != state or entry[1] <= counter:
                    break
                picked.append(entry)
        if not picked:
            return None
        picked.reverse()
        expected = counter + 1
        for entry in picked:
            if entry[1] != expected:
                return None
            expected += 1
        records = [record for entry in picked for record in json.loads(entry[3])]
        return records, picked[-1][2]
