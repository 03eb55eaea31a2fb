"""The three golden records (docs/store-format.md): bytes, inputs and their side entries.

``message(n)`` rebuilds the MessageExt of vector ``n`` with the property order the vector
shows; ``record(n)`` is the one-line hex as bytes. ``write_vector_store`` lays the three
records, their consume queue units and their index entries out as a store directory, from
the vector tables alone (struct packing here, nothing from ``rocketq.store``), with a small
index: with 100 slots the eight keys still fill 7 distinct slots and chain 8 -> 2 as in the
5,000,000-slot file, so header and entries are byte-identical to the vector's.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from rocketq.common.message import MessageExt

V1_HEX = (
    "000000d2daa320a769c865ed00000003000000000000000000000000000000000000000000000000"
    "0000018bcfe568007f0000010000d4310000018bcfe5687b7f00000100002a9f0000000000000000"
    "000000000000000e48656c6c6f20526f636b65744d5109546f706963546573740060554e49515f4b"
    "455901374630303030303133303339314236443335383634374237363030303030303002434c5553"
    "5445520144656661756c74436c757374657202544147530154616741024b455953016b31206b3202"
    "57414954017472756502"
)
V2_HEX = (
    "00000106daa320a74a8216630000000200000000000000000000000000000000000000d200000000"
    "0000018bcfe57b887f0000010000d4310000018bcfe57bba7f00000100002a9f0000000000000000"
    "0000000000000010" + "48656c6c6f20526f636b65744d512032135343484544554c455f544f5049"
    "435f585858580088554e49515f4b4559013746303030303031333033393142364433353836343742"
    "37373338383030303102434c55535445520144656661756c74436c75737465720244454c41590133"
    "02544147530154616741024b455953016b31206b3202574149540174727565025245414c5f544f50"
    "494301546f70696354657374025245414c5f514944013302"
)
V3_HEX = (
    "000000e2daa320a73d8526f50000000300000000000000000000000100000000000001d800000010"
    "0000018bcfe596e020010db80000000000000000000000100000d4320000018bcfe5972d7f000001"
    "00002a9f0000000000000000000000000000001048656c6c6f20526f636b65744d51203309546f70"
    "6963546573740062554e49515f4b455901374630303030303133303339314236443335383634374237"
    "384545303030303202434c55535445520144656661756c74436c75737465720254414753015461"
    "6743616e63656c024b455953016b310257414954017472756502"
)
HEXES = {1: V1_HEX, 2: V2_HEX, 3: V3_HEX}
OFFSETS = {1: 0, 2: 210, 3: 472}
SIZES = {1: 210, 2: 262, 3: 226}
NEXT_FREE_OFFSET = 698
UNIQ_KEYS = {
    1: "7F00000130391B6D358647B760000000",
    2: "7F00000130391B6D358647B773880001",
    3: "7F00000130391B6D358647B78EE00002",
}
OFFSET_MSG_IDS = {
    1: "7F00000100002A9F0000000000000000",
    2: "7F00000100002A9F00000000000000D2",
    3: "7F00000100002A9F00000000000001D8",
}
STORE_HOST = ("127.0.0.1", 10911)


@dataclass(frozen=True)
class CqVector:
    """One consume queue unit of the vectors: where it lives and its 20 bytes."""

    topic: str
    queue_id: int
    queue_offset: int
    unit_hex: str


CQ_UNITS = {
    1: CqVector("TopicTest", 3, 0, "0000000000000000000000d2000000000027a807"),
    2: CqVector("SCHEDULE_TOPIC_XXXX", 2, 0, "00000000000000d2000001060000018bcfe5a2ca"),
    3: CqVector("TopicTest", 3, 1, "00000000000001d8000000e2ffffffffc3475e94"),
}
#: (key string, keyHash, phyOffset, timeDiff, prevIndex) of index entries 1..8 in order.
INDEX_ENTRIES = [
    ("TopicTest#" + UNIQ_KEYS[1], 789047430, 0, 0, 0),
    ("TopicTest#k1", 2746024, 0, 0, 0),
    ("TopicTest#k2", 2746025, 0, 0, 0),
    ("SCHEDULE_TOPIC_XXXX#" + UNIQ_KEYS[2], 1598071666, 210, 4, 0),
    ("SCHEDULE_TOPIC_XXXX#k1", 1975252913, 210, 4, 0),
    ("SCHEDULE_TOPIC_XXXX#k2", 1975252914, 210, 4, 0),
    ("TopicTest#" + UNIQ_KEYS[3], 2038621094, 472, 11, 0),
    ("TopicTest#k1", 2746024, 472, 11, 2),
]
INDEX_HEADER_HEX = (
    "0000018bcfe5687b0000018bcfe5972d000000000000000000000000000001d80000000700000009"
)


def record(n: int) -> bytes:
    return bytes.fromhex(HEXES[n])


def message(n: int) -> MessageExt:
    """The inputs of vector ``n`` (properties in the order the vector's bytes show)."""
    common = {"CLUSTER": "DefaultCluster"}
    if n == 1:
        props = {"UNIQ_KEY": UNIQ_KEYS[1], **common, "TAGS": "TagA", "KEYS": "k1 k2"}
        props["WAIT"] = "true"
        return _ext(props, "TopicTest", 3, 0, 0, b"Hello RocketMQ", 1700000000000, 1700000000123)
    if n == 2:
        props = {"UNIQ_KEY": UNIQ_KEYS[2], **common, "DELAY": "3", "TAGS": "TagA"}
        props.update({"KEYS": "k1 k2", "WAIT": "true", "REAL_TOPIC": "TopicTest", "REAL_QID": "3"})
        return _ext(
            props, "SCHEDULE_TOPIC_XXXX", 2, 0, 210, b"Hello RocketMQ 2", 1700000005000,
            1700000005050,
        )  # fmt: skip
    props = {"UNIQ_KEY": UNIQ_KEYS[3], **common, "TAGS": "TagCancel", "KEYS": "k1"}
    props["WAIT"] = "true"
    msg = _ext(props, "TopicTest", 3, 1, 472, b"Hello RocketMQ 3", 1700000012000, 1700000012077)
    msg.born_host = ("2001:db8::10", 54322)
    msg.sys_flag = 0x10
    return msg


def _ext(
    props: dict[str, str],
    topic: str,
    queue_id: int,
    queue_offset: int,
    phy: int,
    body: bytes,
    born_ts: int,
    store_ts: int,
) -> MessageExt:
    return MessageExt(
        topic=topic,
        body=body,
        properties=props,
        queue_id=queue_id,
        queue_offset=queue_offset,
        commitlog_offset=phy,
        born_timestamp=born_ts,
        born_host=("127.0.0.1", 54321),
        store_timestamp=store_ts,
        store_host=STORE_HOST,
    )


# ---------------------------------------------------------------------- a store on disk

_CQ_UNIT = struct.Struct(">qiq")
_INDEX_HEADER = struct.Struct(">qqqqii")
_INDEX_ENTRY = struct.Struct(">iqii")
INDEX_FILE_NAME = "20231114221320123"
ZERO_NAME = f"{0:020d}"


@dataclass(frozen=True)
class VectorStore:
    """Paths of a store laid out from the vectors by :func:`write_vector_store`."""

    root: Path
    slots: int
    entries: int

    @property
    def commitlog(self) -> Path:
        return self.root / "commitlog" / ZERO_NAME

    @property
    def queue3(self) -> Path:
        return self.root / "consumequeue" / "TopicTest" / "3" / ZERO_NAME

    @property
    def schedule_queue(self) -> Path:
        return self.root / "consumequeue" / "SCHEDULE_TOPIC_XXXX" / "2" / ZERO_NAME

    @property
    def index(self) -> Path:
        return self.root / "index" / INDEX_FILE_NAME

    def entry_position(self, index_no: int) -> int:
        return 40 + 4 * self.slots + 20 * index_no


def index_file_bytes(slots: int, entries: int) -> bytes:
    """The index file of the vectors with ``slots`` hash slots, built from the tables."""
    data = bytearray(40 + 4 * slots + 20 * entries)
    data[0:40] = bytes.fromhex(INDEX_HEADER_HEX)
    for no, (_key, key_hash, phy, diff, prev) in enumerate(INDEX_ENTRIES, start=1):
        _INDEX_ENTRY.pack_into(data, 40 + 4 * slots + 20 * no, key_hash, phy, diff, prev)
        struct.pack_into(">i", data, 40 + 4 * (key_hash % slots), no)
    return bytes(data)


def write_vector_store(
    root: Path, *, commitlog_size: int = 4096, slots: int = 100, entries: int = 400
) -> VectorStore:
    """V1, V2, V3 at 0/210/472 of a zero-filled commitlog file, their units, their index."""
    store = VectorStore(root, slots, entries)
    records = record(1) + record(2) + record(3)
    assert len(records) == NEXT_FREE_OFFSET
    _write(store.commitlog, records.ljust(commitlog_size, b"\0"))
    units = {n: bytes.fromhex(CQ_UNITS[n].unit_hex) for n in HEXES}
    _write(store.queue3, (units[1] + units[3]).ljust(600, b"\0"))
    _write(store.schedule_queue, units[2].ljust(600, b"\0"))
    _write(store.index, index_file_bytes(slots, entries))
    return store


def cq_unit(phy: int, size: int, tags_code: int) -> bytes:
    return _CQ_UNIT.pack(phy, size, tags_code)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
