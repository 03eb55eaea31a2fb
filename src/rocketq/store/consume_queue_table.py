"""ConsumeQueueTable: every consume queue of a store, by topic and queue id (RocketMQ's
DefaultMessageStore.consumeQueueTable and the methods that walk it).

Lookups are lock-free reads of nested dicts; creating a queue takes the table lock, so the
reput thread and readers never see two queues for one (topic, queue id). ``all_queues``
returns a snapshot the clean, flush and recovery code can walk while queues are added.
"""

from __future__ import annotations

import logging
import os
import threading

from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.sync_batch import SyncBatch

log = logging.getLogger(__name__)


class ConsumeQueueTable:
    def __init__(self, root_dir: str, mapped_file_size: int) -> None:
        self.root_dir = root_dir
        self.mapped_file_size = mapped_file_size
        self.table: dict[str, dict[int, ConsumeQueue]] = {}
        self._lock = threading.Lock()

    def find(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        queues = self.table.get(topic)
        return queues.get(queue_id) if queues is not None else None

    def find_or_create(self, topic: str, queue_id: int) -> ConsumeQueue:
        cq = self.find(topic, queue_id)
        if cq is not None:
            return cq
        with self._lock:
            queues = self.table.setdefault(topic, {})
            cq = queues.get(queue_id)
            if cq is None:
                cq = ConsumeQueue(topic, queue_id, self.root_dir, self.mapped_file_size)
                queues[queue_id] = cq
        return cq

    def all_queues(self) -> list[ConsumeQueue]:
        return [cq for queues in list(self.table.values()) for cq in list(queues.values())]

    def load(self) -> None:
        """Map every ``<root>/<topic>/<queueId>`` directory found on disk."""
        if not os.path.isdir(self.root_dir):
            return
        for topic in sorted(os.listdir(self.root_dir)):
            topic_dir = os.path.join(self.root_dir, topic)
            if not os.path.isdir(topic_dir):
                continue
            for qid in sorted(os.listdir(topic_dir)):
                if not qid.lstrip("-").isdigit():
                    log.warning("ignoring stray entry %s in %s", qid, topic_dir)
                    continue
                self.find_or_create(topic, int(qid)).load()

    def max_physic_end(self) -> int:
        """Largest commitlog end a queue points to (4.x reput start: DefaultMessageStore#start)."""
        return max((int(cq.get_max_physic_offset()) for cq in self.all_queues()), default=0)

    def topic_queue_offsets(self, min_phy_offset: int) -> dict[str, int]:
        """``<topic>-<queueId>`` -> next queue offset, after correcting each queue's minimum."""
        table: dict[str, int] = {}
        for cq in self.all_queues():
            cq.correct_min_offset(min_phy_offset)
            table[f"{cq.topic}-{cq.queue_id}"] = int(cq.get_max_offset_in_queue())
        return table

    def flush(self, least_pages: int) -> None:
        for cq in self.all_queues():
            cq.flush(least_pages)

    def flush_into(self, batch: SyncBatch, least_pages: int) -> None:
        """:meth:`flush` with the syncs left to ``batch`` (``sync_batch.py``)."""
        for cq in self.all_queues():
            cq.flush_into(batch, least_pages)

    def shutdown(self) -> None:
        for cq in self.all_queues():
            cq.shutdown()
