"""EpochFileCache: the epoch entries in memory, persisted to ``epochFileCheckpoint`` on every
change (RocketMQ 5's ``store/ha/autoswitch/EpochFileCache``). Thread-safe: the HA client, the
connections' writers and the role changes read and change it from their own threads.

Every change is written through ``epoch_file.write_epoch_file`` (atomic, fsynced) before it
is visible in memory, so a reader never acts on an entry that a crash could take back.
"""

from __future__ import annotations

import threading

from rocketq.store.ha.epoch_file import (
    OPEN_END_OFFSET,
    EpochEntry,
    read_epoch_file,
    truncate_suffix_by_epoch,
    truncate_suffix_by_offset,
    write_epoch_file,
)


class EpochFileCache:
    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: list[EpochEntry] = read_epoch_file(path)

    def all_entries(self) -> list[EpochEntry]:
        with self._lock:
            return list(self._entries)

    def entry_count(self) -> int:
        with self._lock:
            return len(self._entries)

    def last_epoch(self) -> int:
        """The newest epoch, or -1 with no entry (``lastEpoch``)."""
        with self._lock:
            return self._entries[-1].epoch if self._entries else -1

    def last_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[-1] if self._entries else None

    def first_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[0] if self._entries else None

    def get_entry(self, epoch: int) -> EpochEntry | None:
        with self._lock:
            return next((e for e in self._entries if e.epoch == epoch), None)

    def next_entry(self, epoch: int) -> EpochEntry | None:
        """The first entry of an epoch above ``epoch`` (``nextEntry``)."""
        with self._lock:
            return next((e for e in self._entries if e.epoch > epoch), None)

    def end_offset(self, epoch: int) -> int:
        """Where ``epoch`` ends: the next entry's start, OPEN_END_OFFSET for the last."""
        with self._lock:
            later = [e.start_offset for e in self._entries if e.epoch > epoch]
        return later[0] if later else OPEN_END_OFFSET

    def find_epoch_entry_by_offset(self, offset: int) -> EpochEntry | None:
        """The entry whose [start, end) holds ``offset`` (``findEpochEntryByOffset``)."""
        with self._lock:
            entries = list(self._entries)
        for i, entry in enumerate(entries):
            end = entries[i + 1].start_offset if i + 1 < len(entries) else OPEN_END_OFFSET
            if entry.start_offset <= offset < end:
                return entry
        return None

    def append_entry(self, entry: EpochEntry) -> bool:
        """Append a newer epoch that starts at or after the last one (``appendEntry``);
        False (and nothing written) otherwise."""
        with self._lock:
            if self._entries:
                last = self._entries[-1]
                if entry.epoch <= last.epoch or entry.start_offset < last.start_offset:
                    return False
            self._replace([*self._entries, entry])
        return True

    def truncate_suffix_by_offset(self, offset: int) -> None:
        with self._lock:
            kept = truncate_suffix_by_offset(self._entries, offset)
            if len(kept) != len(self._entries):
                self._replace(kept)

    def truncate_suffix_by_epoch(self, epoch: int) -> None:
        with self._lock:
            kept = truncate_suffix_by_epoch(self._entries, epoch)
            if len(kept) != len(self._entries):
                self._replace(kept)

    def _replace(self, entries: list[EpochEntry]) -> None:
        write_epoch_file(self.path, entries)
        self._entries = entries
