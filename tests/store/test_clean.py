from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

from rocketq.store.clean import CleanCommitLogService, disk_used_ratio, used_space_ratio
from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.testing.store import SEGMENT_BYTES, commit_log_config
from tests.store.records import build_record

HOUR_MS = 3_600_000


def _store(tmp_path: Path, now_ms: int, files: int) -> SimpleNamespace:
    config = commit_log_config(tmp_path, file_reserved_time_h=1, delete_when="04", ts=now_ms)
    config = config.replace(clock_ms=lambda: now_ms, delete_files_batch_max=2)
    cl = CommitLog(config)
    while len(cl.mapped_file_queue.mapped_files) < files:
        cl.append(EncodedMessage(build_record("T", 0, b"q" * 20000), "T", 0))
    store = SimpleNamespace(config=config, commit_log=cl, disk_full=False)
    _age_files(store, 0)  # written "now" by the store's clock, whatever the wall clock says
    return store


def _age_files(store: SimpleNamespace, hours: float) -> None:
    """Set every file's mtime ``hours`` before the store's (fake) clock."""
    old = store.config.clock_ms() / 1000 - hours * 3600
    for mf in store.commit_log.mapped_file_queue.mapped_files:
        os.utime(mf.file_name, (old, old))


def _at_hour(hour: int) -> int:
    t = time.localtime()
    return int(time.mktime((t.tm_year, t.tm_mon, t.tm_mday, hour, 30, 0, 0, 0, -1)) * 1000)


def test_expired_files_are_deleted_only_at_delete_when_hour(tmp_path: Path) -> None:
    store = _store(tmp_path, _at_hour(10), 4)
    _age_files(store, 30)
    svc = CleanCommitLogService(store)  # type: ignore[arg-type]
    svc.used_ratio = lambda _path: 0.10
    assert svc.run_once() == 0
    store.config = store.config.replace(clock_ms=lambda: _at_hour(4))
    assert svc.run_once() == 2  # batch max 2
    assert svc.run_once() == 1  # never the last file
    assert store.commit_log.get_min_offset() == 3 * SEGMENT_BYTES
    store.commit_log.shutdown()


def test_disk_pressure_deletes_at_any_hour_and_forcibly_above_85_percent(tmp_path: Path) -> None:
    store = _store(tmp_path, _at_hour(10), 3)
    svc = CleanCommitLogService(store)  # type: ignore[arg-type]
    svc.used_ratio = lambda _path: 0.80  # above 75 %, files are young: nothing goes
    assert svc.run_once() == 0
    svc.used_ratio = lambda _path: 0.87  # clean immediately, regardless of age
    assert svc.run_once() == 2
    assert not store.disk_full
    svc.used_ratio = lambda _path: 0.95
    svc.run_once()
    assert store.disk_full
    store.commit_log.shutdown()


def test_the_used_ratio_is_rocketmqs_and_leaves_out_roots_reserve(tmp_path: Path) -> None:
    gib = 1 << 30
    # 252 GiB in all, 180 GiB free of which 30 usable (150 reserved): df's Use% is 71 %,
    # where used / total would read 88 % and force a clean-up of young files
    assert used_space_ratio(252 * gib, 180 * gib, 30 * gib) == 0.71
    assert used_space_ratio(100, 50, 50) == 0.5
    assert used_space_ratio(3, 2, 2) == 0.34  # 1/3 rounded up to a whole percent
    assert used_space_ratio(0, 0, 0) == -1.0
    st = os.statvfs(tmp_path)
    expected = used_space_ratio(
        st.f_blocks * st.f_frsize, st.f_bfree * st.f_frsize, st.f_bavail * st.f_frsize
    )
    assert disk_used_ratio(str(tmp_path / "not" / "yet")) == expected
