"""Offset message ids (MessageDecoder#createMessageId) and the host bytes they, and records,
are made of.

An offset msgId is the hex of the store host (IPv4: 4 address bytes, IPv6: 16) + its port
(i4) + the record's commitlog offset (i8): 32 characters for IPv4, 56 for IPv6.
"""

from __future__ import annotations

import socket
import struct
from functools import lru_cache

from rocketq.errors import DecodeError

Host = tuple[str, int]

MSG_ID_STRUCT_V4 = struct.Struct(">4siq")
MSG_ID_STRUCT_V6 = struct.Struct(">16siq")
_PORT = struct.Struct(">i")


@lru_cache(maxsize=4096)
def host_to_bytes(host: Host) -> bytes:
    """IPv4 → 4 address bytes + port; IPv6 → 16 + port (socketAddress2ByteBuffer)."""
    ip, port = host
    ip = ip.partition("%")[0]  # a scoped link-local address: Java writes the 16 bytes
    try:
        raw = socket.inet_pton(socket.AF_INET, ip)
    except OSError:
        try:
            raw = socket.inet_pton(socket.AF_INET6, ip)
        except OSError as exc:
            raise ValueError(f"not an IP address: {ip!r}") from exc
        mapped = raw[:12] == b"\0" * 10 + b"\xff\xff"
        if mapped:
            raw = raw[12:]
    return raw + _PORT.pack(port)


@lru_cache(maxsize=4096)
def bytes_to_host(raw: bytes) -> Host:
    if len(raw) == 8:
        return socket.inet_ntop(socket.AF_INET, raw[:4]), _PORT.unpack_from(raw, 4)[0]
    return socket.inet_ntop(socket.AF_INET6, raw[:16]), _PORT.unpack_from(raw, 16)[0]


def message_id_from_host_bytes(store_raw: bytes, commitlog_offset: int) -> str:
    return (store_raw + commitlog_offset.to_bytes(8, "big", signed=True)).hex().upper()


def create_message_id(store_host: Host, commitlog_offset: int) -> str:
    """The offset msgId: 32 hex characters for an IPv4 store host, 56 for IPv6."""
    return message_id_from_host_bytes(host_to_bytes(store_host), commitlog_offset)


def decode_message_id(msg_id: str) -> tuple[Host, int]:
    """Inverse of :func:`create_message_id` (32 characters = IPv4, otherwise IPv6)."""
    try:
        raw = bytes.fromhex(msg_id)
    except ValueError as exc:
        raise DecodeError(f"message id {msg_id!r} is not hex") from exc
    layout = MSG_ID_STRUCT_V4 if len(msg_id) == 32 else MSG_ID_STRUCT_V6
    if len(raw) != layout.size:
        raise DecodeError(f"message id {msg_id!r} has {len(msg_id)} characters, not 32 or 56")
    ip, port, offset = layout.unpack(raw)
    family = socket.AF_INET if len(ip) == 4 else socket.AF_INET6
    return (socket.inet_ntop(family, ip), port), offset
