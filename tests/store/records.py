"""An independent test-side record builder (CommitLog layout), IPv4 hosts, v1 magic.

Used to feed CommitLog before/independently of ``rocketq.common.message_decoder``.
"""

from __future__ import annotations

import socket
import struct
import zlib

VECTOR1_HEX = (
    "000000d2daa320a769c865ed000000030000000000000000000000000000000000000000000000000000018b"
    "cfe568007f0000010000d4310000018bcfe5687b7f00000100002a9f0000000000000000000000000000000e"
    "48656c6c6f20526f636b65744d5109546f706963546573740060554e49515f4b45590137463030303030313330"
    "333931423644333538363437423736303030303030300243"
    "4c55535445520144656661756c74436c757374657202544147530154616741024b455953016b31206b3202"
    "57414954017472756502"
)
VECTOR1_PROPS = (
    b"UNIQ_KEY\x017F00000130391B6D358647B760000000\x02CLUSTER\x01DefaultCluster\x02"
    b"TAGS\x01TagA\x02KEYS\x01k1 k2\x02WAIT\x01true\x02"
)


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
