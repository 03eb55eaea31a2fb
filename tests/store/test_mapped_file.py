from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocketq.errors import CorruptionError
from rocketq.store.mapped_file import MappedFile
from rocketq.store.mapped_file_queue import MappedFileQueue, offset_to_file_name

SIZE = 16 * 1024


def test_mapped_file_is_created_full_size_and_preallocated(tmp_path: Path) -> None:
    path = str(tmp_path / offset_to_file_name(0))
    mf = MappedFile(path, SIZE)
    try:
        st = os.stat(path)
        assert st.st_size == SIZE
        assert st.st_blocks * 512 >= SIZE  # preallocated, not sparse
        assert mf.append_message(b"abc")
        assert mf.wrote_position == 3
        assert mf.flushed_position == 0
        assert mf.flush() == 3
        assert mf.read(0, 3) == b"abc"
        assert not mf.append_message(b"x" * SIZE)
    finally:
        mf.close()
    assert Path(path).read_bytes()[:3] == b"abc"


def test_mapped_file_flush_waits_for_least_pages(tmp_path: Path) -> None:
    mf = MappedFile(str(tmp_path / offset_to_file_name(0)), SIZE)
    try:
        mf.append_message(b"x" * 5000)
        assert mf.flush(least_pages=2) == 0
        mf.append_message(b"y" * 4000)
        assert mf.flush(least_pages=2) == 9000
    finally:
        mf.close()


def test_mapped_file_close_releases_views(tmp_path: Path) -> None:
    mf = MappedFile(str(tmp_path / offset_to_file_name(0)), SIZE)
    view = mf.select_view(0, 10)
    view.release()
    mf.close()
    assert mf.closed


def test_mapped_file_queue_rolls_and_finds_by_offset(tmp_path: Path) -> None:
    q = MappedFileQueue(str(tmp_path / "cl"), SIZE)
    q.load()
    for _ in range(3):
        mf = q.get_last_mapped_file_or_create(0)
        mf.append_message(b"z" * SIZE)
    assert [os.path.basename(m.file_name) for m in q.mapped_files] == [
        offset_to_file_name(0),
        offset_to_file_name(SIZE),
        offset_to_file_name(2 * SIZE),
    ]
    assert q.get_max_offset() == 3 * SIZE
    found = q.find_mapped_file_by_offset(SIZE + 5)
    assert found is not None
    assert found.file_from_offset == SIZE
    assert q.find_mapped_file_by_offset(10 * SIZE) is None
    assert q.flush(0) is True
    assert q.flushed_where == 3 * SIZE
    assert q.flush(0) is False
    q.truncate_dirty_files(SIZE + 100)
    assert len(q.mapped_files) == 2
    assert q.get_max_offset() == SIZE + 100
    q.shutdown()


def test_mapped_file_queue_load_fails_on_wrong_size_file(tmp_path: Path) -> None:
    d = tmp_path / "cl"
    d.mkdir()
    (d / offset_to_file_name(0)).write_bytes(b"\0" * (SIZE - 1))
    q = MappedFileQueue(str(d), SIZE)
    with pytest.raises(CorruptionError, match="expected 16384"):
        q.load()


def test_mapped_file_queue_load_deletes_empty_last_file_and_ignores_strays(
    tmp_path: Path,
) -> None:
    d = tmp_path / "cl"
    d.mkdir()
    (d / offset_to_file_name(0)).write_bytes(b"\0" * SIZE)
    (d / offset_to_file_name(SIZE)).write_bytes(b"")
    (d / "junk.txt").write_bytes(b"x")
    q = MappedFileQueue(str(d), SIZE)
    q.load()
    assert len(q.mapped_files) == 1
    assert not (d / offset_to_file_name(SIZE)).exists()
    q.shutdown()


def test_delete_expired_file_by_time_keeps_last_and_stops_at_first_young(
    tmp_path: Path,
) -> None:
    q = MappedFileQueue(str(tmp_path / "cl"), SIZE)
    for _ in range(4):
        q.get_last_mapped_file_or_create(0).append_message(b"z" * SIZE)
    now = q.mapped_files[0].last_modified_ms()
    os.utime(q.mapped_files[2].file_name, (now / 1000 + 100, now / 1000 + 100))
    deleted = q.delete_expired_file_by_time(1000, now + 5000, clean_immediately=False, max_count=10)
    assert deleted == 2
    assert q.get_min_offset() == 2 * SIZE
    assert q.delete_expired_file_by_time(0, 0, clean_immediately=True, max_count=10) == 1
    assert len(q.mapped_files) == 1
    q.shutdown()


FILE_LIMIT_SCRIPT = """
import resource, signal, sys, os
from rocketq.store.mapped_file import MappedFile, MappedFileCreateError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (32 * 1024, 32 * 1024))
path = os.path.join(sys.argv[1], "00000000000000000000")
try:
    MappedFile(path, 64 * 1024)
except MappedFileCreateError as exc:
    print("refused", exc.errno, os.path.exists(path))
"""


def test_file_that_cannot_be_preallocated_is_refused_and_removed(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", FILE_LIMIT_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert out[0] == "refused"
    assert out[2] == "False"
