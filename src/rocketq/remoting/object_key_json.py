"""fastjson's maps with object keys (``Map<MessageQueue, ...>``), written and read.

fastjson writes a map whose keys are beans with the key object itself in key position::

    {"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"maxOffset":3}}}

which is not standard JSON (apache/rocketmq issue #3389), and RocketMQ's admin bodies
(ConsumeStats, TopicStatsTable, ResetOffsetBody, ConsumerRunningInfo) are written that way.
``dumps`` writes it from ``ObjectKeyMap`` values; ``loads`` reads it (and standard JSON),
turning an object or number key into its canonical JSON text, so a decoder can call
``json.loads(key)`` on it. Bodies that never have object keys use ``json_text`` instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.fastjson import text_of

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class ObjectKeyMap:
    """A map to write with JSON-object keys: ``[(key_object, value), ...]``."""

    items: list[tuple[dict[str, Any], Any]]


def _dump(value: Any, out: list[str]) -> None:
    if isinstance(value, ObjectKeyMap):
        out.append("{")
        for i, (key, item) in enumerate(value.items):
            if i:
                out.append(",")
            _dump(key, out)
            out.append(":")
            _dump(item, out)
        out.append("}")
    elif isinstance(value, dict):
        bare = bool(value) and all(type(k) is int for k in value)  # fastjson: {0:5}
        keys = sorted(value) if bare else sorted(value, key=str)
        out.append("{")
        keys = [k for k in keys if value[k] is not None]
        for i, key in enumerate(keys):
            if i:
                out.append(",")
            out.append(str(key) if bare else json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _dump(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _dump(item, out)
        out.append("]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def dumps(value: Any) -> bytes:
    """Compact JSON as fastjson writes it: keys sorted, integer keys bare, ``ObjectKeyMap``
    with object keys; ``None`` values are left out of objects."""
    out: list[str] = []
    _dump(value, out)
    return "".join(out).encode()


def loads(data: bytes | bytearray | memoryview | str, what: str = "body") -> Any:
    """Parse JSON in which object keys may be objects or bare numbers."""
    text = text_of(data, what)
    try:
        value, pos = _parse(text, _skip(text, 0), 0)
    except (ValueError, IndexError) as exc:
        raise RemotingCommandError(f"{what} is not JSON: {exc}") from None
    if _skip(text, pos) != len(text):
        raise RemotingCommandError(f"{what} has extra data at {pos}")
    return value


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _parse(text: str, pos: int, depth: int) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} at {pos}")
    ch = text[pos]
    if ch == "{":
        return _parse_object(text, pos + 1, depth + 1)
    if ch == "[":
        return _parse_array(text, pos + 1, depth + 1)
    value, end = _DECODER.raw_decode(text, pos)
    return value, end


def _parse_object(text: str, pos: int, depth: int) -> tuple[dict[str, Any], int]:
    obj: dict[str, Any] = {}
    pos = _skip(text, pos)
    if text[pos] == "}":
        return obj, pos + 1
    while True:
        key, pos = _parse(text, _skip(text, pos), depth)
        if not isinstance(key, str):
            key = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        pos = _skip(text, pos)
        if text[pos] != ":":
            raise ValueError(f"expected ':' at {pos}")
        obj[key], pos = _parse(text, _skip(text, pos + 1), depth)
        pos = _skip(text, pos)
        if text[pos] == "}":
            return obj, pos + 1
        if text[pos] != ",":
            raise ValueError(f"expected ',' or '}}' at {pos}")
        pos += 1


def _parse_array(text: str, pos: int, depth: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    pos = _skip(text, pos)
    if text[pos] == "]":
        return items, pos + 1
    while True:
        item, pos = _parse(text, _skip(text, pos), depth)
        items.append(item)
        pos = _skip(text, pos)
        if text[pos] == "]":
            return items, pos + 1
        if text[pos] != ",":
            raise ValueError(f"expected ',' or ']' at {pos}")
        pos += 1


def key_object(key: str) -> dict[str, Any]:
    """The object a key written by ``loads`` stands for."""
    try:
        value = json.loads(key)
    except ValueError:
        raise RemotingCommandError(f"map key is not a JSON object: {key!r}") from None
    if not isinstance(value, dict):
        raise RemotingCommandError(f"map key is not a JSON object: {key!r}")
    return value
