"""Recovery of the commitlog alone: valid-end scan and cut tails kept in side files."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.store.recovery import cut_tail, scan_valid_end
from rocketq.testing.store import SEGMENT_BYTES, commit_log_config
from tests.store.records import build_record


def _write(tmp_path: Path, count: int, body_size: int = 1000) -> list[int]:
    cl = CommitLog(commit_log_config(tmp_path))
    offsets = []
    for i in range(count):
        rec = build_record("T", 0, bytes([i % 251]) * body_size)
        offsets.append(cl.append(EncodedMessage(rec, "T", 0)).wrote_offset)
    cl.mapped_file_queue.flush(0)
    cl.shutdown()
    return offsets


def _reopen(tmp_path: Path) -> SimpleNamespace:
    config = commit_log_config(tmp_path)
    cl = CommitLog(config)
    cl.load()
    return SimpleNamespace(commit_log=cl, root=str(tmp_path), config=config, recovery_cut_reason="")


def _recover(store: SimpleNamespace) -> int:
    end = scan_valid_end(store, 0)  # type: ignore[arg-type]
    cut_tail(store, end)  # type: ignore[arg-type]
    return end


def test_torn_tail_is_cut_kept_in_side_file_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offsets = _write(tmp_path, 10)
    path = tmp_path / "commitlog" / f"{0:020d}"
    with open(path, "r+b") as f:  # tear the last record: keep 500 of its bytes
        f.seek(offsets[9] + 500)
        f.write(bytes(2000))
    store = _reopen(tmp_path)
    with caplog.at_level(logging.WARNING):
        end = _recover(store)
    assert end == offsets[9]
    assert store.commit_log.get_max_offset() == offsets[9]
    side = tmp_path / "truncated" / f"{0:020d}.{offsets[9]}.cut"
    assert len(side.read_bytes()) == 500
    assert str(path) in caplog.text
    assert str(offsets[9]) in caplog.text
    reqs, _, bad = store.commit_log.read_dispatch_requests(0, check_crc=True)
    assert len(reqs) == 9
    assert not bad
    store.commit_log.shutdown()
    assert Path(path).read_bytes()[offsets[9] : offsets[9] + 500] == bytes(500)


def test_flipped_body_byte_cuts_at_that_record_and_keeps_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offsets = _write(tmp_path, 10)
    path = tmp_path / "commitlog" / f"{0:020d}"
    original = Path(path).read_bytes()
    with open(path, "r+b") as f:
        f.seek(offsets[6] + 200)
        f.write(bytes([original[offsets[6] + 200] ^ 0x40]))
    store = _reopen(tmp_path)
    with caplog.at_level(logging.WARNING):
        end = _recover(store)
    assert end == offsets[6]
    side = tmp_path / "truncated" / f"{0:020d}.{offsets[6]}.cut"
    kept = side.read_bytes()
    assert len(kept) == store_end(original) - offsets[6]
    assert kept[300:] == original[offsets[6] + 300 : store_end(original)]
    assert "truncated at offset" in caplog.text
    store.commit_log.shutdown()


def store_end(data: bytes) -> int:
    return len(data.rstrip(b"\0"))


def test_files_past_the_cut_are_moved_whole_to_truncated(tmp_path: Path) -> None:
    offsets = _write(tmp_path, 200)  # about 3 files of 64 KiB
    assert offsets[-1] > 2 * SEGMENT_BYTES
    path0 = tmp_path / "commitlog" / f"{0:020d}"
    with open(path0, "r+b") as f:
        f.seek(offsets[10])
        f.write(b"\xff" * 8)
    store = _reopen(tmp_path)
    end = _recover(store)
    assert end == offsets[10]
    assert len(store.commit_log.mapped_file_queue.mapped_files) == 1
    moved = sorted(os.listdir(tmp_path / "truncated"))
    assert f"{SEGMENT_BYTES:020d}.{SEGMENT_BYTES}.cut" in moved
    assert f"{2 * SEGMENT_BYTES:020d}.{2 * SEGMENT_BYTES}.cut" in moved
    store.commit_log.shutdown()


def test_clean_store_recovers_without_cutting(tmp_path: Path) -> None:
    offsets = _write(tmp_path, 30)
    store = _reopen(tmp_path)
    end = _recover(store)
    assert end == store.commit_log.get_max_offset()
    assert end > offsets[-1]
    assert not (tmp_path / "truncated").exists()
    store.commit_log.shutdown()


def test_corrupt_first_record_keeps_every_later_file_in_truncated(tmp_path: Path) -> None:
    _write(tmp_path, 120)  # two files
    path0 = tmp_path / "commitlog" / f"{0:020d}"
    with open(path0, "r+b") as f:
        f.seek(4)
        f.write(b"\x00\x00\x00\x01")  # bad magic at offset 0
    store = _reopen(tmp_path)
    assert _recover(store) == 0
    kept = sorted(os.listdir(tmp_path / "truncated"))
    assert kept == [f"{0:020d}.0.cut", f"{SEGMENT_BYTES:020d}.{SEGMENT_BYTES}.cut"]
    assert store.commit_log.get_max_offset() == 0
    store.commit_log.shutdown()
