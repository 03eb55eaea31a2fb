"""Offsets of a topic read: ConsumeQueue indices per (topic, broker, queueId), as sorted JSON.

Spark compares offsets as JSON text, so every dict is built in sorted key order
(pyspark/sql/datasource_internal.py). Values are the *next* index to read (end-exclusive).

* User-facing JSON (``startingOffsets``/``endingOffsets``, rocketmq-spark's shape):
  ``{"orders": {"broker-a": {"0": 1200, "1": -2}}}`` where -2 means earliest and -1 latest.
* Stream offsets (what the checkpoint's ``offsets/N`` holds):
  ``{"v": 1, "topics": {...}}`` plus, in batch 0 only, ``"init": {...}``: the resolved start,
  carried in the end offset so a replay of batch 0 never re-resolves ``latest`` (docs/spark.md).
  ``initialOffset()`` marks its answer ``"initial": true`` so ``latestOffset`` knows batch 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rocketq.common.message import MessageQueue
from rocketq.errors import SparkOptionError

EARLIEST = -2
LATEST = -1
OFFSET_FORMAT_VERSION = 1

OffsetMap = dict[MessageQueue, int]


def to_nested(offsets: Mapping[MessageQueue, int]) -> dict[str, dict[str, dict[str, int]]]:
    """``{topic: {broker: {queueId: offset}}}`` with every level in sorted order."""
    nested: dict[str, dict[str, dict[str, int]]] = {}
    for mq in sorted(offsets):
        brokers = nested.setdefault(mq.topic, {})
        brokers.setdefault(mq.broker_name, {})[str(mq.queue_id)] = offsets[mq]
    for brokers in nested.values():
        for broker, queues in brokers.items():
            brokers[broker] = dict(sorted(queues.items(), key=lambda kv: int(kv[0])))
    return nested


def from_nested(nested: Any, what: str) -> OffsetMap:
    """The inverse of ``to_nested``; ``what`` names the option in errors."""
    if not isinstance(nested, dict):
        raise SparkOptionError(f"{what}: expected a JSON object of topics, got {nested!r}")
    offsets: OffsetMap = {}
    for topic, brokers in nested.items():
        if not isinstance(brokers, dict):
            raise SparkOptionError(f"{what}: topic {topic!r} needs an object of brokers")
        for broker, queues in brokers.items():
            if not isinstance(queues, dict):
                raise SparkOptionError(f"{what}: {topic}/{broker} needs an object of queues")
            for queue_id, offset in queues.items():
                if not str(queue_id).isdigit() or not isinstance(offset, int):
                    raise SparkOptionError(
                        f"{what}: {topic}/{broker}/{queue_id}: queue ids are digits and"
                        f" offsets integers, got {queue_id!r}: {offset!r}"
                    )
                offsets[MessageQueue(topic, broker, int(queue_id))] = offset
    return offsets


def parse_offsets_json(text: str, what: str) -> OffsetMap:
    try:
        nested = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SparkOptionError(f"{what}: not JSON ({exc}): {text!r}") from None
    return from_nested(nested, what)


def stream_offset(
    offsets: Mapping[MessageQueue, int],
    *,
    initial: bool = False,
    init: Mapping[MessageQueue, int] | None = None,
) -> dict[str, Any]:
    """A stream offset dict in sorted key order (``init`` < ``initial`` < ``topics`` < ``v``)."""
    out: dict[str, Any] = {}
    if init is not None:
        out["init"] = to_nested(init)
    if initial:
        out["initial"] = True
    out["topics"] = to_nested(offsets)
    out["v"] = OFFSET_FORMAT_VERSION
    return out


def offsets_of(offset: Mapping[str, Any]) -> OffsetMap:
    return from_nested(offset.get("topics", {}), "offset")


def init_of(offset: Mapping[str, Any]) -> OffsetMap | None:
    init = offset.get("init")
    return None if init is None else from_nested(init, "offset")


def is_initial(offset: Mapping[str, Any]) -> bool:
    return bool(offset.get("initial"))
