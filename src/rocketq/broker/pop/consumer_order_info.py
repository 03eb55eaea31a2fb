"""ConsumerOrderInfoManager: the last FIFO (orderly) pop of each (topic, group, queue), RocketMQ
5's broker/offset/ConsumerOrderInfoManager, kept in ``config/consumerOrderInfo.json``.

Theory of operation. A FIFO pop (``order=true``) writes no checkpoint; instead the queue's
``OrderInfo`` records the popped batch: ``popTime``, the invisible time (``i``), the offsets
(``o``: the first, then the distance of each other from it), a bit per acked offset (``cm``),
per-offset next visible times set by a change of invisible time (``ot``), per-offset delivery
counts of messages popped before (``oc``) and the pop's ``attemptId`` (``a``). The queue is
*blocked* while a message of the batch is neither acked nor past its next visible time; a
request with the batch's attemptId is not blocked (it gets the same messages again). The
consume offset stays at the batch's start until acks move it (``commit_and_next``: the first
un-acked offset, or past the batch when all are acked), so a batch that expires is popped
again from the same offset, and a message popped again gets its count + 1 (unless the same
attemptId popped it). The file is fastjson's form of the Java bean, ``{"table":
{"topic@group": {queueId: {"a":..,"cm":..,"i":..,"l":..,"o":[..],"oc":{..},"ot":{..},
"popTime":..}}}}``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rocketq.broker.config_manager import ConfigManager
from rocketq.common.extra_info import queue_offset_key
from rocketq.remoting.protocol import fastjson

TOPIC_GROUP_SEPARATOR = "@"
CLEAN_SPAN_FROM_LAST_MS = 24 * 3600 * 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class OrderInfo:
    pop_time: int
    invisible_time: int | None
    offset_list: list[int]  # [first, diff1, diff2, ...] (OrderInfo.buildOffsetList)
    last_consume_timestamp: int
    commit_offset_bit: int = 0
    attempt_id: str | None = None
    offset_next_visible_time: dict[int, int] = field(default_factory=dict)
    offset_consumed_count: dict[int, int] = field(default_factory=dict)

    @staticmethod
    def build_offset_list(offsets: list[int]) -> list[int]:
        return [offsets[0]] + [o - offsets[0] for o in offsets[1:]]

    def queue_offset(self, index: int) -> int:
        return self.offset_list[0] + (self.offset_list[index] if index else 0)

    @property
    def queue_offsets(self) -> list[int]:
        return [self.queue_offset(i) for i in range(len(self.offset_list))]

    def is_not_ack(self, index: int) -> bool:
        return not self.commit_offset_bit & (1 << index)

    def next_visible_time(self, index: int) -> int:
        base = self.pop_time + (self.invisible_time or 0)
        return self.offset_next_visible_time.get(self.queue_offset(index), base)

    def need_block(self, attempt_id: str | None, current_invisible_time: int, now: int) -> bool:
        """OrderInfo.needBlock: an un-acked message still invisible (not for its attemptId)."""
        if not self.offset_list:
            return False
        if self.attempt_id is not None and self.attempt_id == attempt_id:
            return False
        if not self.invisible_time or self.invisible_time <= 0:
            self.invisible_time = current_invisible_time
        return any(
            self.is_not_ack(i) and now < self.next_visible_time(i)
            for i in range(len(self.offset_list))
        )

    def lock_free_timestamp(self, now: int) -> int | None:
        """OrderInfo.getLockFreeTimestamp: when the block ends (now if it is not blocked)."""
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                if not self.invisible_time or self.invisible_time <= 0:
                    return None
                if now < self.next_visible_time(i):
                    return self.next_visible_time(i)
        return now

    def next_offset(self) -> int:
        """OrderInfo.getNextOffset: the first un-acked offset, or past the batch."""
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                return self.queue_offset(i)
        return self.queue_offset(len(self.offset_list) - 1) + 1

    def merge_offset_consumed_count(self, previous: OrderInfo) -> None:
        """OrderInfo.mergeOffsetConsumedCount: a message popped again counts one more."""
        if previous.attempt_id is not None and previous.attempt_id == self.attempt_id:
            self.offset_consumed_count = previous.offset_consumed_count
            return
        before = set(previous.queue_offsets)
        self.offset_consumed_count = {
            o: previous.offset_consumed_count.get(o, 0) + 1
            for o in self.queue_offsets
            if o in before
        }

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cm": self.commit_offset_bit,
            "l": self.last_consume_timestamp,
            "o": self.offset_list,
            "popTime": self.pop_time,
        }
        if self.attempt_id is not None:
            out["a"] = self.attempt_id
        if self.invisible_time is not None:
            out["i"] = self.invisible_time
        if self.offset_consumed_count:
            out["oc"] = dict(sorted(self.offset_consumed_count.items()))
        if self.offset_next_visible_time:
            out["ot"] = dict(sorted(self.offset_next_visible_time.items()))
        return dict(sorted(out.items()))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> OrderInfo:
        def int_map(key: str) -> dict[int, int]:
            return {int(k): int(v) for k, v in (obj.get(key) or {}).items()}

        invisible = obj.get("i")
        return cls(
            pop_time=int(obj.get("popTime", 0)),
            invisible_time=None if invisible is None else int(invisible),
            offset_list=[int(o) for o in obj.get("o") or []],
            last_consume_timestamp=int(obj.get("l", 0)),
            commit_offset_bit=int(obj.get("cm", 0)),
            attempt_id=obj.get("a"),
            offset_next_visible_time=int_map("ot"),
            offset_consumed_count=int_map("oc"),
        )


def build_order_count_info(mark: str, queue_id: int, counts: dict[int, int], min_count: int) -> str:
    """ExtraInfoUtil.buildQueueOffsetOrderCountInfo per counted offset, then
    buildQueueIdOrderCountInfo with the smallest count (for older clients), ';'-joined."""
    parts = [f"{mark} {queue_offset_key(queue_id, o)} {c}" for o, c in counts.items()]
    parts.append(f"{mark} {queue_id} {min_count}")
    return ";".join(parts)


class ConsumerOrderInfoManager(ConfigManager):
    def __init__(self, store_root: str | os.PathLike[str]) -> None:
        super().__init__(os.path.join(store_root, "config", "consumerOrderInfo.json"))
        self.table: dict[str, dict[int, OrderInfo]] = {}
        self._lock = threading.Lock()
        self._empty_on_disk = False  # the file holds an empty table (written by persist)
        self._encoded_empty = False

    def persist(self) -> None:
        """As ConfigManager's, but an empty table is written once, not again after every pop
        of a group without FIFO (PopService persists promptly after each pop)."""
        with self._file_lock:
            with self._lock:
                if not self.table and self._empty_on_disk:
                    return
            super().persist()
            self._empty_on_disk = self._encoded_empty

    @staticmethod
    def key(topic: str, group: str) -> str:
        return f"{topic}{TOPIC_GROUP_SEPARATOR}{group}"

    def get(self, topic: str, group: str, queue_id: int) -> OrderInfo | None:
        with self._lock:
            return self.table.get(self.key(topic, group), {}).get(queue_id)

    def update(
        self,
        attempt_id: str | None,
        topic: str,
        group: str,
        queue_id: int,
        pop_time: int,
        invisible_time: int,
        queue_offsets: list[int],
    ) -> tuple[dict[int, int], int]:
        """A FIFO pop: the batch becomes the queue's order info; (the counts of the messages
        popped before, the smallest count over the batch) for the response's orderCountInfo."""
        info = OrderInfo(
            pop_time, invisible_time, OrderInfo.build_offset_list(queue_offsets), _now_ms(),
            attempt_id=attempt_id,
        )  # fmt: skip
        with self._lock:
            queues = self.table.setdefault(self.key(topic, group), {})
            previous = queues.get(queue_id)
            if previous is not None:
                info.merge_offset_consumed_count(previous)
            queues[queue_id] = info
        counts = dict(info.offset_consumed_count)
        smallest = min(counts.values()) if len(counts) == len(queue_offsets) else 0
        return counts, smallest

    def check_block(
        self, attempt_id: str | None, topic: str, group: str, queue_id: int, invisible_time: int
    ) -> bool:
        with self._lock:
            info = self.table.get(self.key(topic, group), {}).get(queue_id)
            return info is not None and info.need_block(attempt_id, invisible_time, _now_ms())

    def clear_block(self, topic: str, group: str, queue_id: int) -> None:
        with self._lock:
            self.table.get(self.key(topic, group), {}).pop(queue_id, None)

    def commit_and_next(
        self, topic: str, group: str, queue_id: int, queue_offset: int, pop_time: int
    ) -> int:
        """Mark ``queue_offset`` acked: the offset to commit (>= 0), -1 illegal (not in the
        batch), -2 nothing to commit (another pop's handle)."""
        with self._lock:
            info = self.table.get(self.key(topic, group), {}).get(queue_id)
            if info is None:
                return queue_offset + 1
            if not info.offset_list:
                return -1
            if pop_time != info.pop_time:
                return -2
            offsets = info.queue_offsets
            if queue_offset not in offsets:
                return -1
            info.commit_offset_bit |= 1 << offsets.index(queue_offset)
            return info.next_offset()

    def update_next_visible_time(
        self,
        topic: str,
        group: str,
        queue_id: int,
        queue_offset: int,
        pop_time: int,
        next_visible_time: int,
    ) -> OrderInfo | None:
        """A change of invisible time of one message of the batch popped at ``pop_time``
        (None: no such batch, so nothing changed)."""
        with self._lock:
            info = self.table.get(self.key(topic, group), {}).get(queue_id)
            if info is None or info.pop_time != pop_time:
                return None
            if queue_offset not in info.queue_offsets:
                return None
            info.offset_next_visible_time[queue_offset] = next_visible_time
            return info

    def encode(self) -> dict[str, Any]:
        with self._lock:
            self._auto_clean()
            self._encoded_empty = not self.table
            return {
                "table": {
                    k: {q: info.to_json() for q, info in sorted(qs.items())}
                    for k, qs in self.table.items()
                }
            }

    def _auto_clean(self) -> None:
        """ConsumerOrderInfoManager.autoClean (the part without the topic and group tables):
        queues not consumed for a day, and empty entries."""
        now = _now_ms()
        for key in list(self.table):
            qs = self.table[key]
            for q, info in list(qs.items()):
                if now - info.last_consume_timestamp > CLEAN_SPAN_FROM_LAST_MS:
                    del qs[q]
            if not qs:
                del self.table[key]

    def decode(self, obj: dict[str, Any]) -> None:
        table: dict[str, dict[int, OrderInfo]] = {}
        for k, qs in (obj.get("table") or {}).items():
            if isinstance(qs, dict) and len(str(k).split(TOPIC_GROUP_SEPARATOR)) == 2:
                table[str(k)] = {
                    q: OrderInfo.from_json(v)
                    for q, v in fastjson.int_keys(qs).items()
                    if isinstance(v, dict)
                }
        with self._lock:
            self.table = table
        self._empty_on_disk = False
