"""An independent test-side record builder (CommitLog layout), IPv4 hosts, v1 magic.

Used to feed CommitLog before/independently of ``rocketq.common.message_decoder``.
"""

from __future__ import annotations

import socket
import struct
import zlib

from rocketq.testing.vectors import message


def props_bytes(props: dict[str, str]) -> bytes:
    return b"".join(f"{k}\x01{v}\x02".encode() for k, v in props.items())


def build_record(
    topic: str,
    queue_id: int,
    body: bytes,
    props: bytes = b"",
    *,
    sys_flag: int = 0,
    born_ts: int = 1700000000000,
    born_host: tuple[str, int] = ("127.0.0.1", 54321),
    store_host: tuple[str, int] = ("127.0.0.1", 10911),
) -> bytearray:
    t = topic.encode()
    total = 91 + len(body) + len(t) + len(props)
    out = bytearray()
    out += struct.pack(
        ">iIiiiqqiq",
        total,
        0xDAA320A7,
        zlib.crc32(body) & 0x7FFFFFFF,
        queue_id,
        0,
        0,
        0,
        sys_flag,
        born_ts,
    )
    out += socket.inet_aton(born_host[0]) + struct.pack(">i", born_host[1])
    out += struct.pack(">q", 0)
    out += socket.inet_aton(store_host[0]) + struct.pack(">i", store_host[1])
    out += struct.pack(">iqi", 0, 0, len(body)) + body
    out += struct.pack(">b", len(t)) + t + struct.pack(">h", len(props)) + props
    assert len(out) == total
    return out


#: the properties of golden vector 1 (``rocketq.testing.vectors``) as the record holds them
VECTOR1_PROPS = props_bytes(message(1).properties)
