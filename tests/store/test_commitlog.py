from __future__ import annotations

import struct
from pathlib import Path

from rocketq.common.hashing import java_string_hash
from rocketq.common.record_layout import BLANK_MAGIC_CODE
from rocketq.store.commitlog import CommitLog, EncodedMessage, check_message_and_return_size
from rocketq.testing.store import SEGMENT_BYTES, commit_log_config
from rocketq.testing.vectors import V1_HEX
from tests.store.records import VECTOR1_PROPS, build_record


def test_append_patches_offsets_and_timestamp_to_vector1_bytes(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    cl.load()
    record = build_record("TopicTest", 3, b"Hello RocketMQ", VECTOR1_PROPS)
    result = cl.append(EncodedMessage(record, "TopicTest", 3))
    assert result.wrote_offset == 0
    assert result.queue_offset == 0
    assert result.msg_id == "7F00000100002A9F0000000000000000"
    assert cl.get_message(0, 210) == bytes.fromhex(V1_HEX)
    assert cl.topic_queue_table == {"TopicTest-3": 1}
    cl.shutdown()


def test_queue_offsets_are_per_topic_queue_and_transactions_skip(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    offsets = []
    for topic, qid, flag in [("A", 0, 0), ("A", 0, 0), ("A", 1, 0), ("A", 0, 4), ("A", 0, 0xC)]:
        rec = build_record(topic, qid, b"x", sys_flag=flag)
        offsets.append(cl.append(EncodedMessage(rec, topic, qid)).queue_offset)
    offsets.append(cl.append(EncodedMessage(build_record("A", 0, b"y"), "A", 0)).queue_offset)
    assert offsets == [0, 1, 0, 0, 0, 2]
    cl.shutdown()


def test_record_that_does_not_fit_writes_blank_and_rolls(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    body = b"b" * 20000
    results = [cl.append(EncodedMessage(build_record("T", 0, body), "T", 0)) for _ in range(4)]
    size = results[0].wrote_bytes
    assert results[3].wrote_offset == SEGMENT_BYTES  # 3 fit, the 4th rolled
    files = cl.mapped_file_queue.mapped_files
    total, magic = struct.unpack_from(">iI", files[0].view, 3 * size)
    assert magic == BLANK_MAGIC_CODE
    assert total == SEGMENT_BYTES - 3 * size
    reqs, nxt, bad = cl.read_dispatch_requests(0, check_crc=True)
    assert [r.consume_queue_offset for r in reqs] == [0, 1, 2, 3]
    assert nxt == SEGMENT_BYTES + size
    assert not bad
    cl.shutdown()


def test_batch_append_gives_consecutive_queue_offsets(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    batch = [EncodedMessage(build_record("B", 2, bytes([i])), "B", 2) for i in range(5)]
    result = cl.append_batch(batch)
    assert result.msg_num == 5
    assert result.queue_offset == 0
    reqs, _, _ = cl.read_dispatch_requests(0, check_crc=True)
    assert [r.consume_queue_offset for r in reqs] == [0, 1, 2, 3, 4]
    assert result.wrote_bytes == sum(r.msg_size for r in reqs)
    assert len(result.msg_id.split(",")) == 5
    cl.shutdown()


def test_check_message_detects_crc_size_and_magic_faults() -> None:
    rec = bytearray(bytes.fromhex(V1_HEX)) + bytes(20)
    view = memoryview(rec)
    ok = check_message_and_return_size(view, 0, len(rec), 0, check_crc=True, delay_table={})
    assert ok is not None
    assert ok.msg_size == 210
    assert ok.tags_code == 2598919
    assert ok.keys == "k1 k2"
    assert ok.uniq_key == "7F00000130391B6D358647B760000000"
    zero = check_message_and_return_size(view, 210, len(rec), 0, check_crc=True, delay_table={})
    assert zero is None
    rec[100] ^= 0xFF  # body byte
    assert check_message_and_return_size(view, 0, 230, 0, check_crc=True, delay_table={}) is None
    no_crc = check_message_and_return_size(view, 0, 230, 0, check_crc=False, delay_table={})
    assert no_crc is not None
    assert check_message_and_return_size(view, 0, 200, 0, check_crc=False, delay_table={}) is None
    view.release()


def test_java_string_hash_matches_java() -> None:
    assert java_string_hash("TagA") == 2598919
    assert java_string_hash("TopicTest#k1") == 2746024
    assert java_string_hash("") == 0
    assert java_string_hash("\U0001f600") == 1772899  # surrogate pair, as Java


def test_short_blank_record_at_file_end_is_skipped_by_the_reader(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    body = b"s" * 21750  # three records leave 10 bytes: a blank shorter than a header
    for _ in range(4):
        cl.append(EncodedMessage(build_record("T", 0, body), "T", 0))
    reqs, nxt, bad = cl.read_dispatch_requests(0, check_crc=True)
    assert len(reqs) == 4
    assert not bad
    assert nxt == cl.get_max_offset()
    assert reqs[3].commit_log_offset == SEGMENT_BYTES
    cl.shutdown()


def test_no_space_for_a_new_file_raises_create_error_and_writes_nothing(tmp_path: Path) -> None:
    import errno

    import pytest

    from rocketq.store.mapped_file import MappedFileCreateError

    def no_space(directory: str, size: int) -> None:
        raise MappedFileCreateError(errno.ENOSPC, f"no space for {size} bytes in {directory}")

    cl = CommitLog(commit_log_config(tmp_path), free_space_check=no_space)
    with pytest.raises(MappedFileCreateError):
        cl.append(EncodedMessage(build_record("T", 0, b"x"), "T", 0))
    assert cl.get_max_offset() == 0
    assert cl.topic_queue_table == {}
    assert not list((tmp_path / "commitlog").iterdir())
    cl.shutdown()
