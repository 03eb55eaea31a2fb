"""ConsumeQueue recovery from a dispatch checkpoint: each file's unit check starts at the first
unit past the checkpoint's offset, and gives what RocketMQ's rule (every unit checked) gives
wherever the checkpoint's promise holds; a checkpoint that is absent, torn or no longer matches
the commitlog falls back to RocketMQ's rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.dispatch_checkpoint import FILE_NAME, DispatchPoint, decode, encode
from rocketq.store.format import CQ_STORE_UNIT_SIZE
from rocketq.store.paths import consume_queue_dir
from rocketq.testing.store import new_msg, open_store

UNITS = 10
FILE = UNITS * CQ_STORE_UNIT_SIZE
SIZE = 100  # every record of these queues: unit n points at n * SIZE


def _written_queue(root: Path, count: int, first: int = 0) -> None:
    """Units ``first`` .. ``count`` - 1 (fillers before ``first``), flushed and closed."""
    cq = ConsumeQueue("T", 0, str(root), FILE)
    cq.load()
    cq.recover()
    for n in range(first, count):
        req = DispatchRequest("T", 0, n * SIZE, SIZE, 0, 0, n, "", None, 0, 0, {})
        cq.put_message_position_info_wrapper(req)
    cq.flush()
    cq.shutdown()


def _zero_unit(root: Path, index: int) -> None:
    file_from = index * CQ_STORE_UNIT_SIZE // FILE * FILE
    with open(root / "T" / "0" / f"{file_from:020d}", "r+b") as f:
        f.seek(index * CQ_STORE_UNIT_SIZE - file_from)
        f.write(bytes(CQ_STORE_UNIT_SIZE))


def _recovered(root: Path, below: int | None) -> tuple[int, int]:
    """(max queue offset, max physical end) after ``recover(below)``."""
    cq = ConsumeQueue("T", 0, str(root), FILE)
    cq.load()
    cq.recover(below)
    try:
        return int(cq.get_max_offset_in_queue()), int(cq.get_max_physic_offset())
    finally:
        cq.shutdown()


def test_a_unit_under_the_checkpoint_is_not_read(tmp_path: Path) -> None:
    _written_queue(tmp_path, 35)
    # under the checkpoint (unit 25's offset), and not a unit the file's binary search probes
    # (25, 22, 24): the checkpoint's promise is trusted, the unit is not read
    _zero_unit(tmp_path, 21)
    assert _recovered(tmp_path, 25 * SIZE) == (35, 35 * SIZE)
    assert _recovered(tmp_path, None) == (21, 21 * SIZE)  # RocketMQ's rule reads every unit


@pytest.mark.parametrize("below", [0, SIZE, 10 * SIZE, 25 * SIZE, 27 * SIZE, 28 * SIZE])
def test_a_hole_past_the_checkpoint_is_cut_as_by_rocketmqs_rule(tmp_path: Path, below: int) -> None:
    _written_queue(tmp_path, 35)
    _zero_unit(tmp_path, 28)  # a unit past the checkpoint: a crash may have left it unwritten
    assert _recovered(tmp_path, below) == (28, 28 * SIZE)


@pytest.mark.parametrize("below", [0, 3 * SIZE, 15 * SIZE, 16 * SIZE, 27 * SIZE, 40 * SIZE])
def test_filler_units_give_what_rocketmqs_rule_gives(tmp_path: Path, below: int) -> None:
    _written_queue(tmp_path, 28, first=15)  # a rebuilt queue: fillers up to unit 15
    assert _recovered(tmp_path, below) == _recovered(tmp_path, None) == (28, 28 * SIZE)


@pytest.mark.parametrize("count", [10, 20, 30, 31])
def test_full_files_and_a_file_edge(tmp_path: Path, count: int) -> None:
    _written_queue(tmp_path, count)
    for below in (0, (count - 1) * SIZE, count * SIZE):
        assert _recovered(tmp_path, below) == (count, count * SIZE)


# ------------------------------------------------------------------ a whole store


def _store_with_a_saved_checkpoint(root: Path) -> tuple[bytes, int]:
    """250 messages on queue 0 (one commitlog file, 100-unit consume queue files); the dispatch
    checkpoint as after message 200 is saved, the store shut down, then left as a crash left
    it: the abort file and the saved checkpoint."""
    store = open_store(root)
    saved = b""
    for i in range(250):
        store.put_message(new_msg(body=b"m%03d" % i))
        if i == 199:
            assert store.wait_for_dispatch()
            store.checkpoint_dispatch()
            saved = (root / FILE_NAME).read_bytes()
    assert store.wait_for_dispatch()
    store.shutdown()
    (root / FILE_NAME).write_bytes(saved)
    (root / "abort").write_text("1")
    point = decode(saved)
    assert point is not None
    return saved, point.offset


def _zero_store_unit(root: Path, index: int) -> None:
    file_from = index * CQ_STORE_UNIT_SIZE // (100 * 20) * (100 * 20)
    path = os.path.join(consume_queue_dir(str(root)), "TopicTest", "0", f"{file_from:020d}")
    with open(path, "r+b") as f:
        f.seek(index * CQ_STORE_UNIT_SIZE - file_from)
        f.write(bytes(CQ_STORE_UNIT_SIZE))


def _readable(store: MessageStore, offset: int) -> bool:
    """Whether queue offset ``offset`` gives its own message (a bad unit is skipped over)."""
    res = store.get_message("g", "TopicTest", 0, offset, 1)
    return (
        bool(res.message_buffers)
        and len(res.message_buffers[0]) > 0
        and (decode_message(res.message_buffers[0]).body == b"m%03d" % offset)
    )


def test_a_trusted_checkpoint_skips_the_units_under_it_and_checks_those_past(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    _store_with_a_saved_checkpoint(root)  # stale: 50 messages were dispatched after it
    # under the checkpoint and not probed by the binary search of its file (units 100-199)
    _zero_store_unit(root, 110)
    _zero_store_unit(root, 220)  # past it: cut, then re-dispatched from the checkpoint
    store = open_store(root)
    try:
        assert store.recovered_abnormally
        assert store.get_max_offset_in_queue("TopicTest", 0) == 250
        cq = store.consume_queues.find("TopicTest", 0)
        assert cq is not None
        assert cq.get_unit(110) == (0, 0, 0)  # the checkpoint's promise trusted: not read
        assert all(_readable(store, n) for n in range(200, 250))
    finally:
        store.shutdown()


@pytest.mark.parametrize("checkpoint", ["absent", "torn", "mismatched"])
def test_without_a_trusted_checkpoint_every_unit_is_checked(
    tmp_path: Path, checkpoint: str
) -> None:
    root = tmp_path / "s"
    saved, _ = _store_with_a_saved_checkpoint(root)
    if checkpoint == "absent":
        (root / FILE_NAME).unlink()
    elif checkpoint == "torn":
        (root / FILE_NAME).write_bytes(saved[:20] + bytes(len(saved) - 20))
    else:  # the commitlog no longer holds the bytes it was taken after
        point = decode(saved)
        assert point is not None
        forged = DispatchPoint(point.offset, point.tail_crc ^ 1, point.tail_len)
        (root / FILE_NAME).write_bytes(encode(forged))
    _zero_store_unit(root, 150)
    store = open_store(root)
    try:
        assert store.recovered_abnormally
        assert store.recovery_scan_start == 0  # RocketMQ's file rule: the only file
        assert store.get_max_offset_in_queue("TopicTest", 0) == 250
        assert all(_readable(store, n) for n in range(250))  # cut at 150, then rebuilt
    finally:
        store.shutdown()
