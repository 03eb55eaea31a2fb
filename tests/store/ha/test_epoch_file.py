"""epochFileCheckpoint: RocketMQ's bytes and CRC, atomic writes with a .bak fallback, and
findConsistentPoint (RocketMQ's EpochFileCacheTest samples and the no-match case)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.errors import CorruptionError
from rocketq.store.ha.epoch_file import (
    OPEN_END_OFFSET,
    EpochEntry,
    crc32,
    decode_epoch_file,
    encode_epoch_file,
    find_consistent_point,
    read_epoch_file,
    truncate_suffix_by_epoch,
    truncate_suffix_by_offset,
    write_epoch_file,
)

# CheckpointFileTest writes <7, 7000>, <8, 8000>; CRC32("7-7000\n8-8000\n") & 0x7FFFFFFF
GOLDEN = b"2\n773307083\n7-7000\n8-8000\n"
ENTRIES = [EpochEntry(7, 7000), EpochEntry(8, 8000)]


def test_epoch_file_bytes_are_rocketmqs() -> None:
    assert encode_epoch_file(ENTRIES) == GOLDEN
    assert decode_epoch_file(GOLDEN) == ENTRIES
    assert crc32(b"7-7000\n8-8000\n") == 773307083
    assert encode_epoch_file([]) == b"0\n0\n"


def test_a_crc_of_zero_is_not_checked() -> None:
    assert decode_epoch_file(b"2\n0\n7-7000\n8-8000\n") == ENTRIES


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"2\n773307084\n7-7000\n8-8000\n", 12),  # CRC
        (b"3\n773307083\n7-7000\n8-8000\n", 0),  # count
        (b"2\n773307083\n7-7000\n8:8000\n", 19),  # line
        (b"2\n0\n8-8000\n7-7000\n", 11),  # order
        (b"2\n773307083\n7-7000\n8-8000", 0),  # torn: no last line end
        (b"x\n0\n", 0),
        (b"", 0),
    ],
)
def test_a_damaged_epoch_file_is_corruption_with_its_offset(data: bytes, offset: int) -> None:
    with pytest.raises(CorruptionError) as raised:
        decode_epoch_file(data, "epochFileCheckpoint")
    assert raised.value.offset == offset


@given(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1)), max_size=8))
def test_epoch_file_round_trips(pairs: list[tuple[int, int]]) -> None:
    entries = [EpochEntry(e, s) for e, s in sorted(dict(pairs).items())]
    assert decode_epoch_file(encode_epoch_file(entries)) == entries


def test_write_keeps_the_old_file_as_bak_and_read_falls_back_to_it(tmp_path: Path) -> None:
    path = str(tmp_path / "epochFileCheckpoint")
    assert read_epoch_file(path) == []
    write_epoch_file(path, ENTRIES[:1])
    write_epoch_file(path, ENTRIES)
    assert (tmp_path / "epochFileCheckpoint").read_bytes() == GOLDEN
    assert read_epoch_file(path + ".bak") == ENTRIES[:1]
    (tmp_path / "epochFileCheckpoint").write_bytes(GOLDEN[:-3])  # torn by a crash elsewhere
    assert read_epoch_file(path) == ENTRIES[:1]
    (tmp_path / "epochFileCheckpoint").unlink()
    assert read_epoch_file(path) == ENTRIES[:1]
    assert not list(tmp_path.glob("*.tmp"))


def test_truncating_to_nothing_is_persisted_and_not_undone_by_the_bak(tmp_path: Path) -> None:
    path = str(tmp_path / "epochFileCheckpoint")
    write_epoch_file(path, ENTRIES)
    write_epoch_file(path, ENTRIES)
    write_epoch_file(path, truncate_suffix_by_offset(ENTRIES, 7000))
    assert read_epoch_file(path) == []
    (tmp_path / "epochFileCheckpoint").unlink()
    assert read_epoch_file(path) == []


def test_truncate_suffix() -> None:
    assert truncate_suffix_by_offset(ENTRIES, 8000) == ENTRIES[:1]
    assert truncate_suffix_by_offset(ENTRIES, 8001) == ENTRIES
    assert truncate_suffix_by_epoch(ENTRIES, 8) == ENTRIES[:1]


SLAVE = [EpochEntry(1, 100), EpochEntry(2, 300), EpochEntry(3, 500)]


@pytest.mark.parametrize(
    ("master", "master_max", "slave_max", "point"),
    [
        # EpochFileCacheTest sample 1: the last epochs differ at their start
        (
            [EpochEntry(1, 100), EpochEntry(2, 300), EpochEntry(3, 450)],
            OPEN_END_OFFSET,
            OPEN_END_OFFSET,
            450,
        ),
        # sample 2: same epochs; the shorter log ends the agreement
        ([EpochEntry(1, 100), EpochEntry(2, 300), EpochEntry(3, 500)], 600, 700, 600),
        # sample 3: no epoch with the same start: no consistent point
        ([EpochEntry(1, 200), EpochEntry(2, 500)], OPEN_END_OFFSET, 700, -1),
        # sample 4: the master moved on to epoch 4 at 800; the slave ends at 700
        (
            [EpochEntry(1, 100), EpochEntry(2, 300), EpochEntry(3, 500), EpochEntry(4, 800)],
            900,
            700,
            700,
        ),
        ([], 0, 700, -1),
    ],
)
def test_find_consistent_point(
    master: list[EpochEntry], master_max: int, slave_max: int, point: int
) -> None:
    assert find_consistent_point(SLAVE, slave_max, master, master_max) == point


def test_an_old_master_with_an_unreplicated_tail_is_cut_where_the_new_epoch_began() -> None:
    old_master = [EpochEntry(1, 0), EpochEntry(2, 1000)]  # wrote to 1500 in epoch 2
    new_master = [EpochEntry(1, 0), EpochEntry(2, 1000), EpochEntry(3, 1200)]
    assert find_consistent_point(old_master, 1500, new_master, 4000) == 1200
    assert find_consistent_point([], 0, new_master, 4000) == -1
