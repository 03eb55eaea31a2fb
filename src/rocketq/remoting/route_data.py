"""JSON bodies of the name-server protocol (remoting.md §3.1): routes, registration, cluster.

Each class has ``to_json()`` (a JSON-ready dict with RocketMQ's keys), ``from_json(obj)``,
``encode() -> bytes`` and ``decode(data)``. Decoding is lenient the way fastjson is: missing
keys take defaults, numbers may come as strings, and fastjson's bare numeric map keys parse.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, Self

from rocketq.errors import RemotingCommandError
from rocketq.remoting import json_text

PERM_PRIORITY = 0x8
PERM_READ = 0x4
PERM_WRITE = 0x2
PERM_INHERIT = 0x1

MASTER_ID = 0
MAX_INFLATED_BODY_BYTES = 64 * 1024 * 1024  # zip-bomb cap for compressed registrations

_LENGTH_STRUCT = struct.Struct(">i")
assert _LENGTH_STRUCT.size == 4


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


@dataclass(slots=True, kw_only=True)
class DataVersion(JsonBody):
    timestamp: int = 0
    counter: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"counter": self.counter, "timestamp": self.timestamp}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(timestamp=as_int(obj, "timestamp"), counter=as_int(obj, "counter"))

    def next_version(self, now_ms: int) -> DataVersion:
        """The version after a change: counter + 1, timestamp = now."""
        return DataVersion(timestamp=now_ms, counter=self.counter + 1)


@dataclass(slots=True, kw_only=True)
class TopicConfig(JsonBody):
    topic_name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": self.topic_filter_type,
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            topic_name=as_str(obj, "topicName"),
            read_queue_nums=as_int(obj, "readQueueNums", 16),
            write_queue_nums=as_int(obj, "writeQueueNums", 16),
            perm=as_int(obj, "perm", PERM_READ | PERM_WRITE),
            topic_filter_type=as_str(obj, "topicFilterType", "SINGLE_TAG"),
            topic_sys_flag=as_int(obj, "topicSysFlag"),
            order=as_bool(obj, "order"),
        )

    def encode_text(self) -> str:
        """``TopicConfig.encode()``: the space-separated form of the compressed registration."""
        return (
            f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} "
            f"{self.perm} {self.topic_filter_type}"
        )

    @classmethod
    def decode_text(cls, text: str) -> TopicConfig:
        parts = text.split(" ")
        if len(parts) < 5:
            raise RemotingCommandError(f"topic config text has {len(parts)} fields: {text!r}")
        try:
            return TopicConfig(
                topic_name=parts[0],
                read_queue_nums=int(parts[1]),
                write_queue_nums=int(parts[2]),
                perm=int(parts[3]),
                topic_filter_type=parts[4],
            )
        except ValueError:
            raise RemotingCommandError(f"topic config text is malformed: {text!r}") from None


@dataclass(slots=True, kw_only=True)
class TopicConfigSerializeWrapper(JsonBody):
    topic_config_table: dict[str, TopicConfig] = field(default_factory=dict)
    data_version: DataVersion = field(default_factory=DataVersion)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataVersion": self.data_version.to_json(),
            "topicConfigTable": {k: v.to_json() for k, v in self.topic_config_table.items()},
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = as_object(obj.get("topicConfigTable"), "topicConfigTable")
        return cls(
            topic_config_table={
                name: TopicConfig.from_json(as_object(cfg, "TopicConfig"))
                for name, cfg in table.items()
            },
            data_version=DataVersion.from_json(as_object(obj.get("dataVersion"), "dataVersion")),
        )


@dataclass(slots=True, kw_only=True)
class RegisterBrokerBody(JsonBody):
    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = field(
        default_factory=TopicConfigSerializeWrapper
    )
    filter_server_list: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "filterServerList": list(self.filter_server_list),
            "topicConfigSerializeWrapper": self.topic_config_serialize_wrapper.to_json(),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        wrapper = as_object(obj.get("topicConfigSerializeWrapper"), "topicConfigSerializeWrapper")
        servers = obj.get("filterServerList") or []
        return cls(
            topic_config_serialize_wrapper=TopicConfigSerializeWrapper.from_json(wrapper),
            filter_server_list=[str(s) for s in servers],
        )

    def encode_compressed(self) -> bytes:
        """The ``compressed=true`` registration body: a zlib stream of length-prefixed parts."""
        wrapper = self.topic_config_serialize_wrapper
        parts = [_length_prefixed(wrapper.data_version.encode())]
        parts.append(_LENGTH_STRUCT.pack(len(wrapper.topic_config_table)))
        for config in wrapper.topic_config_table.values():
            parts.append(_length_prefixed(config.encode_text().encode()))
        parts.append(_length_prefixed(json_text.dumps(self.filter_server_list)))
        return zlib.compress(b"".join(parts), 9)

    @classmethod
    def decode_compressed(cls, data: bytes) -> RegisterBrokerBody:
        inflater = zlib.decompressobj()
        try:
            raw = memoryview(inflater.decompress(data, MAX_INFLATED_BODY_BYTES))
        except zlib.error as exc:
            raise RemotingCommandError(f"compressed register body: {exc}") from exc
        if inflater.unconsumed_tail:
            raise RemotingCommandError(
                f"compressed register body inflates past {MAX_INFLATED_BODY_BYTES} bytes"
            )
        version_bytes, pos = _read_length_prefixed(raw, 0)
        (count,) = _unpack(raw, pos)
        pos += 4
        table: dict[str, TopicConfig] = {}
        for _ in range(max(0, count)):
            text, pos = _read_length_prefixed(raw, pos)
            config = TopicConfig.decode_text(text.decode())
            table[config.topic_name] = config
        servers_bytes, pos = _read_length_prefixed(raw, pos)
        servers = json_text.loads(servers_bytes, "filterServerList") or []
        return RegisterBrokerBody(
            topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
                topic_config_table=table, data_version=DataVersion.decode(version_bytes)
            ),
            filter_server_list=[str(s) for s in servers],
        )


def _length_prefixed(data: bytes) -> bytes:
    return _LENGTH_STRUCT.pack(len(data)) + data


def _unpack(raw: memoryview, pos: int) -> tuple[int]:
    if pos + 4 > len(raw):
        raise RemotingCommandError(f"compressed register body ends at {pos}")
    (value,) = _LENGTH_STRUCT.unpack_from(raw, pos)
    return (value,)


def _read_length_prefixed(raw: memoryview, pos: int) -> tuple[bytes, int]:
    (length,) = _unpack(raw, pos)
    pos += 4
    if length < 0 or pos + length > len(raw):
        raise RemotingCommandError(f"compressed register body: bad length {length} at {pos}")
    return bytes(raw[pos : pos + length]), pos + length
