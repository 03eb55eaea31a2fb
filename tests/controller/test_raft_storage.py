"""RaftStorage: what a restarted controller reads back, after clean stops and after crashes
(a torn append, an append whose fsync never happened, a crash between a snapshot and the log's
rewrite)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.controller.raft import Entry, HardState, Snapshot
from rocketq.controller.raft_storage import RECORD_SIZE, RaftStorage, encode_record
from rocketq.errors import ConfigError, CorruptionError


def entries(first: int, last: int, term: int = 1) -> list[Entry]:
    return [Entry(i, term, f"e{i}".encode()) for i in range(first, last + 1)]


def opened(path: Path, node_id: int = 1) -> RaftStorage:
    storage = RaftStorage(path, node_id)
    storage.open()
    return storage


def test_restart_recovers_term_vote_commit_log_and_snapshot(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 5))
    storage.save_hard_state(HardState(3, 2, 4))
    storage.save_snapshot(Snapshot(2, 1, b"state@2"))
    storage.close()

    restored = RaftStorage(tmp_path, 1).open()
    assert restored.hard_state == HardState(3, 2, 4)
    assert restored.snapshot == Snapshot(2, 1, b"state@2")
    assert restored.entries == entries(3, 5)


def test_a_fresh_store_starts_empty(tmp_path: Path) -> None:
    restored = RaftStorage(tmp_path / "new", 1).open()
    assert restored.hard_state == HardState()
    assert restored.snapshot == Snapshot()
    assert restored.entries == []


def test_append_replaces_the_log_from_its_first_index(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 6, term=1))
    storage.append(entries(4, 5, term=2))
    storage.close()
    assert RaftStorage(tmp_path, 1).open().entries == entries(1, 3) + entries(4, 5, term=2)


def test_append_that_leaves_a_gap_is_refused(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 2))
    with pytest.raises(ValueError, match="gap"):
        storage.append(entries(4, 4))


def test_open_cuts_a_torn_tail_logs_where_and_keeps_the_cut_bytes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 3))
    storage.close()
    log_path = tmp_path / "log"
    whole = log_path.stat().st_size
    torn = encode_record(Entry(4, 1, b"torn-write"))[:-3]
    with open(log_path, "ab") as f:
        f.write(torn)

    with caplog.at_level(logging.WARNING):
        restored = RaftStorage(tmp_path, 1).open()
    assert restored.entries == entries(1, 3)
    assert log_path.stat().st_size == whole
    assert (tmp_path / f"log.torn-{whole}").read_bytes() == torn
    assert f"torn tail at offset {whole}" in caplog.text
    assert str(log_path) in caplog.text


def test_open_cuts_from_the_first_record_whose_crc_fails(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 4))
    storage.close()
    log_path = tmp_path / "log"
    raw = bytearray(log_path.read_bytes())
    third = 2 * (RECORD_SIZE + 2)  # two records of 2 data bytes before it
    raw[third + RECORD_SIZE] ^= 0xFF  # flip a data byte of entry 3
    log_path.write_bytes(bytes(raw))

    restored = RaftStorage(tmp_path, 1).open()
    assert restored.entries == entries(1, 2)
    assert log_path.stat().st_size == third


def test_an_unsynced_append_lost_in_a_crash_leaves_the_synced_prefix(tmp_path: Path) -> None:
    """A crash before fdatasync loses the end of the file: simulated by truncating it back."""
    storage = opened(tmp_path)
    storage.append(entries(1, 2))
    storage.save_hard_state(HardState(1, 1, 2))
    synced = (tmp_path / "log").stat().st_size
    storage.append(entries(3, 5))
    storage.close()
    with open(tmp_path / "log", "r+b") as f:
        f.truncate(synced + 7)  # the page cache had written part of entry 3 only

    storage = RaftStorage(tmp_path, 1)
    restored = storage.open()
    assert restored.entries == entries(1, 2)
    assert restored.hard_state == HardState(1, 1, 2)
    storage.append(entries(3, 3, term=2))  # the log goes on where the valid prefix ends
    storage.close()
    assert RaftStorage(tmp_path, 1).open().entries == entries(1, 2) + entries(3, 3, term=2)


def test_a_commit_index_beyond_the_log_is_corruption(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 3))
    storage.save_hard_state(HardState(1, 1, 3))
    storage.close()
    with open(tmp_path / "log", "r+b") as f:
        f.truncate(RECORD_SIZE + 2)  # committed entries 2 and 3 gone: not a torn tail

    with pytest.raises(CorruptionError, match="commit 3 beyond last entry 1"):
        RaftStorage(tmp_path, 1).open()


def test_a_damaged_hard_state_raises_with_its_path(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.save_hard_state(HardState(2, 1, 0))
    storage.close()
    path = tmp_path / "hardstate"
    raw = bytearray(path.read_bytes())
    raw[12] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(CorruptionError) as info:
        RaftStorage(tmp_path, 1).open()
    assert info.value.path == str(path)


def test_a_store_of_another_node_is_refused(tmp_path: Path) -> None:
    storage = opened(tmp_path, node_id=1)
    storage.save_hard_state(HardState(1, 1, 0))
    storage.close()
    with pytest.raises(ConfigError, match="controller node 1, not 2"):
        RaftStorage(tmp_path, 2).open()


def test_a_damaged_snapshot_raises(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 2))
    storage.save_snapshot(Snapshot(2, 1, b"abc"))
    storage.close()
    path = tmp_path / "snapshot"
    path.write_bytes(path.read_bytes()[:-1] + b"X")
    with pytest.raises(CorruptionError, match="crc"):
        RaftStorage(tmp_path, 1).open()


def test_an_installed_snapshot_replaces_the_whole_log(tmp_path: Path) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 6, term=1))
    storage.save_snapshot(Snapshot(4, 1, b"leader's"), keep_tail=False)
    storage.close()
    restored = RaftStorage(tmp_path, 1).open()
    assert restored.snapshot == Snapshot(4, 1, b"leader's")
    assert restored.entries == []


def test_a_crash_between_snapshot_and_log_rewrite_keeps_only_an_agreeing_tail(
    tmp_path: Path,
) -> None:
    storage = opened(tmp_path)
    storage.append(entries(1, 6, term=1))
    storage.close()
    old_log = (tmp_path / "log").read_bytes()

    storage = opened(tmp_path)
    storage.save_snapshot(Snapshot(4, 1, b"compacted"))
    storage.close()
    (tmp_path / "log").write_bytes(old_log)  # the rewrite never reached the disk
    assert RaftStorage(tmp_path, 1).open().entries == entries(5, 6)

    storage = opened(tmp_path)
    storage.save_snapshot(Snapshot(5, 3, b"a leader's, of another term"), keep_tail=False)
    storage.close()
    (tmp_path / "log").write_bytes(old_log)
    assert RaftStorage(tmp_path, 1).open().entries == []


@st.composite
def append_runs(draw: st.DrawFn) -> list[list[Entry]]:
    """Appends as a Raft log sees them: each starts at or before the end of the last."""
    runs: list[list[Entry]] = []
    last, term = 0, 1
    for _ in range(draw(st.integers(1, 6))):
        first = draw(st.integers(1, last + 1))
        term += draw(st.integers(0, 1))
        count = draw(st.integers(1, 4))
        data = draw(st.lists(st.binary(max_size=12), min_size=count, max_size=count))
        runs.append([Entry(first + i, term, d) for i, d in enumerate(data)])
        last = first + count - 1
    return runs


@settings(max_examples=40, deadline=None)
@given(runs=append_runs(), cut=st.floats(0.0, 1.0))
def test_a_crash_at_any_byte_recovers_a_prefix_of_the_log(
    tmp_path_factory: pytest.TempPathFactory, runs: list[list[Entry]], cut: float
) -> None:
    path = tmp_path_factory.mktemp("raft")
    storage = opened(path)
    model: list[Entry] = []
    for run in runs:
        storage.append(run)
        del model[run[0].index - 1 :]
        model.extend(run)
    storage.close()
    size = (path / "log").stat().st_size
    with open(path / "log", "r+b") as f:
        f.truncate(int(size * cut))

    recovered = RaftStorage(path, 1).open().entries
    assert recovered == model[: len(recovered)]
    whole = sum(RECORD_SIZE + len(e.data) for e in recovered)
    assert (path / "log").stat().st_size == whole
