"""SyncBatch: a checkpoint's syncs and its commit record in one call, in C and in Python. The
commit record is written only after every file synced, a failure moves no position and
writes no record, and a file in a batch cannot close until the batch is done."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.common import native_record
from rocketq.store.dispatch_checkpoint import DispatchCheckpoint, DispatchPoint
from rocketq.store.format import offset_to_file_name
from rocketq.store.mapped_file import MappedFile
from rocketq.store.sync_batch import SyncBatch
from rocketq.testing.store import new_msg, open_store

SIZE = 64 * 1024


@pytest.fixture(params=["c", "python"])
def paths(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "c" and native_record.COMPILED is None:
        pytest.skip("the C module is not built")
    before = native_record.RECORD
    native_record.use(request.param == "c")
    yield request.param
    native_record.RECORD = before


def dirty_file(directory: Path, length: int = 100) -> MappedFile:
    directory.mkdir()
    mf = MappedFile(str(directory / offset_to_file_name(0)), SIZE)
    mf.view[:length] = b"x" * length
    mf.wrote_position = length
    return mf


def test_the_files_are_synced_then_the_commit_record_is_written(tmp_path: Path, paths: str) -> None:
    files = [dirty_file(tmp_path / f"f{i}", 100 * (i + 1)) for i in range(3)]
    cp = DispatchCheckpoint(str(tmp_path))
    try:
        batch = SyncBatch()
        assert [batch.flush(mf, 0) for mf in files] == [100, 200, 300]
        assert batch.flush(files[0], 0) == 100  # a file taken twice is synced once
        assert len(batch) == 3
        assert all(mf.flushed_position == 0 for mf in files)  # not before the syncs
        cp.write(DispatchPoint(4096, 7, 64), batch)
        assert [mf.flushed_position for mf in files] == [100, 200, 300]
        assert cp.read() == DispatchPoint(4096, 7, 64)
        assert batch.flush(files[0], 0) is None  # nothing dirty any more
    finally:
        cp.close()
        for mf in files:
            mf.close()


def test_a_failed_sync_writes_no_commit_record_and_moves_no_position(
    tmp_path: Path, paths: str
) -> None:
    good, bad = dirty_file(tmp_path / "good"), dirty_file(tmp_path / "bad")
    record = tmp_path / "record"
    record.write_bytes(b"old")
    fd = os.open(record, os.O_RDWR)
    read_end, write_end = os.pipe()
    try:
        batch = SyncBatch()
        batch.flush(good, 0)
        batch.flush(bad, 0)
        os.dup2(read_end, bad.fd)  # its descriptor is now a pipe: fdatasync fails (EINVAL)
        with pytest.raises(OSError):
            batch.run(fd, b"new")
        assert record.read_bytes() == b"old"
        assert (good.flushed_position, bad.flushed_position) == (0, 0)
        assert good.hold_open()  # released after the failure
        good.release_hold()
    finally:
        os.close(fd)
        os.close(read_end)
        os.close(write_end)
        good.close()
        bad.close()


def test_a_file_in_a_batch_closes_only_once_the_batch_is_done(tmp_path: Path) -> None:
    mf = dirty_file(tmp_path / "f")
    batch = SyncBatch()
    assert batch.flush(mf, 0) == 100
    closing = threading.Thread(target=mf.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # the close waits for the batch
    assert not mf.closed
    batch.run()
    closing.join(10)
    assert mf.closed
    assert mf.flushed_position == 100
    assert SyncBatch().flush(mf, 0) is None  # a closed file is not taken


def test_a_store_checkpoint_flushes_every_queue_and_the_index_in_its_batch(
    tmp_path: Path, paths: str
) -> None:
    store = open_store(tmp_path)
    try:
        for queue_id in range(4):
            store.put_message(new_msg(queue_id=queue_id, properties={"KEYS": f"k{queue_id}"}))
        assert store.wait_for_dispatch()
        store.commit_log.mapped_file_queue.flush(0)
        assert store.checkpoint_dispatch()
        for queue_id in range(4):
            cq = store.find_consume_queue("TopicTest", queue_id, create=False)
            assert cq is not None
            mfq = cq.mapped_file_queue
            assert mfq.flushed_where == mfq.get_max_offset() == 20
        assert store.dispatch_checkpoint is not None
        written = store.dispatch_checkpoint.read()
        assert written is not None
        assert written.offset == store.get_max_phy_offset()
        assert not store.checkpoint_dispatch()  # P has not moved: nothing to do
    finally:
        store.shutdown()
