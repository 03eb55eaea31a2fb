"""JsonBody: the base of every JSON body and JSON-persisted value (RocketMQ's RemotingSerializable).

A subclass gives ``to_json()`` (a JSON-ready dict with RocketMQ's camelCase keys) and
``from_json(obj)``; ``encode()`` and ``decode(data)`` turn that into bytes as peers write them
(``json_text``). Reading is lenient the way fastjson is: missing keys take defaults, numbers
may come as strings. The ``as_*`` readers below say which field failed.
"""

from __future__ import annotations

from typing import Any, Self

from rocketq.common import json_text
from rocketq.errors import RemotingCommandError


def as_int(obj: dict[str, Any], key: str, default: int = 0) -> int:
    value = obj.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RemotingCommandError(f"body field {key} is not an integer: {value!r}") from None


def as_str(obj: dict[str, Any], key: str, default: str = "") -> str:
    value = obj.get(key, default)
    return default if value is None else str(value)


def as_bool(obj: dict[str, Any], key: str, default: bool = False) -> bool:
    value = obj.get(key, default)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    return bool(value)


def as_object(value: object, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RemotingCommandError(f"{what} is not a JSON object")
    return value


class JsonBody:
    """Mixin: bytes <-> JSON object for body classes."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        raise NotImplementedError

    def encode(self) -> bytes:
        return json_text.dumps(self.to_json())

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        return cls.from_json(as_object(json_text.loads(data, cls.__name__), cls.__name__))
