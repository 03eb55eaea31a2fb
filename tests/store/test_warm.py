"""The commitlog's pages faulted in ahead of the writer (store/warm.py, _native/populate.c)."""

from __future__ import annotations

import ctypes
import dataclasses
import mmap
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rocketq.common import native_record
from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store import warm as warm_module
from rocketq.store.check import check_store
from rocketq.store.config import StoreConfig
from rocketq.store.mapped_file import MappedFile
from rocketq.store.mapped_file_queue import offset_to_file_name
from rocketq.testing import warm_writer
from rocketq.testing.record_paths import record_paths
from rocketq.testing.store import commit_log_config, new_msg
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.skipif(native_record.COMPILED is None, reason="C module not built")

PAGE = mmap.PAGESIZE
MIB = 1024 * 1024
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]


def resident(mf: MappedFile, start: int, end: int) -> list[bool]:
    """mincore over the pages of ``[start, end)`` of the file's mapping: in the page cache?"""
    anchor = ctypes.c_char.from_buffer(mf.mm)
    try:
        first, last = start // PAGE, -(-end // PAGE)
        vec = ctypes.create_string_buffer(last - first)
        rc = _libc.mincore(ctypes.addressof(anchor) + first * PAGE, (last - first) * PAGE, vec)
        assert rc == 0, os.strerror(ctypes.get_errno())
        return [bool(b & 1) for b in vec.raw]
    finally:
        del anchor  # the mapping may be closed again


def test_populate_faults_in_pages_and_changes_no_byte(tmp_path: Path) -> None:
    # a fault reads around it (read_ahead_kb, 8 MiB here) and residency is per folio: the
    # range is checked resident, and 16 MiB and more away from it not
    size = 64 * MIB
    mf = MappedFile(str(tmp_path / offset_to_file_name(0)), size)
    try:
        assert not any(resident(mf, 0, size))
        mf.write_at(5000, b"data")
        before = mf.read(0, 4 * PAGE)
        assert mf.populate(PAGE + 10, 9 * PAGE + 10) is True
        assert all(resident(mf, 2 * PAGE, 9 * PAGE))
        assert not any(resident(mf, 24 * MIB, size))
        assert mf.read(0, 4 * PAGE) == before
        assert mf.populate(40 * MIB, 41 * MIB, write=False) is True
        assert all(resident(mf, 40 * MIB, 41 * MIB))
        assert mf.read(40 * MIB, MIB) == bytes(MIB)
        assert mf.populate(size + PAGE, size + 9 * PAGE) is None  # past the file: nothing
    finally:
        mf.close()
    assert mf.populate(0, PAGE) is None  # closed


def test_populate_refuses_ranges_outside_the_buffer() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    buf = mmap.mmap(-1, 4 * PAGE)
    try:
        for offset, length in ((-1, 1), (0, 4 * PAGE + 1), (4 * PAGE + 1, 0), (1, 1 << 62)):
            with pytest.raises(ValueError):
                compiled.populate(buf, offset, length, True)
        with pytest.raises(BufferError):
            compiled.populate(b"read-only" * PAGE, 0, PAGE, True)
        assert compiled.populate(buf, 0, 4 * PAGE, True) is True
    finally:
        buf.close()


def _config(root: Path, **overrides: object) -> StoreConfig:
    """1 MiB commitlog files (unless overridden) and a stopped clock."""
    return commit_log_config(root, **{"mapped_file_size_commit_log": 256 * PAGE, **overrides})


def test_the_window_ahead_is_populated_and_the_thread_stops_with_the_store(
    tmp_path: Path,
) -> None:
    ahead = 16 * MIB  # past the writer's own read-around (8 MiB)
    config = _config(
        tmp_path, mapped_file_size_commit_log=64 * MIB, commit_log_warm_ahead_bytes=ahead
    )
    store = MessageStore(config)
    store.load()
    store.start()
    warm = store.warm_service
    try:
        assert warm.is_alive
        store.put_message(new_msg(body=b"b" * 3000))
        end = store.get_max_phy_offset()
        # the window is refilled once it is down by a step
        assert until_sync(lambda: warm.warmed_offset >= end + ahead - warm.step, 10.0)
        mf = store.commit_log.mapped_file_queue.get_last_mapped_file()
        assert mf is not None
        assert all(resident(mf, -(-end // PAGE) * PAGE, end + ahead - warm.step))
        assert not any(resident(mf, 40 * MIB, mf.file_size))  # the window and read-around
        # the writer moves more than a step: the window follows
        for _ in range(1500):
            store.put_message(new_msg(body=b"c" * 3000))
        end = store.get_max_phy_offset()
        assert end > warm.step
        assert until_sync(lambda: warm.warmed_offset >= end + ahead - warm.step, 10.0)
        assert all(resident(mf, -(-end // PAGE) * PAGE, end + ahead - warm.step))
    finally:
        store.shutdown()
    assert not warm.is_alive


def test_no_window_no_thread(tmp_path: Path) -> None:
    config = _config(tmp_path, mapped_file_size_commit_log=64 * MIB, commit_log_warm_ahead_bytes=0)
    store = MessageStore(config)
    store.load()
    store.start()
    try:
        store.put_message(new_msg())
        assert not store.warm_service.is_alive
        mf = store.commit_log.mapped_file_queue.get_last_mapped_file()
        assert mf is not None
        assert not any(resident(mf, 16 * MIB, mf.file_size))
    finally:
        store.shutdown()


def test_a_whole_file_is_warmed_with_warm_maped_file_enable(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        mapped_file_size_commit_log=32 * MIB,
        commit_log_warm_ahead_bytes=0,
        warm_mapped_file_enable=True,
    )
    store = MessageStore(config)
    store.load()
    store.start()
    try:
        store.put_message(new_msg(body=b"w" * 3000))
        mf = store.commit_log.mapped_file_queue.get_last_mapped_file()
        assert mf is not None
        assert until_sync(lambda: store.warm_service.warmed_offset == mf.file_size, 20.0)
        assert all(resident(mf, PAGE, mf.file_size))
    finally:
        store.shutdown()


def _write_store(root: Path, **overrides: object) -> tuple[bytes, int]:
    """The commitlog's bytes after 900 puts, and the bytes the warm-up populated."""
    store = MessageStore(_config(root, **overrides))
    store.load()
    store.start()
    try:
        for n in range(900):  # about 1.5 MiB: a roll of the 256-page files
            body = bytes([65 + n % 26]) * (100 + (n * 37) % 2900)
            store.put_message(new_msg(queue_id=n % 3, body=body))
        assert store.wait_for_dispatch()
    finally:
        store.shutdown()
    folder = Path(root, "commitlog")
    data = b"".join(p.read_bytes() for p in sorted(folder.iterdir()))
    return data, store.warm_service.populated_bytes


def test_commitlog_bytes_are_the_same_with_and_without_the_warm_up(tmp_path: Path) -> None:
    warmed = _write_store(tmp_path / "warm", commit_log_warm_ahead_bytes=8 * PAGE)
    whole = _write_store(tmp_path / "whole", warm_mapped_file_enable=True)
    cold = _write_store(tmp_path / "cold", commit_log_warm_ahead_bytes=0)
    with record_paths(False):  # ROCKETQ_NATIVE=0: populate is off with the C paths
        python = _write_store(tmp_path / "python", commit_log_warm_ahead_bytes=8 * PAGE)
    assert len(cold[0]) == 2 * 256 * PAGE  # the writes rolled into a second file
    assert cold[1] == 0
    assert python[1] == 0
    assert warmed[1] > 0
    assert whole[1] > 0
    assert warmed[0] == cold[0]
    assert whole[0] == cold[0]
    assert python[0] == cold[0]


def test_kill_right_after_a_warm_loses_no_acknowledged_message(tmp_path: Path) -> None:
    root = tmp_path / "store"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocketq.testing.warm_writer", str(root), "4000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    acks: dict[tuple[int, int], bytes] = {}
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            parts = line.split()
            if parts[0] == "ack":
                acks[(int(parts[1]), int(parts[2]))] = bytes.fromhex(parts[3])
                continue
            assert parts[0] == "warmed", line
            end, warmed = int(parts[1]), int(parts[2])
            break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
    assert len(acks) == 4000
    assert end > warm_writer.SEGMENT  # the writer rolled: the second file was warmed
    assert warmed >= end + warm_writer.AHEAD // 2
    store = MessageStore(warm_writer.store_config(str(root)))
    store.load()
    try:
        assert store.get_max_phy_offset() == end  # recovery stops at the real end
        for (qid, qoff), body in acks.items():
            res = store.get_message("check", warm_writer.TOPIC, qid, qoff, 1)
            assert res.message_buffers, (qid, qoff, res.status)
            assert decode_message(res.message_buffers[0]).body == body
    finally:
        store.shutdown()
    report = check_store(str(root))
    assert report.ok, report


def test_the_store_keys() -> None:
    config, unknown = StoreConfig.from_properties(
        {
            "warmMapedFileEnable": "true",
            "flushLeastPagesWhenWarmMapedFile": "16",
            "commitLogWarmAheadBytes": "0",
            "commitLogWarmPopulateWrite": "false",
        }
    )
    assert not unknown
    assert config.warm_mapped_file_enable
    assert config.flush_least_pages_when_warm_mapped_file == 16
    assert config.commit_log_warm_ahead_bytes == 0
    assert not config.commit_log_warm_populate_write
    assert dataclasses.replace(StoreConfig()).commit_log_warm_ahead_bytes == 32 * 1024 * 1024


def test_a_resting_thread_is_woken_by_the_next_dispatch_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_module, "IDLE_WAIT_MS", 60_000.0)  # only the wake ends a rest
    ahead = 1 * MIB
    config = _config(
        tmp_path, mapped_file_size_commit_log=64 * MIB, commit_log_warm_ahead_bytes=ahead
    )
    store = MessageStore(config)
    store.load()
    store.start()
    warm = store.warm_service
    try:
        store.put_message(new_msg())  # the file's creation wakes the thread: before the rest
        assert until_sync(lambda: warm.resting, 10.0)  # nothing written since: it rests
        for _ in range(200):  # more than a step (a quarter of the window)
            store.put_message(new_msg(body=b"d" * 3000))
        end = store.get_max_phy_offset()
        assert end > warm.step
        assert until_sync(lambda: warm.warmed_offset >= end + ahead - warm.step, 10.0)
    finally:
        store.shutdown()


def test_a_slow_writer_is_looked_at_as_its_rate_needs(tmp_path: Path) -> None:
    ahead = 32 * MIB
    config = _config(
        tmp_path, mapped_file_size_commit_log=64 * MIB, commit_log_warm_ahead_bytes=ahead
    )
    store = MessageStore(config)
    store.load()
    store.start()
    warm = store.warm_service
    try:
        store.put_message(new_msg())
        assert until_sync(lambda: warm.warmed_offset >= ahead, 10.0)
        # 1 MB/s (1,000 1 KiB messages a second): as long as the window lasts at the fastest
        # rate (32 MiB at 128 MiB/s: 250 ms), not every 10 ms
        assert warm.moving_wait_ms(1024, 1.0) == pytest.approx(250.0)
        # 160 MiB/s: half of the window's 32 MiB at that rate (100 ms)
        assert warm.moving_wait_ms(16 * MIB, 100.0) == pytest.approx(100.0, rel=0.01)
        assert warm.moving_wait_ms(0, 1.0) == warm_module.BUSY_WAIT_MS  # a new file
    finally:
        store.shutdown()
