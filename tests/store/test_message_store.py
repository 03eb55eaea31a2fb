from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from rocketq.store import GetMessageStatus, PutMessageStatus
from rocketq.store.dispatch_checkpoint import FILE_NAME
from rocketq.testing.store import STORE_TS, new_msg, open_store
from rocketq.testing.vectors import V1_HEX


def _bodies(store: object, topic: str, qid: int, offset: int = 0, n: int = 32) -> list[bytes]:
    from rocketq.common.message_decoder import decode_message

    result = store.get_message("g", topic, qid, offset, n)  # type: ignore[attr-defined]
    return [decode_message(b).body for b in result.message_buffers]


def test_put_then_get_returns_messages_in_queue_order(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        for i in range(5):
            r = store.put_message(new_msg(body=f"m{i}".encode(), properties={"TAGS": "TagA"}))
            assert r.status is PutMessageStatus.PUT_OK
            assert r.append_result is not None
            assert r.append_result.queue_offset == i
        assert store.wait_for_dispatch()
        assert _bodies(store, "TopicTest", 0) == [f"m{i}".encode() for i in range(5)]
        assert store.get_max_offset_in_queue("TopicTest", 0) == 5
        assert store.get_min_offset_in_queue("TopicTest", 0) == 0
        assert store.get_min_offset_in_queue("NeverWritten", 3) == 0  # as RocketMQ answers
        assert store.get_max_offset_in_queue("NeverWritten", 3) == 0
        got = store.get_message("g", "TopicTest", 0, 5, 32)
        assert got.status is GetMessageStatus.OFFSET_OVERFLOW_ONE
        assert store.get_message("g", "TopicTest", 0, 9, 32).status is (
            GetMessageStatus.OFFSET_OVERFLOW_BADLY
        )
        assert store.get_message("g", "Nope", 0, 0, 32).status is (
            GetMessageStatus.NO_MATCHED_LOGIC_QUEUE
        )
        found = store.get_message("g", "TopicTest", 0, 3, 32)
        assert found.status is GetMessageStatus.FOUND
        assert found.next_begin_offset == 5
        assert found.message_count == 2
    finally:
        store.shutdown()
    assert not (tmp_path / "abort").exists()


def test_bad_input_is_refused_with_a_status_and_nothing_written(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        before = store.get_max_phy_offset()
        cases = [
            (new_msg(topic="bad topic"), PutMessageStatus.MESSAGE_ILLEGAL),
            (new_msg(queue_id=-1), PutMessageStatus.MESSAGE_ILLEGAL),
            (new_msg(body=b"x" * (4 * 1024 * 1024 + 1)), PutMessageStatus.MESSAGE_ILLEGAL),
            (new_msg(properties={"K": "v" * 40000}), PutMessageStatus.PROPERTIES_SIZE_EXCEEDED),
        ]
        for msg, status in cases:
            assert store.put_message(msg).status is status
        assert store.get_max_phy_offset() == before
    finally:
        store.shutdown()


def test_golden_vector1_record_and_cq_entry(tmp_path: Path) -> None:
    store = open_store(tmp_path, clock_ms=lambda: STORE_TS)
    try:
        props = {
            "UNIQ_KEY": "7F00000130391B6D358647B760000000",
            "CLUSTER": "DefaultCluster",
            "TAGS": "TagA",
            "KEYS": "k1 k2",
            "WAIT": "true",
        }
        r = store.put_message(new_msg("TopicTest", 3, b"Hello RocketMQ", props))
        assert r.status is PutMessageStatus.PUT_OK
        assert store.wait_for_dispatch()
        record = store.select_one_message_by_offset(0)
        assert record == bytes.fromhex(V1_HEX)
    finally:
        store.shutdown()
    cq = (tmp_path / "consumequeue" / "TopicTest" / "3" / f"{0:020d}").read_bytes()
    assert cq[:20].hex() == "0000000000000000000000d2000000000027a807"


def test_reopen_after_clean_shutdown_keeps_queue_offsets(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for i in range(30):
        store.put_message(new_msg(queue_id=i % 3, body=b"b" * 3000))
    store.shutdown()
    store = open_store(tmp_path)
    try:
        r = store.put_message(new_msg(queue_id=0))
        assert r.append_result is not None
        assert r.append_result.queue_offset == 10
        assert store.wait_for_dispatch()
        assert len(_bodies(store, "TopicTest", 1)) == 10
    finally:
        store.shutdown()


@pytest.mark.parametrize("damage", ["consumequeue", "index", "checkpoint"])
def test_deleted_files_are_rebuilt_from_the_commitlog(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "s"
    store = open_store(root)
    for i in range(60):
        store.put_message(new_msg(queue_id=i % 2, body=b"z" * 2000, properties={"KEYS": f"k{i}"}))
    store.shutdown()
    target = root / damage
    if target.is_dir():
        shutil.rmtree(target)
    else:
        os.unlink(target)
    store = open_store(root)
    try:
        assert store.wait_for_dispatch()
        assert len(_bodies(store, "TopicTest", 0, 0, 64)) == 30
        assert store.get_max_offset_in_queue("TopicTest", 1) == 30
        found = store.query_message("TopicTest", "k7", 10, 0, 2**62)
        assert len(found.message_buffer_list) == 1
    finally:
        store.shutdown()


def test_abnormal_recovery_redispatches_and_cuts_torn_tail(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "s"
    store = open_store(root)
    offsets = []
    for _ in range(20):
        r = store.put_message(new_msg(body=b"y" * 1000))
        assert r.append_result is not None
        offsets.append(r.append_result.wrote_offset)
    store.shutdown()
    (root / "abort").write_text("1")
    # without the dispatch checkpoint (a store RocketMQ wrote): RocketMQ's file rule rescans
    # the whole file; test_dispatch_checkpoint.py covers recovery from the checkpoint
    (root / FILE_NAME).unlink()
    with open(root / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(offsets[19] + 150)  # inside the body: the CRC check finds it
        f.write(b"\xee" * 30)
    with caplog.at_level(logging.WARNING):
        store = open_store(root)
    try:
        assert store.recovered_abnormally
        assert store.get_max_offset_in_queue("TopicTest", 0) == 19
        assert len(_bodies(store, "TopicTest", 0, 0, 64)) == 19
        assert f"{offsets[19]}" in caplog.text
        assert any(p.name.endswith(".cut") for p in (root / "truncated").iterdir())
    finally:
        store.shutdown()


def test_a_slave_keeps_the_consumers_offset_where_a_master_corrects_it(tmp_path: Path) -> None:
    """DefaultMessageStore#nextOffsetCorrection: a slave's queues trail its master's (its copy
    and its dispatch), so an offset past them is kept; a master moves it into range."""
    from rocketq.store.config import BrokerRole

    store = open_store(tmp_path)
    try:
        for i in range(3):
            assert store.put_message(new_msg(body=b"m%d" % i)).status is PutMessageStatus.PUT_OK
        assert store.wait_for_dispatch()
        as_master = [
            store.get_message("g", "TopicTest", 0, 9, 32).next_begin_offset,  # past the end
            store.get_message("g", "TopicTest", 1, 7, 32).next_begin_offset,  # no queue yet
        ]
    finally:
        store.shutdown()
    assert as_master == [3, 0]
    slave = open_store(tmp_path, broker_role=BrokerRole.SLAVE)
    try:
        past = slave.get_message("g", "TopicTest", 0, 9, 32)
        assert past.status is GetMessageStatus.OFFSET_OVERFLOW_BADLY
        assert past.next_begin_offset == 9  # not 3: a consumer moved there would replay 3..8
        assert slave.get_message("g", "TopicTest", 1, 7, 32).next_begin_offset == 7
        assert _bodies(slave, "TopicTest", 0) == [b"m0", b"m1", b"m2"]
    finally:
        slave.shutdown()
