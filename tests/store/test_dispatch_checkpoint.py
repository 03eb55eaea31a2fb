"""The dispatch checkpoint bounds an abnormal recovery by what was not checkpointed: a writer
killed after it was written restarts scanning from it, loses nothing, and a checkpoint the
commitlog no longer matches (a rewritten log, a torn write) is ignored, falling back to
RocketMQ's file rule."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.check import check_store
from rocketq.store.dispatch_checkpoint import (
    FILE_NAME,
    DispatchCheckpoint,
    DispatchPoint,
    decode,
    encode,
)
from rocketq.testing.store import SEGMENT_BYTES, new_msg, open_store
from rocketq.testing.store_writer import TOPIC, store_config
from rocketq.testing.wait import until_sync


def test_encode_decode_and_a_torn_write() -> None:
    point = DispatchPoint(123_456_789, 0xDEADBEEF, 64)
    data = encode(point)
    assert decode(data) == point
    torn = data[:20] + bytes(len(data) - 20)
    assert decode(torn) is None
    assert decode(b"RQDISP01") is None


def _write_until_checkpointed(root: Path, past: int) -> tuple[dict[tuple[int, int], bytes], int]:
    """Run the crash writer until its dispatch checkpoint passes ``past``, then SIGKILL it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocketq.testing.store_writer", str(root), "0", "2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    acked: dict[tuple[int, int], bytes] = {}
    assert proc.stdout is not None
    stdout = proc.stdout

    def reader() -> None:
        for line in stdout:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "ack":
                acked[(int(parts[1]), int(parts[2]))] = bytes.fromhex(parts[3])

    t = threading.Thread(target=reader)
    t.start()
    path = root / FILE_NAME

    def checkpointed() -> bool:
        point = DispatchCheckpoint(str(root)).read() if path.exists() else None
        return point is not None and point.offset > past

    try:
        assert until_sync(checkpointed, timeout_s=60), "no dispatch checkpoint in 60 s"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        t.join(30)
        stdout.close()
    point = DispatchCheckpoint(str(root)).read()
    assert point is not None
    return acked, point.offset


def _reload_and_check(root: Path, acked: dict[tuple[int, int], bytes]) -> int:
    store = MessageStore(store_config(str(root)))
    store.load()
    try:
        assert store.recovered_abnormally
        for (qid, qoff), body in acked.items():
            res = store.get_message("check", TOPIC, qid, qoff, 1)
            assert res.message_buffers, (qid, qoff, res.status)
            assert decode_message(res.message_buffers[0]).body == body
        start = store.recovery_scan_start
    finally:
        store.shutdown()
    assert check_store(str(root)).ok
    return start


def test_abnormal_recovery_starts_at_the_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "store"
    acked, offset = _write_until_checkpointed(root, past=4 * SEGMENT_BYTES)
    start = _reload_and_check(root, acked)
    assert start == offset  # not the start of a commitlog file: what was not checkpointed


def test_a_checkpoint_the_commitlog_no_longer_matches_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "store"
    acked, offset = _write_until_checkpointed(root, past=2 * SEGMENT_BYTES)
    point = DispatchCheckpoint(str(root)).read()
    assert point is not None
    forged = DispatchPoint(point.offset, point.tail_crc ^ 1, point.tail_len)
    (root / FILE_NAME).write_bytes(encode(forged))  # as if the log were cut and rewritten
    start = _reload_and_check(root, acked)
    assert start % SEGMENT_BYTES == 0  # RocketMQ's rule: a whole file
    assert start < offset


def test_a_torn_record_past_the_checkpoint_is_cut(tmp_path: Path) -> None:
    root = tmp_path / "s"
    store = open_store(root)
    offsets = []
    for i in range(20):
        r = store.put_message(new_msg(body=b"z" * 1000))
        assert r.append_result is not None
        offsets.append(r.append_result.wrote_offset)
        if i == 9:
            assert store.wait_for_dispatch()
            store.checkpoint_dispatch()
            saved = (root / FILE_NAME).read_bytes()
    store.shutdown()
    (root / FILE_NAME).write_bytes(saved)  # the checkpoint as a crash after put 10 left it
    (root / "abort").write_text("1")
    with open(root / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(offsets[15] + 150)
        f.write(b"\xee" * 30)
    store = open_store(root)
    try:
        assert store.recovered_abnormally
        assert store.recovery_scan_start == offsets[10]
        assert store.get_max_offset_in_queue("TopicTest", 0) == 15
    finally:
        store.shutdown()


def _queue_units(root: Path) -> dict[tuple[str, int], list[tuple[int, int, int] | None]]:
    store = MessageStore(store_config(str(root)))
    store.load()
    try:
        return {
            (cq.topic, cq.queue_id): [
                cq.get_unit(n)
                for n in range(cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue())
            ]
            for cq in store.consume_queues.all_queues()
        }
    finally:
        store.shutdown()


def test_after_a_kill_the_queues_match_rocketmqs_rule(tmp_path: Path) -> None:
    """Consume-queue recovery that starts each file's check past the checkpoint ends with the
    units RocketMQ's rule (every unit checked, the checkpoint removed) ends with."""
    root = tmp_path / "store"
    _write_until_checkpointed(root, past=3 * SEGMENT_BYTES)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / FILE_NAME).unlink()
    ours, theirs = _queue_units(root), _queue_units(copy)
    assert ours == theirs
    assert sum(len(units) for units in ours.values()) > 200  # more than one queue file's worth
