"""The body of REGISTER_BROKER (103): the topic table a broker sends to each name server
(RocketMQ's ``RegisterBrokerBody`` and ``TopicConfigSerializeWrapper``), as JSON or, with the
header's ``compressed=true``, in RegisterBrokerBody's compressed form::

    zlib( dataVersion: len int32 | JSON
          count int32 | count x { len int32 | TopicConfig.encode() text }
          filterServerList: len int32 | JSON )
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.json_body import JsonBody

MAX_INFLATED_BODY_BYTES = 64 * 1024 * 1024  # zip-bomb cap for compressed registrations

_LENGTH_STRUCT = struct.Struct(">i")
assert _LENGTH_STRUCT.size == 4


@dataclass(slots=True, kw_only=True)
class TopicConfigSerializeWrapper(JsonBody):
    topic_config_table: dict[str, TopicConfig] = field(default_factory=dict)
    data_version: DataVersion = field(default_factory=DataVersion)


@dataclass(slots=True, kw_only=True)
class RegisterBrokerBody(JsonBody):
    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = field(
        default_factory=TopicConfigSerializeWrapper
    )
    filter_server_list: list[str] = field(default_factory=list)

    def encode_compressed(self) -> bytes:
        """The ``compressed=true`` registration body: a zlib stream of length-prefixed parts."""
        wrapper = self.topic_config_serialize_wrapper
        parts = [_length_prefixed(wrapper.data_version.encode())]
        parts.append(_LENGTH_STRUCT.pack(len(wrapper.topic_config_table)))
        parts.extend(
            _length_prefixed(config.encode_text().encode())
            for config in wrapper.topic_config_table.values()
        )
        parts.append(_length_prefixed(fastjson.dumps(self.filter_server_list)))
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
        servers = fastjson.loads(servers_bytes, "filterServerList") or []
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
