"""``RaftLog``: the in-memory log after the last snapshot, with the marks the Ready contract needs.

Theory of operation (etcd-io/raft's ``raftLog`` with ``unstable`` folded in)::

    snapshot.index | entries[0] ...            stable ... last_index
                   |<---- persisted ---->|<-- unstable (in the next Ready) -->|
    applied <= committed <= last_index;  snapshot.index <= applied

- ``stable`` is the last index the embedding program has persisted (``advance``). A conflicting
  append may cut below it: the next Ready then starts at the cut, and the program overwrites its
  log from that index.
- The controller's log is tiny, so the whole tail since the last snapshot stays in memory; a
  restarted node is rebuilt from its persisted snapshot, hard state and entries.
- Committed entries are never cut: an append that would is a broken invariant (raises).
"""

from __future__ import annotations

from rocketq.controller.raft.message import Entry, Snapshot


class RaftLog:
    def __init__(self, snapshot: Snapshot, entries: list[Entry], committed: int) -> None:
        if entries and entries[0].index != snapshot.index + 1:
            raise ValueError(f"entries start at {entries[0].index}, snapshot at {snapshot.index}")
        self.snapshot = snapshot
        self.entries = entries
        self.stable = self.last_index
        if not snapshot.index <= committed <= self.last_index:
            raise ValueError(f"commit {committed} outside [{snapshot.index}, {self.last_index}]")
        self.committed = committed
        self.applied = snapshot.index
        self.unstable_snapshot = False

    @property
    def first_index(self) -> int:
        return self.snapshot.index + 1

    @property
    def last_index(self) -> int:
        return self.snapshot.index + len(self.entries)

    @property
    def last_term(self) -> int:
        return self.entries[-1].term if self.entries else self.snapshot.term

    def term(self, index: int) -> int | None:
        """The term of ``index``, or None when it is compacted away or beyond the end."""
        offset = index - self.snapshot.index
        if offset == 0:
            return self.snapshot.term
        if 0 < offset <= len(self.entries):
            return self.entries[offset - 1].term
        return None

    def match_term(self, index: int, term: int) -> bool:
        return self.term(index) == term

    def is_up_to_date(self, last_index: int, last_term: int) -> bool:
        """A candidate's log is at least as up to date as ours (Raft paper section 5.4.1)."""
        return (last_term, last_index) >= (self.last_term, self.last_index)

    def slice(self, low: int, high: int) -> list[Entry]:
        """Entries [low, high), which must lie after the snapshot."""
        base = self.snapshot.index + 1
        return self.entries[low - base : high - base]

    def append(self, entry: Entry) -> None:
        self.entries.append(entry)

    def maybe_append(
        self, prev_index: int, prev_term: int, committed: int, entries: tuple[Entry, ...]
    ) -> int | None:
        """Append a leader's entries after (prev_index, prev_term) if that entry matches (the
        AppendEntries consistency check); return the last new index, or None on a mismatch."""
        if not self.match_term(prev_index, prev_term):
            return None
        last_new = prev_index + len(entries)
        for position, entry in enumerate(entries):
            if entry.index <= self.snapshot.index:
                continue  # already in the snapshot, hence committed and equal
            existing = self.term(entry.index)
            if existing == entry.term:
                continue
            if existing is not None:
                if entry.index <= self.committed:
                    raise AssertionError(f"conflict at committed index {entry.index}")
                del self.entries[entry.index - self.first_index :]
                self.stable = min(self.stable, entry.index - 1)
            self.entries.extend(entries[position:])
            break
        self.commit_to(min(committed, last_new))
        return last_new

    def commit_to(self, index: int) -> bool:
        if index > self.committed:
            if index > self.last_index:
                raise AssertionError(f"commit {index} beyond last index {self.last_index}")
            self.committed = index
            return True
        return False

    def unstable_entries(self) -> list[Entry]:
        return self.entries[self.stable - self.snapshot.index :]

    def next_committed_entries(self) -> list[Entry]:
        return self.slice(self.applied + 1, self.committed + 1)

    def restore(self, snapshot: Snapshot) -> None:
        """Replace everything with a leader's snapshot (InstallSnapshot, Raft paper section 7)."""
        self.snapshot = snapshot
        self.entries = []
        self.committed = self.applied = self.stable = snapshot.index
        self.unstable_snapshot = True

    def compact(self, index: int, data: bytes) -> None:
        """Drop the entries up to ``index``, which the program has applied and snapshotted."""
        if not self.snapshot.index < index <= self.applied:
            raise ValueError(f"compact to {index} outside ({self.snapshot.index}, {self.applied}]")
        term = self.term(index)
        assert term is not None
        del self.entries[: index - self.snapshot.index]
        self.snapshot = Snapshot(index, term, data)
