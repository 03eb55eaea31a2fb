"""Options of the ``rocketq`` source and sink, named as Spark's Kafka source names them.

Spark hands options over as a case-insensitive dict of strings with lower-cased keys
(``CaseInsensitiveDict`` in pyspark/sql/datasource.py). ``ReadOptions.parse`` and
``WriteOptions.parse`` validate everything on the driver, before a task runs: an unknown option,
a malformed value or two options that contradict each other raise ``SparkOptionError`` naming
them. The parsed objects are small frozen dataclasses, pickled into every partition.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketq.common.message import MessageQueue
from rocketq.errors import SparkOptionError
from rocketq.spark.topic.offsets import EARLIEST, LATEST, OffsetMap, parse_offsets_json

READ_OPTIONS = [
    "nameServer",
    "subscribe",
    "subscribePattern",
    "assign",
    "topic",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "subExpression",
    "subExpressionType",
    "maxRecordsPerPartition",
    "minPartitions",
    "failOnDataLoss",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "maxBytesPerTrigger",
    "consumerGroup",
    "pullBatchSize",
    "pollTimeoutMs",
    "lowLatency",
]
WRITE_OPTIONS = [
    "nameServer",
    "topic",
    "deliveryGuarantee",
    "producerGroup",
    "sendTimeoutMs",
    "maxBatchMessages",
    "maxBatchBytes",
    "checkpointLocation",
    "path",
]
STREAM_ONLY = [
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "maxBytesPerTrigger",
    "consumerGroup",
    "lowLatency",
]
BATCH_ONLY = ["endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"]
SELECTORS = ("subscribe", "subscribePattern", "assign", "topic")
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|min|h|d)?\s*$")
_DURATION_MS = {
    None: 1,
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}


def canonical(options: Mapping[str, str], known: list[str], what: str) -> dict[str, str]:
    """Options keyed by their documented names; unknown ones raise, all named at once."""
    by_lower = {name.lower(): name for name in known}
    out: dict[str, str] = {}
    unknown = []
    for key, value in options.items():
        name = by_lower.get(key.lower())
        if name is None:
            unknown.append(key)
        else:
            out[name] = str(value)
    if unknown:
        raise SparkOptionError(
            f"unknown {what} option(s) {', '.join(sorted(unknown))}; known: {', '.join(known)}"
        )
    return out


def _int(opts: dict[str, str], name: str, *, minimum: int = 0) -> int | None:
    raw = opts.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise SparkOptionError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SparkOptionError(f"{name} must be at least {minimum}, got {value}")
    return value


def _bool(opts: dict[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise SparkOptionError(f"{name} must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def duration_ms(name: str, raw: str) -> int:
    match = _DURATION.match(raw)
    if match is None:
        raise SparkOptionError(f"{name} must be a duration like 500ms, 30s, 15m, 1h: {raw!r}")
    return int(match.group(1)) * _DURATION_MS[match.group(2)]


def _assign(raw: str) -> tuple[MessageQueue, ...]:
    try:
        nested = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SparkOptionError(f"assign: not JSON ({exc}): {raw!r}") from None
    if not isinstance(nested, dict) or not nested:
        raise SparkOptionError(f'assign must look like {{"topic": {{"broker-a": [0, 1]}}}}: {raw}')
    queues: list[MessageQueue] = []
    for topic, brokers in nested.items():
        if not isinstance(brokers, dict):
            raise SparkOptionError(f"assign: topic {topic!r} needs an object of brokers")
        for broker, ids in brokers.items():
            if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
                raise SparkOptionError(f"assign: {topic}/{broker} needs a list of queue ids")
            queues.extend(MessageQueue(topic, broker, i) for i in ids)
    return tuple(sorted(set(queues)))


def _position(opts: dict[str, str], name: str) -> str | OffsetMap | None:
    raw = opts.get(name)
    if raw is None:
        return None
    if raw.strip().lower() in ("earliest", "latest"):
        return raw.strip().lower()
    return parse_offsets_json(raw, name)


@dataclass(frozen=True, kw_only=True, slots=True)
class ReadOptions:
    name_server: str
    subscribe: tuple[str, ...] = ()
    subscribe_pattern: str | None = None
    assign: tuple[MessageQueue, ...] = ()
    starting: str | OffsetMap = "earliest"
    ending: str | OffsetMap = "latest"
    starting_timestamp_ms: int | None = None
    starting_by_timestamp: OffsetMap | None = None
    ending_timestamp_ms: int | None = None
    ending_by_timestamp: OffsetMap | None = None
    timestamp_strategy: str = "error"
    sub_expression: str = "*"
    sub_expression_type: str = "TAG"
    max_records_per_partition: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    max_bytes_per_trigger: int | None = None
    consumer_group: str | None = None
    pull_batch_size: int = 1024  # brokers cap it (maxTransferCountOnMessageInMemory)
    poll_timeout_ms: int = 120_000
    low_latency: bool = False  # a micro-batch read in the planner (spark/topic/stream_prefetch)

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
        opts = canonical(options, READ_OPTIONS, "read")
        _check_combinations(opts, streaming)
        return cls(
            name_server=_required(opts, "nameServer"),
            **_selection(opts),
            **_positions(opts, streaming),
            sub_expression=opts.get("subExpression", "*").strip() or "*",
            sub_expression_type=_expression_type(opts),
            max_records_per_partition=_int(opts, "maxRecordsPerPartition", minimum=1),
            min_partitions=_int(opts, "minPartitions", minimum=1),
            fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
            **_admission(opts),
            consumer_group=opts.get("consumerGroup") or None,
            pull_batch_size=_int(opts, "pullBatchSize", minimum=1) or 1024,
            poll_timeout_ms=_int(opts, "pollTimeoutMs", minimum=1) or 120_000,
            low_latency=_bool(opts, "lowLatency", False),
        )


def _required(opts: dict[str, str], name: str) -> str:
    value = opts.get(name, "").strip()
    if not value:
        raise SparkOptionError(f"the option {name} is required")
    return value


def _check_combinations(opts: dict[str, str], streaming: bool) -> None:
    chosen = [name for name in SELECTORS if name in opts]
    if len(chosen) != 1:
        raise SparkOptionError(
            "exactly one of subscribe, subscribePattern, assign (or topic) is needed, got "
            + (", ".join(chosen) or "none")
        )
    wrong = [n for n in (BATCH_ONLY if streaming else STREAM_ONLY) if n in opts]
    if wrong:
        kind = "a batch read" if streaming else "a streaming read"
        raise SparkOptionError(f"option(s) {', '.join(wrong)} apply only to {kind}")
    if "startingTimestamp" in opts and "startingOffsetsByTimestamp" in opts:
        raise SparkOptionError("startingTimestamp and startingOffsetsByTimestamp contradict")
    if "endingTimestamp" in opts and "endingOffsetsByTimestamp" in opts:
        raise SparkOptionError("endingTimestamp and endingOffsetsByTimestamp contradict")
    if "maxTriggerDelay" in opts and "minOffsetsPerTrigger" not in opts:
        raise SparkOptionError("maxTriggerDelay needs minOffsetsPerTrigger")


def _expression_type(opts: dict[str, str]) -> str:
    kind = opts.get("subExpressionType", "TAG").strip().upper()
    if kind not in ("TAG", "SQL92"):
        raise SparkOptionError(f"subExpressionType is TAG or SQL92, got {kind!r}")
    if kind == "SQL92":
        from rocketq.client.message_selector import MessageSelector
        from rocketq.errors import FilterExpressionError

        try:
            MessageSelector.by_sql(opts.get("subExpression", ""))
        except FilterExpressionError as exc:
            raise SparkOptionError(f"subExpression is not an SQL92 filter: {exc}") from None
    return kind


def _selection(opts: dict[str, str]) -> dict[str, Any]:
    if "assign" in opts:
        return {"assign": _assign(opts["assign"])}
    if "subscribePattern" in opts:
        pattern = opts["subscribePattern"]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SparkOptionError(f"subscribePattern is not a regex ({exc}): {pattern}") from None
        return {"subscribe_pattern": pattern}
    raw = opts.get("subscribe", opts.get("topic", ""))
    topics = tuple(sorted({t.strip() for t in raw.split(",") if t.strip()}))
    if not topics:
        raise SparkOptionError("subscribe names no topic")
    return {"subscribe": topics}


def _positions(opts: dict[str, str], streaming: bool) -> dict[str, Any]:
    starting = _position(opts, "startingOffsets") or ("latest" if streaming else "earliest")
    ending = _position(opts, "endingOffsets") or "latest"
    if not streaming and starting == "latest":
        raise SparkOptionError("startingOffsets=latest is not allowed in a batch read")
    if ending == "earliest" or (isinstance(ending, dict) and EARLIEST in ending.values()):
        raise SparkOptionError("endingOffsets cannot be earliest (-2)")
    if isinstance(starting, dict) and any(v < EARLIEST for v in starting.values()):
        raise SparkOptionError("startingOffsets: offsets are >= 0, or -2 / -1")
    if isinstance(ending, dict) and any(v < LATEST for v in ending.values()):
        raise SparkOptionError("endingOffsets: offsets are >= 0, or -1")
    strategy = opts.get("startingOffsetsByTimestampStrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise SparkOptionError(f"startingOffsetsByTimestampStrategy is error or latest: {strategy}")
    by_ts = opts.get("startingOffsetsByTimestamp")
    end_by_ts = opts.get("endingOffsetsByTimestamp")
    return {
        "starting": starting,
        "ending": ending,
        "starting_timestamp_ms": _int(opts, "startingTimestamp"),
        "starting_by_timestamp": parse_offsets_json(by_ts, "startingOffsetsByTimestamp")
        if by_ts
        else None,
        "ending_timestamp_ms": _int(opts, "endingTimestamp"),
        "ending_by_timestamp": parse_offsets_json(end_by_ts, "endingOffsetsByTimestamp")
        if end_by_ts
        else None,
        "timestamp_strategy": strategy,
    }


def _admission(opts: dict[str, str]) -> dict[str, Any]:
    max_offsets = _int(opts, "maxOffsetsPerTrigger", minimum=1)
    min_offsets = _int(opts, "minOffsetsPerTrigger", minimum=1)
    if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
        raise SparkOptionError(
            f"minOffsetsPerTrigger ({min_offsets}) exceeds maxOffsetsPerTrigger ({max_offsets})"
        )
    raw_delay = opts.get("maxTriggerDelay")
    delay = DEFAULT_MAX_TRIGGER_DELAY_MS
    if raw_delay is not None:
        delay = duration_ms("maxTriggerDelay", raw_delay)
    return {
        "max_bytes_per_trigger": _int(opts, "maxBytesPerTrigger", minimum=1),
        "max_offsets_per_trigger": max_offsets,
        "min_offsets_per_trigger": min_offsets,
        "max_trigger_delay_ms": delay,
    }


AT_LEAST_ONCE = "at_least_once"
EXACTLY_ONCE = "exactly_once"
# separate groups: the broker sends check-backs to a producer of the half's group, and a
# plain (at-least-once) producer could not answer them
DEFAULT_GROUPS = {
    AT_LEAST_ONCE: "SPARK_ROCKETQ_WRITER",
    EXACTLY_ONCE: "SPARK_ROCKETQ_TXN_WRITER",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteOptions:
    name_server: str
    topic: str | None = None
    delivery_guarantee: str = AT_LEAST_ONCE
    producer_group: str = "SPARK_ROCKETQ_WRITER"
    send_timeout_ms: int = 3000
    max_batch_messages: int = 128
    max_batch_bytes: int = 1024 * 1024
    checkpoint_location: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> WriteOptions:
        opts = canonical(options, WRITE_OPTIONS, "write")
        guarantee = opts.get("deliveryGuarantee", AT_LEAST_ONCE).strip().lower()
        if guarantee not in (AT_LEAST_ONCE, EXACTLY_ONCE):
            raise SparkOptionError(
                f"deliveryGuarantee is at_least_once or exactly_once, got {guarantee!r}"
            )
        return cls(
            name_server=_required(opts, "nameServer"),
            topic=opts.get("topic", "").strip() or None,
            delivery_guarantee=guarantee,
            producer_group=opts.get("producerGroup", "").strip() or DEFAULT_GROUPS[guarantee],
            send_timeout_ms=_int(opts, "sendTimeoutMs", minimum=1) or 3000,
            max_batch_messages=_int(opts, "maxBatchMessages", minimum=1) or 128,
            max_batch_bytes=_int(opts, "maxBatchBytes", minimum=1) or 1024 * 1024,
            checkpoint_location=opts.get("checkpointLocation") or None,
        )
