"""``RaftStorage``: the durable half of the Ready contract (docs/controller.md) on local files.

Theory of operation. Three files under ``<controllerStorePath>/raft/``:

- ``hardstate``: term, vote and commit (and the node id, to catch a store started under
  another ``controllerDLegerSelfId``), replaced atomically: temp file, fsync, rename, fsync
  of the directory. A reader sees the old state or the new one, never half.
- ``snapshot``: the whole state machine at an index, replaced the same way.
- ``log``: the entries after the snapshot, one record each, appended and fdatasync'ed before
  the Ready's messages go out. A Ready that rewrites the log from index i cuts the file at
  i's record, then appends. A compaction rewrites the file (temp, fsync, rename, fsync dir).

``open`` reads them back. A log record that is short or fails its CRC ends the log: that is a
write torn by a crash (it was never fsync'ed, so nothing was promised on its strength). The
cut tail is logged with path and offset, kept beside the log as ``log.torn-<offset>``
(as ZODB's FileStorage keeps what it truncates) and cut off. A hard state or snapshot that
fails its CRC was replaced atomically and cannot be torn: that is corruption, and raises.

A log record, big-endian::

    +--------+--------+--------+--------+---------+
    | length | crc32  | index  | term   | data    |
    | 4      | 4      | 8      | 8      | length  |
    +--------+--------+--------+--------+---------+  = 24 + length bytes

The crc covers index, term and data. The hard state is ``magic u32 | node_id u64 | term u64 |
vote u64 | commit u64 | crc32 u32`` (40 bytes); the snapshot ``magic u32 | index u64 | term u64 |
length u32 | crc32 u32`` (28 bytes) then the data, its crc over index, term, length and data.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from pathlib import Path

from rocketq.controller.raft import Entry, HardState, RestoredState, Snapshot
from rocketq.errors import ConfigError, CorruptionError

log = logging.getLogger(__name__)

HARD_STATE_MAGIC = 0x52514853  # "RQHS"
SNAPSHOT_MAGIC = 0x52515350  # "RQSP"

RECORD_STRUCT = struct.Struct(
    ">"
    "I"  # data length
    "I"  # crc32 of index, term and data
    "Q"  # index
    "Q"  # term
)
RECORD_SIZE = RECORD_STRUCT.size
assert RECORD_SIZE == 24
CRC_START = struct.calcsize(">II")

HARD_STATE_STRUCT = struct.Struct(
    ">"
    "I"  # magic
    "Q"  # node id
    "Q"  # term
    "Q"  # vote
    "Q"  # commit
    "I"  # crc32 of everything before it
)
HARD_STATE_SIZE = HARD_STATE_STRUCT.size
assert HARD_STATE_SIZE == 40

SNAPSHOT_STRUCT = struct.Struct(
    ">"
    "I"  # magic
    "Q"  # index
    "Q"  # term
    "I"  # data length
    "I"  # crc32 of index, term, length and data
)
SNAPSHOT_SIZE = SNAPSHOT_STRUCT.size
assert SNAPSHOT_SIZE == 28


def encode_record(entry: Entry) -> bytes:
    body = RECORD_STRUCT.pack(len(entry.data), 0, entry.index, entry.term)[CRC_START:] + entry.data
    return struct.pack(">II", len(entry.data), zlib.crc32(body)) + body


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes) -> None:
    """Temp file, fsync, rename over ``path``, fsync the directory."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


class RaftStorage:
    """Synchronous and single-user: the node's Ready loop calls it (through a thread)."""

    def __init__(self, directory: str | os.PathLike[str], node_id: int) -> None:
        self.directory = Path(directory)
        self.node_id = node_id
        self.hard_state_path = self.directory / "hardstate"
        self.snapshot_path = self.directory / "snapshot"
        self.log_path = self.directory / "log"
        self.hard_state = HardState()
        self.snapshot = Snapshot()
        self.entries: list[Entry] = []
        self._offsets: list[int] = []  # file offset of each record in ``entries``
        self._log_size = 0
        self._log_fd = -1

    # ---- recovery ----------------------------------------------------------------------------

    def open(self) -> RestoredState:
        """Read everything back (cutting a torn log tail); the state a restarting node needs."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.hard_state = self._read_hard_state()
        self.snapshot = self._read_snapshot()
        self._read_log()
        self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT, 0o644)
        fsync_dir(self.directory)
        last = self.snapshot.index + len(self.entries)
        commit = max(self.hard_state.commit, self.snapshot.index)
        if commit > last:
            raise CorruptionError(
                str(self.log_path), self._log_size, f"commit {commit} beyond last entry {last}"
            )
        self.hard_state = self.hard_state._replace(commit=commit)
        return RestoredState(self.hard_state, self.snapshot, list(self.entries))

    def _read_hard_state(self) -> HardState:
        if not self.hard_state_path.exists():
            return HardState()
        raw = self.hard_state_path.read_bytes()
        path = str(self.hard_state_path)
        if len(raw) != HARD_STATE_SIZE:
            raise CorruptionError(path, 0, f"{len(raw)} bytes, expected {HARD_STATE_SIZE}")
        magic, node_id, term, vote, commit, crc = HARD_STATE_STRUCT.unpack(raw)
        if magic != HARD_STATE_MAGIC or crc != zlib.crc32(raw[:-4]):
            raise CorruptionError(path, 0, "bad magic or crc")
        if node_id != self.node_id:
            raise ConfigError(f"{path} belongs to controller node {node_id}, not {self.node_id}")
        return HardState(term, vote, commit)

    def _read_snapshot(self) -> Snapshot:
        if not self.snapshot_path.exists():
            return Snapshot()
        raw = self.snapshot_path.read_bytes()
        path = str(self.snapshot_path)
        if len(raw) < SNAPSHOT_SIZE:
            raise CorruptionError(path, 0, "truncated snapshot header")
        magic, index, term, length, crc = SNAPSHOT_STRUCT.unpack_from(raw)
        data = raw[SNAPSHOT_SIZE:]
        if magic != SNAPSHOT_MAGIC or len(data) != length:
            raise CorruptionError(path, 0, f"bad magic or length {length} ({len(data)} present)")
        if crc != zlib.crc32(raw[4 : SNAPSHOT_SIZE - 4] + data):
            raise CorruptionError(path, SNAPSHOT_SIZE - 4, "crc mismatch")
        return Snapshot(index, term, data)

    def _read_log(self) -> None:
        raw = self.log_path.read_bytes() if self.log_path.exists() else b""
        entries: list[Entry] = []
        offsets: list[int] = []
        offset = 0
        while offset < len(raw):
            entry = self._decode_record(raw, offset)
            if entry is None:
                break
            if entries and entry.index != entries[-1].index + 1:
                raise CorruptionError(
                    str(self.log_path), offset, f"index {entry.index} after {entries[-1].index}"
                )
            entries.append(entry)
            offsets.append(offset)
            offset += RECORD_SIZE + len(entry.data)
        if offset < len(raw):
            self._cut_torn_tail(raw, offset)
        self._keep_after_snapshot(entries, offsets)
        self._log_size = offset

    @staticmethod
    def _decode_record(raw: bytes, offset: int) -> Entry | None:
        if offset + RECORD_SIZE > len(raw):
            return None
        length, crc, index, term = RECORD_STRUCT.unpack_from(raw, offset)
        end = offset + RECORD_SIZE + length
        if end > len(raw) or crc != zlib.crc32(raw[offset + CRC_START : end]):
            return None
        return Entry(index, term, raw[offset + RECORD_SIZE : end])

    def _cut_torn_tail(self, raw: bytes, offset: int) -> None:
        log.warning(
            "%s: torn tail at offset %d (%d bytes) cut off, kept in log.torn-%d",
            self.log_path,
            offset,
            len(raw) - offset,
            offset,
        )
        write_atomically(self.directory / f"log.torn-{offset}", raw[offset:])
        with open(self.log_path, "r+b") as f:
            f.truncate(offset)
            os.fsync(f.fileno())

    def _keep_after_snapshot(self, entries: list[Entry], offsets: list[int]) -> None:
        """Entries after the snapshot, if the log agrees with it at its index (a crash between
        a snapshot's rename and the log's rewrite leaves the old log: drop what it replaced)."""
        base = self.snapshot
        first = entries[0].index if entries else base.index + 1
        at_base = [e for e in entries if e.index == base.index]
        if first == base.index + 1 or (at_base and at_base[0].term == base.term):
            keep = [i for i, e in enumerate(entries) if e.index > base.index]
        else:
            keep = []
        self.entries = [entries[i] for i in keep]
        self._offsets = [offsets[i] for i in keep]
        if len(self.entries) != len(entries):
            self._rewrite_log()

    # ---- the Ready's writes ------------------------------------------------------------------

    def append(self, entries: tuple[Entry, ...] | list[Entry]) -> None:
        """Replace the log from ``entries[0].index`` on with ``entries``; fdatasync."""
        if not entries:
            return
        position = entries[0].index - self.snapshot.index - 1
        if not 0 <= position <= len(self.entries):
            raise ValueError(f"append at {entries[0].index} leaves a gap after {self.last_index}")
        if position < len(self.entries):
            self._log_size = self._offsets[position]
            os.ftruncate(self._log_fd, self._log_size)
            del self.entries[position:], self._offsets[position:]
        records: list[bytes] = []
        position = self._log_size
        for entry in entries:
            self._offsets.append(position)
            records.append(encode_record(entry))
            position += len(records[-1])
        data = b"".join(records)
        os.pwrite(self._log_fd, data, self._log_size)
        os.fdatasync(self._log_fd)
        self._log_size += len(data)
        self.entries.extend(entries)

    def save_hard_state(self, hard_state: HardState) -> None:
        term, vote, commit = hard_state
        head = struct.pack(">IQQQQ", HARD_STATE_MAGIC, self.node_id, term, vote, commit)
        write_atomically(self.hard_state_path, head + struct.pack(">I", zlib.crc32(head)))
        self.hard_state = hard_state

    def save_snapshot(self, snapshot: Snapshot, *, keep_tail: bool = True) -> None:
        """Persist ``snapshot``; drop the entries it covers, and with ``keep_tail=False`` (a
        leader's snapshot installed here) or when the log disagrees with it, all of them."""
        body = struct.pack(">QQI", snapshot.index, snapshot.term, len(snapshot.data))
        crc = zlib.crc32(body + snapshot.data)
        header = SNAPSHOT_STRUCT.pack(
            SNAPSHOT_MAGIC, snapshot.index, snapshot.term, len(snapshot.data), crc
        )
        write_atomically(self.snapshot_path, header + snapshot.data)
        entries, offsets = (self.entries, self._offsets) if keep_tail else ([], [])
        self.snapshot = snapshot
        self._keep_after_snapshot(entries, offsets)
        if not keep_tail:
            self._rewrite_log()

    def _rewrite_log(self) -> None:
        data = b"".join(encode_record(e) for e in self.entries)
        write_atomically(self.log_path, data)
        self._offsets, position = [], 0
        for entry in self.entries:
            self._offsets.append(position)
            position += RECORD_SIZE + len(entry.data)
        self._log_size = len(data)
        if self._log_fd >= 0:
            os.close(self._log_fd)
            self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT, 0o644)

    @property
    def last_index(self) -> int:
        return self.snapshot.index + len(self.entries)

    def close(self) -> None:
        if self._log_fd >= 0:
            os.close(self._log_fd)
            self._log_fd = -1
