"""ConsumerOffsetManager: the committed consume offset of each group on each queue.

``offsetTable`` maps ``"<topic>@<group>"`` to {queueId: next queue offset to consume}
(ConsumerOffsetManager.java); written to ``config/consumerOffset.json`` every 5 s and at shutdown.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from rocketq.broker.config_manager import ConfigManager
from rocketq.remoting.protocol import fastjson

TOPIC_GROUP_SEPARATOR = "@"


class ConsumerOffsetManager(ConfigManager):
    def __init__(self, store_root: str | os.PathLike[str]) -> None:
        super().__init__(os.path.join(store_root, "config", "consumerOffset.json"))
        self.offset_table: dict[str, dict[int, int]] = {}
        self._lock = threading.Lock()
        # a slave's SlaveSynchronize hears of commits made on it (key, queueId, offset)
        self.commit_listener: Callable[[str, int, int], None] | None = None

    @staticmethod
    def key(topic: str, group: str) -> str:
        return f"{topic}{TOPIC_GROUP_SEPARATOR}{group}"

    def commit_offset(
        self, client_host: str, group: str, topic: str, queue_id: int, offset: int
    ) -> None:
        del client_host  # RocketMQ logs it; kept for signature parity
        key = self.key(topic, group)
        with self._lock:
            self.offset_table.setdefault(key, {})[queue_id] = offset
        if self.commit_listener is not None:
            self.commit_listener(key, queue_id, offset)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or -1 when the group never committed on this queue."""
        with self._lock:
            return self.offset_table.get(self.key(topic, group), {}).get(queue_id, -1)

    def query_offsets(self, group: str, topic: str) -> dict[int, int]:
        with self._lock:
            return dict(self.offset_table.get(self.key(topic, group), {}))

    def which_topic_by_consumer(self, group: str) -> set[str]:
        with self._lock:
            keys = list(self.offset_table)
        return {
            k.split(TOPIC_GROUP_SEPARATOR)[0]
            for k in keys
            if k.endswith(TOPIC_GROUP_SEPARATOR + group)
        }

    def which_group_by_topic(self, topic: str) -> set[str]:
        with self._lock:
            keys = list(self.offset_table)
        return {
            k.split(TOPIC_GROUP_SEPARATOR, 1)[1]
            for k in keys
            if k.startswith(topic + TOPIC_GROUP_SEPARATOR)
        }

    def remove_offset(self, group: str) -> None:
        with self._lock:
            for k in [k for k in self.offset_table if k.endswith(TOPIC_GROUP_SEPARATOR + group)]:
                del self.offset_table[k]

    def clean_offset_by_topic(self, topic: str) -> None:
        with self._lock:
            for k in [k for k in self.offset_table if k.startswith(topic + TOPIC_GROUP_SEPARATOR)]:
                del self.offset_table[k]

    def encode(self) -> dict[str, Any]:
        with self._lock:
            return {
                "offsetTable": {k: dict(sorted(v.items())) for k, v in self.offset_table.items()}
            }

    def decode(self, obj: dict[str, Any]) -> None:
        table: dict[str, dict[int, int]] = {}
        for k, v in (obj.get("offsetTable") or {}).items():
            if isinstance(v, dict) and len(str(k).split(TOPIC_GROUP_SEPARATOR)) == 2:
                table[str(k)] = {q: int(o) for q, o in fastjson.int_keys(v).items()}
        with self._lock:
            self.offset_table = table
