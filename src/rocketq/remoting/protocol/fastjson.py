"""fastjson's JSON dialect, as RocketMQ peers write and read it: the one module for it.

RocketMQ serializes bodies and config files with Alibaba fastjson (``RemotingSerializable``,
``ConfigManager``), whose output departs from standard JSON in three ways, and C++ peers
(jsoncpp) add a fourth:

* a map with integer keys is written with bare keys: ``{0:"10.0.0.1:10911"}``;
* a map whose keys are beans (``Map<MessageQueue, ...>``) is written with the key object in key
  position, ``{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"maxOffset":3}}}``
  (apache/rocketmq issue #3389; ConsumeStats, TopicStatsTable, ResetOffsetBody,
  ConsumerRunningInfo are written that way);
* the pretty form of config files (``JSON.toJSONString(obj, true)``) indents with tabs, writes
  ``"key":value`` without a space and integer-keyed maps on one line;
* jsoncpp ends a body with a line feed.

Writers: ``dumps`` (compact, keys sorted and quoted, raw UTF-8: what our bodies send; C++ and
Java read quoted integer keys too), ``dumps_object_keys`` (compact as fastjson writes a bean
with object or integer keys, nulls left out) and ``dumps_pretty`` (config files). Readers:
``loads`` accepts standard JSON and bare numeric keys, ``loads_object_keys`` also object keys
(turned into their canonical JSON text; ``key_object`` reads one back). Text that does not
parse raises ``RemotingCommandError`` naming what was read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rocketq.errors import RemotingCommandError

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
MAX_DEPTH = 64

# ----------------------------------------------------------------------------- compact, standard


def dumps(value: object) -> bytes:
    """Compact JSON with sorted, quoted keys and raw UTF-8 (close to fastjson's bean output)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def text_of(data: bytes | bytearray | memoryview | str, what: str = "body") -> str:
    """A JSON body as text; RemotingCommandError naming ``what`` when it is not UTF-8."""
    try:
        return data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RemotingCommandError(f"{what} is not UTF-8: {exc}") from exc


def loads(data: bytes | bytearray | memoryview | str, what: str = "body") -> Any:
    """Parse JSON, quoting fastjson's bare numeric keys when plain parsing fails."""
    text = text_of(data, what)
    try:
        return json.loads(text)
    except ValueError:
        pass
    except RecursionError:
        raise RemotingCommandError(f"{what} JSON is nested too deeply") from None
    try:
        return json.loads(quote_numeric_keys(text))
    except ValueError as exc:
        raise RemotingCommandError(f"{what} is not JSON: {exc}") from exc
    except RecursionError:
        raise RemotingCommandError(f"{what} JSON is nested too deeply") from None


def quote_numeric_keys(text: str) -> str:
    """Put quotes around object keys written as bare integers, outside string literals."""
    out: list[str] = []
    i = 0
    size = len(text)
    expect_key = False
    stack: list[str] = []
    while i < size:
        ch = text[i]
        if ch == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
            expect_key = False
            continue
        if ch in "{[":
            stack.append(ch)
            expect_key = ch == "{"
            out.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
            expect_key = False
            out.append(ch)
        elif ch == ",":
            expect_key = bool(stack) and stack[-1] == "{"
            out.append(ch)
        elif expect_key and (ch.isdigit() or ch == "-"):
            j = i + 1
            while j < size and text[j].isdigit():
                j += 1
            out.append(f'"{text[i:j]}"')
            i = j
            expect_key = False
            continue
        elif not ch.isspace():
            expect_key = False
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def int_keys(table: dict[str, Any]) -> dict[int, Any]:
    """``{"0": 5}`` or ``{0: 5}`` (after parsing) -> ``{0: 5}``."""
    return {int(k): v for k, v in table.items()}


# ----------------------------------------------------------------------------- object keys


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


def dumps_object_keys(value: Any) -> bytes:
    """Compact JSON as fastjson writes it: keys sorted, integer keys bare, ``ObjectKeyMap``
    with object keys; ``None`` values are left out of objects."""
    out: list[str] = []
    _dump(value, out)
    return "".join(out).encode()


def loads_object_keys(data: bytes | bytearray | memoryview | str, what: str = "body") -> Any:
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
    """The object a key written by ``loads_object_keys`` stands for."""
    try:
        value = json.loads(key)
    except ValueError:
        raise RemotingCommandError(f"map key is not a JSON object: {key!r}") from None
    if not isinstance(value, dict):
        raise RemotingCommandError(f"map key is not a JSON object: {key!r}")
    return value


# ----------------------------------------------------------------------------- pretty (files)


def dumps_pretty(value: Any, indent: int = 0) -> str:
    """Serialize like ``JSON.toJSONString(obj, true)``: tab indentation, ``"key":value``,
    keys in alphabetical order, integer-keyed maps on one line, null values left out."""
    if isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if v is not None]
        if not items:
            return "{}"
        if all(isinstance(k, int) for k, _ in items):
            body = ",".join(f"{k}:{dumps_pretty(v, indent + 1)}" for k, v in items)
            return "{" + body + "\n" + "\t" * indent + "}"
        pad = "\t" * (indent + 1)
        parts = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}:{dumps_pretty(v, indent + 1)}"
            for k, v in sorted(items, key=lambda kv: str(kv[0]))
        ]
        return "{\n" + ",\n".join(parts) + "\n" + "\t" * indent + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "[" + ",".join(dumps_pretty(v, indent + 1) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)
