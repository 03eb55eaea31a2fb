"""JSON text as RocketMQ peers write it (RemotingSerializable, C++ RemotingCommand.cpp).

Java fastjson may write map keys that are numbers without quotes (``{0:"10.0.0.1:10911"}``);
C++ jsoncpp appends a line feed. ``loads`` accepts both. ``dumps`` writes compact JSON with
sorted keys and raw UTF-8, close to fastjson's bean output, always with quoted keys.
"""

from __future__ import annotations

import json
from typing import Any

from rocketq.errors import RemotingCommandError


def dumps(value: object) -> bytes:
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
