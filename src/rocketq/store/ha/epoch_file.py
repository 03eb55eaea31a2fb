"""The epoch file ``<storePathRootDir>/epochFileCheckpoint`` and the consistent point of two
epoch lists (RocketMQ 5's ``store/ha/autoswitch/EpochFileCache`` with its
``EpochEntrySerializer``, written by ``common/utils/CheckpointFile``).

Each time a broker becomes master at epoch ``e`` it appends ``<e, its max offset>``: the
commitlog from that offset up to the next entry's start was written under epoch ``e``. The file
is text, UTF-8, with ``\\n`` line ends (``System.lineSeparator()`` on Linux)::

    <entry count>\\n
    <CRC32 of the entry lines, each with its \\n, & 0x7FFFFFFF, decimal>\\n
    <epoch>-<startOffset>\\n           one line per entry, epochs ascending
    ...

for example ``2\\n773307083\\n7-7000\\n8-8000\\n``. A CRC of 0 means "do not check"
(``CheckpointFile.NOT_CHECK_CRC_MAGIC_CODE``), which is also the CRC of no entries.

Differences from RocketMQ, all on the safe side: the file is written atomically and fsynced
(``metadata_file.write_atomically``; the old content still goes to ``.bak``); an empty list is
written (Java skips the write, so a truncation to nothing leaves the old entries on disk); and a
line that does not parse is corruption (Java skips it, then fails the count check).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from rocketq.errors import CorruptionError
from rocketq.store.ha.metadata_file import BACKUP_SUFFIX, read_file, write_atomically

EPOCH_FILE_NAME = "epochFileCheckpoint"
#: CheckpointFile.NOT_CHECK_CRC_MAGIC_CODE
NOT_CHECK_CRC = 0
#: EpochEntry.endOffset of the open (last) epoch: Long.MAX_VALUE.
OPEN_END_OFFSET = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One line of the file: ``epoch`` began writing at commitlog offset ``start_offset``."""

    epoch: int
    start_offset: int


def crc32(data: bytes) -> int:
    """UtilAll.crc32: java.util.zip.CRC32 masked to a non-negative int."""
    return zlib.crc32(data) & 0x7FFFFFFF


def encode_epoch_file(entries: Sequence[EpochEntry]) -> bytes:
    body = "".join(f"{e.epoch}-{e.start_offset}\n" for e in entries).encode()
    return f"{len(entries)}\n{crc32(body)}\n".encode() + body


def decode_epoch_file(data: bytes, path: str = EPOCH_FILE_NAME) -> list[EpochEntry]:
    """Parse the file; a bad count, CRC, line or order raises CorruptionError (with the path
    and the byte offset of the line at fault)."""
    lines = data.split(b"\n")
    if len(lines) < 3 or lines[-1] != b"":
        raise CorruptionError(path, 0, "the epoch file needs a count, a CRC and line ends")
    expected = _decimal(lines[0], path, 0)
    offset = len(lines[0]) + 1
    expected_crc = _decimal(lines[1], path, offset)
    offset += len(lines[1]) + 1
    body_start = offset
    entries: list[EpochEntry] = []
    for line in lines[2:-1]:
        epoch, sep, start = line.partition(b"-")
        if not sep:
            raise CorruptionError(path, offset, f"not <epoch>-<startOffset>: {line!r}")
        entry = EpochEntry(_decimal(epoch, path, offset), _decimal(start, path, offset))
        if entries and entry.epoch <= entries[-1].epoch:
            raise CorruptionError(path, offset, f"epoch {entry.epoch} after {entries[-1].epoch}")
        entries.append(entry)
        offset += len(line) + 1
    if len(entries) != expected:
        raise CorruptionError(path, 0, f"expected {expected} entries, found {len(entries)}")
    truth = crc32(data[body_start:])
    if expected_crc != NOT_CHECK_CRC and truth != expected_crc:
        raise CorruptionError(path, body_start, f"crc {truth} does not match {expected_crc}")
    return entries


def _decimal(text: bytes, path: str, offset: int) -> int:
    if not text.isdigit():
        raise CorruptionError(path, offset, f"not a decimal number: {text!r}")
    return int(text)


def read_epoch_file(path: str) -> list[EpochEntry]:
    """The entries of ``path``, else of ``path.bak`` when the file is missing or corrupt (as
    ``CheckpointFile.read``); no file at all is an empty list. Both corrupt raises."""
    data = read_file(path)
    if data is not None:
        try:
            return decode_epoch_file(data, path)
        except CorruptionError:
            backup = read_file(path + BACKUP_SUFFIX)
            if backup is None:
                raise
            return decode_epoch_file(backup, path + BACKUP_SUFFIX)
    backup = read_file(path + BACKUP_SUFFIX)
    return [] if backup is None else decode_epoch_file(backup, path + BACKUP_SUFFIX)


def write_epoch_file(path: str, entries: Sequence[EpochEntry]) -> None:
    """Persist the whole list atomically (the old file becomes ``.bak``). An empty list also
    empties the ``.bak``, so that no reader falls back to the entries just truncated."""
    data = encode_epoch_file(entries)
    if not entries:
        write_atomically(path + BACKUP_SUFFIX, data)
    write_atomically(path, data, keep_backup=bool(entries))


def truncate_suffix_by_offset(entries: Sequence[EpochEntry], offset: int) -> list[EpochEntry]:
    """Entries that start before ``offset`` (``truncateSuffixByOffset``)."""
    return [e for e in entries if e.start_offset < offset]


def truncate_suffix_by_epoch(entries: Sequence[EpochEntry], epoch: int) -> list[EpochEntry]:
    """Entries of epochs below ``epoch`` (``truncateSuffixByEpoch``)."""
    return [e for e in entries if e.epoch < epoch]


def end_offsets(entries: Sequence[EpochEntry], max_offset: int) -> list[int]:
    """Where each epoch ends: the next one's start, and for the last the node's max offset
    (``setLastEpochEntryEndOffset``, which leaves it open if the max is below its start)."""
    ends = [e.start_offset for e in entries[1:]]
    if entries:
        last = entries[-1]
        ends.append(max_offset if last.start_offset <= max_offset else OPEN_END_OFFSET)
    return ends


def find_consistent_point(
    local: Sequence[EpochEntry],
    local_max_offset: int,
    master: Sequence[EpochEntry],
    master_max_offset: int,
) -> int:
    """The offset up to which a slave's log agrees with the master's, or -1 when no epoch of
    the slave's is the master's with the same start (``EpochFileCache.findConsistentPoint``).

    Walk the slave's epochs from the newest; the first that the master has with the same start
    offset gives ``min(slave's end of it, master's end of it)``."""
    master_index = {e.epoch: i for i, e in enumerate(master)}
    master_ends = end_offsets(master, master_max_offset)
    local_ends = end_offsets(local, local_max_offset)
    for i in range(len(local) - 1, -1, -1):
        j = master_index.get(local[i].epoch)
        if j is not None and master[j].start_offset == local[i].start_offset:
            return min(local_ends[i], master_ends[j])
    return -1
