"""Long work shows progress: ``rocketq store check`` reports how far its commit log scan got,
step by step on a store of several commit log files, ending at the whole of it, and prints the
progress on stderr, the report on stdout."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rocketq.common.message import MessageExt
from rocketq.store.check import PROGRESS_EVERY_RECORDS, check_store
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.vectors import write_vector_store

SEGMENT_BYTES = 128 * 1024


def write_multi_file_store(root: Path, count: int) -> int:
    """``count`` small messages through the real MessageStore; returns the commit log files."""
    config = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=SEGMENT_BYTES,
        mapped_file_size_consume_queue=20 * 1000,
        store_host=("127.0.0.1", 10911),
    )
    store = MessageStore(config)
    store.load()
    store.start()
    try:
        for n in range(count):
            msg = MessageExt(topic="Big", body=b"%06d" % n, queue_id=n % 4)
            msg.store_host = ("127.0.0.1", 10911)
            assert store.put_message(msg).status.name == "PUT_OK"
        assert store.wait_for_dispatch(30.0)
    finally:
        store.shutdown()
    return len(list((root / "commitlog").iterdir()))


def test_store_check_progress_rises_to_the_commit_log_size(tmp_path: Path) -> None:
    root = str(write_vector_store(tmp_path).root)
    seen: list[tuple[int, int]] = []
    report = check_store(root, progress=lambda done, total: seen.append((done, total)))
    assert report.ok
    assert seen, "no progress reported"
    dones = [done for done, _ in seen]
    assert dones == sorted(dones)
    assert seen[-1][0] == seen[-1][1] > 0


def test_store_check_progress_steps_through_a_store_of_several_files(tmp_path: Path) -> None:
    root = tmp_path / "store"
    files = write_multi_file_store(root, 4 * PROGRESS_EVERY_RECORDS + 100)
    assert files >= 4
    seen: list[tuple[int, int]] = []
    report = check_store(str(root), progress=lambda done, total: seen.append((done, total)))
    assert report.ok, report
    assert report.records == 4 * PROGRESS_EVERY_RECORDS + 100
    total = seen[-1][1]
    steps = [done for done, _ in seen if 0 < done < total]
    assert len(steps) >= 3  # every 4096 records, before the end
    assert steps == sorted(set(steps))
    assert seen[-1][0] == total
