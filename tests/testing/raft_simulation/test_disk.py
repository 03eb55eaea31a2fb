"""The simulated disk keeps what was synced and loses, or tears, what was not."""

from __future__ import annotations

import random

from rocketq.controller.raft import Entry, HardState, Snapshot
from rocketq.testing.raft_simulation.disk import SimDisk

ENTRIES = tuple(Entry(i, 1, b"x") for i in range(1, 6))


def test_a_crash_keeps_every_synced_write() -> None:
    disk = SimDisk()
    disk.write_entries(ENTRIES)
    disk.write_hard_state(HardState(1, 1, 3))
    disk.sync()
    disk.crash(random.Random(0))
    restored = disk.restored()
    assert restored.entries == list(ENTRIES)
    assert restored.hard_state == HardState(1, 1, 3)


def test_a_crash_loses_unsynced_writes_or_keeps_a_torn_prefix() -> None:
    outcomes = set()
    for seed in range(50):
        disk = SimDisk()
        disk.write_entries(ENTRIES)
        disk.write_hard_state(HardState(1, 1, 5))
        disk.crash(random.Random(seed))
        restored = disk.restored()
        assert restored.entries == list(ENTRIES[: len(restored.entries)])
        if restored.hard_state.commit:
            assert len(restored.entries) == 5  # the hard state was written after the entries
        outcomes.add(len(restored.entries))
    assert 0 in outcomes
    assert len(outcomes) > 2  # torn appends keep a prefix


def test_an_append_overwrites_the_log_from_its_first_index() -> None:
    disk = SimDisk()
    disk.write_entries(ENTRIES)
    disk.write_entries((Entry(3, 2, b"y"),))
    disk.sync()
    assert [(e.index, e.term) for e in disk.restored().entries] == [(1, 1), (2, 1), (3, 2)]


def test_a_compaction_snapshot_keeps_the_tail_and_an_installed_one_replaces_the_log() -> None:
    disk = SimDisk()
    disk.write_entries(ENTRIES)
    disk.compact(Snapshot(3, 1, b"s"))
    assert [e.index for e in disk.restored().entries] == [4, 5]
    disk.write_snapshot(Snapshot(4, 9, b"t"))
    disk.sync()
    restored = disk.restored()
    assert (restored.entries, restored.snapshot.index, restored.hard_state.commit) == ([], 4, 4)
