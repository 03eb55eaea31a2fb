"""``SimDisk``: one node's disk, with writes that are durable only once synced.

Writes queue as pending operations; ``sync`` makes them durable (write + fsync, and for the
hard state and snapshots the temp-file, fsync, rename, fsync-directory sequence, which is
atomic). ``crash`` models a power loss: a random prefix of the pending operations may have
reached the platter anyway (the kernel writes back in order), and the last log append may be
torn (its final records fail their CRC at recovery and are cut). What recovery reads back is
``restored()``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rocketq.controller.raft import Entry, HardState, RestoredState, Snapshot


@dataclass(slots=True)
class SimDisk:
    hard_state: HardState = field(default_factory=HardState)
    snapshot: Snapshot = field(default_factory=Snapshot)
    entries: list[Entry] = field(default_factory=list)
    pending: list[tuple[str, object]] = field(default_factory=list)
    torn_writes: int = 0

    def write_entries(self, entries: tuple[Entry, ...]) -> None:
        self.pending.append(("entries", entries))

    def write_hard_state(self, hard_state: HardState) -> None:
        self.pending.append(("hard_state", hard_state))

    def write_snapshot(self, snapshot: Snapshot) -> None:
        self.pending.append(("snapshot", snapshot))

    def sync(self) -> None:
        for kind, value in self.pending:
            self._apply(kind, value)
        self.pending.clear()

    def crash(self, rng: random.Random) -> None:
        """Lose the unsynced writes, except a random prefix; tear the last one if it appends."""
        if self.pending:
            survivors = rng.randrange(0, len(self.pending) + 1)
            for kind, value in self.pending[:survivors]:
                self._apply(kind, value)
            if survivors < len(self.pending):
                kind, value = self.pending[survivors]
                if kind == "entries" and isinstance(value, tuple) and value:
                    self.torn_writes += 1
                    self._apply(kind, value[: rng.randrange(0, len(value))])
        self.pending.clear()

    def compact(self, snapshot: Snapshot) -> None:
        """Persist ``snapshot`` atomically, then drop the log it covers (both synced)."""
        self.sync()
        self._apply("snapshot", snapshot)

    def restored(self) -> RestoredState:
        # a snapshot is committed state, durable before the hard state of the same Ready
        commit = max(self.hard_state.commit, self.snapshot.index)
        hard_state = self.hard_state._replace(commit=commit)
        return RestoredState(hard_state, self.snapshot, list(self.entries))

    def _apply(self, kind: str, value: object) -> None:
        if kind == "hard_state":
            assert isinstance(value, HardState)
            self.hard_state = value
        elif kind == "snapshot":
            assert isinstance(value, Snapshot)
            base = value.index
            if self.entries and self.entries[-1].index > base:
                # keep the tail after a compaction snapshot; an installed one replaces the log
                tail = [e for e in self.entries if e.index > base]
                keep = self._term_at(base) == value.term
                self.entries = tail if keep else []
            else:
                self.entries = []
            self.snapshot = value
        else:
            assert isinstance(value, tuple)
            if value:
                first = value[0].index
                del self.entries[max(0, first - self.snapshot.index - 1) :]
                self.entries.extend(value)

    def _term_at(self, index: int) -> int | None:
        if index == self.snapshot.index:
            return self.snapshot.term
        offset = index - self.snapshot.index - 1
        if 0 <= offset < len(self.entries):
            return self.entries[offset].term
        return None
