"""ConsumerOffsetManager: the committed consume offset of each group on each queue.

``offsetTable`` maps ``"<topic>@<group>"`` to {queueId: next queue offset to consume}
(ConsumerOffsetManager.java); written to ``config/consumerOffset.json`` every 5 s and at shutdown,
and within 50 ms of a pop's commit (docs/pop.md). A write finds the file's text built directly
(:meth:`ConsumerOffsetManager.encode_text`, not the generic pretty printer at about 3 us an
offset) and is skipped when the text is the one last written: pops that moved nothing since.
"""

from __future__ import annotations

import json
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
        self._written: str | None = None  # the text last written to the file

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

    def encode_text(self) -> str:
        """``fastjson.dumps_pretty(self.encode())`` (JSON.toJSONString(this, true)), built
        directly: keys sorted, each queue map on one line."""
        with self._lock:
            rows = [(k, sorted(v.items())) for k, v in self.offset_table.items()]
        if not rows:
            return '{\n\t"offsetTable":{}\n}'
        rows.sort(key=lambda row: row[0])
        parts = [
            f"\t\t{json.dumps(key, ensure_ascii=False)}:"
            + ("{" + ",".join(f"{q}:{o}" for q, o in queues) + "\n\t\t}" if queues else "{}")
            for key, queues in rows
        ]
        return '{\n\t"offsetTable":{\n' + ",\n".join(parts) + "\n\t}\n}"

    def _persist(self) -> None:
        """ConfigManager's, with :meth:`encode_text`; nothing written when the text is the
        one last written (under the file lock, as every persist)."""
        text = self.encode_text()
        if text == self._written:
            return
        self._write_text(text)
        self._written = text

    def decode(self, obj: dict[str, Any]) -> None:
        table: dict[str, dict[int, int]] = {}
        for k, v in (obj.get("offsetTable") or {}).items():
            if isinstance(v, dict) and len(str(k).split(TOPIC_GROUP_SEPARATOR)) == 2:
                table[str(k)] = {q: int(o) for q, o in fastjson.int_keys(v).items()}
        with self._lock:
            self.offset_table = table
