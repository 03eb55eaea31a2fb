"""``get_message_body`` (the unit walk in C, ``collect_messages``) against ``get_message``,
the reference: the same status, offsets, suggestion and records for every offset of a queue
whose consume queue and commitlog roll several times, with and without a TAG code set, after
the oldest commitlog files were deleted, and with a unit pointing past the written end."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.common import native_record
from rocketq.common.hashing import java_string_hash
from rocketq.store.format import CQ_STORE_UNIT_STRUCT
from rocketq.store.message_store import MessageStore
from rocketq.store.results import GetMessageResult, GetMessageStatus
from rocketq.testing.collect_fuzz import FakeFile
from rocketq.testing.store import new_msg, open_store

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
    pytest.mark.usefixtures("c_record_paths"),  # the C walk is the subject
]

TAGS = ("A", "B", "C")


class CodeFilter:
    """A TAG filter as the broker's ExpressionMessageFilter applies it to a unit."""

    def __init__(self, codes: tuple[int, ...]) -> None:
        self.codes = codes

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        assert tags_code is not None
        code = tags_code & 0xFFFFFFFF
        return (code - (1 << 32) if code >= 1 << 31 else code) in self.codes

    def is_matched_by_commit_log(self, record: bytes) -> bool:
        return True


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MessageStore]:
    s = open_store(tmp_path, flush_disk_type="ASYNC_FLUSH")
    rng = random.Random(22)
    for i in range(450):
        tag = TAGS[rng.randrange(3)] if i % 50 else "Z"
        body = bytes([i % 251]) * rng.randrange(1, 1500)
        s.put_message(new_msg("T", i % 2, body, {"TAGS": tag}))
    assert s.wait_for_dispatch()
    try:
        yield s
    finally:
        s.shutdown()


def fields(r: GetMessageResult) -> tuple[object, ...]:
    return (
        r.status,
        r.next_begin_offset,
        r.min_offset,
        r.max_offset,
        r.message_count,
        r.suggest_pulling_from_slave,
    )


def same_on_both(
    store: MessageStore, queue_id: int, offset: int, max_count: int, codes: tuple[int, ...] | None
) -> GetMessageResult | None:
    """Assert the C walk equals the reference (or declines); the C result."""
    message_filter = None if codes is None else CodeFilter(codes)
    python = store.get_message("g", "T", queue_id, offset, max_count, message_filter)
    compiled = store.get_message_body("T", queue_id, offset, max_count, codes)
    if compiled is None:
        return None
    assert fields(compiled) == fields(python), (queue_id, offset, max_count, codes)
    assert compiled.body == b"".join(python.message_buffers)
    # without the page-cache check (a woken pull's read): the same walk
    unchecked = store.get_message_body("T", queue_id, offset, max_count, codes, False)
    assert unchecked is not None
    assert fields(unchecked) == fields(compiled)
    assert unchecked.body == compiled.body
    return compiled


CODE_SETS: list[tuple[int, ...] | None] = [
    None,
    (java_string_hash("A"),),
    (java_string_hash("B"), java_string_hash("C")),
    (java_string_hash("Z"),),
    (1 << 40, java_string_hash("nope")),
    (),
]


@pytest.mark.parametrize("codes", CODE_SETS)
def test_every_offset_walks_as_get_message(
    store: MessageStore, codes: tuple[int, ...] | None
) -> None:
    walked = 0
    for queue_id in (0, 1):
        end = store.get_max_offset_in_queue("T", queue_id)
        assert end == 225
        for offset in range(end):
            for max_count in (1, 7, 32, 200):
                walked += same_on_both(store, queue_id, offset, max_count, codes) is not None
    assert walked == 2 * 225 * 4  # every pull was walked in C (all resident, none declined)


def test_out_of_range_and_missing_queues_are_left_to_get_message(store: MessageStore) -> None:
    assert store.get_message_body("T", 0, 225, 32, None) is None  # OFFSET_OVERFLOW_ONE
    assert store.get_message_body("T", 0, 226, 32, None) is None
    assert store.get_message_body("T", 0, -1, 32, None) is None
    assert store.get_message_body("T", 7, 0, 32, None) is None  # no such queue
    assert store.get_message_body("Nope", 0, 0, 32, None) is None


def test_a_transfer_byte_limit_stops_the_walk_where_get_message_stops(tmp_path: Path) -> None:
    s = open_store(
        tmp_path, flush_disk_type="ASYNC_FLUSH", max_transfer_bytes_on_message_in_memory=3000
    )
    try:
        for i in range(40):
            s.put_message(new_msg("T", 0, b"x" * (900 + i)))
        assert s.wait_for_dispatch()
        for offset in range(40):
            got = same_on_both(s, 0, offset, 32, None)
            assert got is not None
            assert 1 <= got.message_count <= 3
    finally:
        s.shutdown()


def test_deleted_commitlog_files_walk_as_message_was_removing(store: MessageStore) -> None:
    queue = store.commit_log.mapped_file_queue
    deleted = queue.delete_expired_file_by_time(0, 0, clean_immediately=True, max_count=2)
    assert deleted == 2
    removing = 0
    for offset in range(0, 225, 3):
        for codes in CODE_SETS:
            got = same_on_both(store, 0, offset, 32, codes)
            assert got is not None
            removing += got.status is GetMessageStatus.MESSAGE_WAS_REMOVING
    assert removing > 0


def test_units_past_the_written_commitlog_walk_as_get_message(store: MessageStore) -> None:
    cq = store.find_consume_queue("T", 0, create=False)
    assert cq is not None
    first, last = cq.mapped_file_queue.mapped_files[0], cq.mapped_file_queue.mapped_files[-1]
    beyond = store.commit_log.get_max_offset() + 64
    phy, _size, tags = CQ_STORE_UNIT_STRUCT.unpack_from(first.view, 5 * 20)
    CQ_STORE_UNIT_STRUCT.pack_into(first.view, 5 * 20, beyond, 100, tags)
    CQ_STORE_UNIT_STRUCT.pack_into(first.view, 6 * 20, phy, 1 << 30, tags)  # past its file
    for unit in (223, 224):  # the queue's last two units: nothing found after them
        pos = unit * 20 - last.file_from_offset
        _phy, _size, last_tags = CQ_STORE_UNIT_STRUCT.unpack_from(last.view, pos)
        CQ_STORE_UNIT_STRUCT.pack_into(last.view, pos, beyond, 100, last_tags)
    for offset in [*range(12), 222, 223, 224]:
        for codes in CODE_SETS:
            assert same_on_both(store, 0, offset, 32, codes) is not None
    tail = store.get_message_body("T", 0, 223, 32, None)
    assert tail is not None
    assert (tail.status, tail.next_begin_offset, tail.body) == (
        GetMessageStatus.MESSAGE_WAS_REMOVING,
        225,
        b"",
    )
    CQ_STORE_UNIT_STRUCT.pack_into(first.view, 5 * 20, phy, -5, tags)  # a negative size: declined
    assert store.get_message_body("T", 0, 5, 32, None) is None


def test_a_unit_before_offset_zero_is_read_inside_its_file() -> None:
    """A commitlog file whose offsets are negative (made-up files, as the fuzzer's): the
    record is read at its place in that file, never before the file's buffer (ASan found
    ``phy % file_size``, -1 here, read one byte before it)."""
    compiled = native_record.COMPILED
    assert compiled is not None
    cq = bytearray(CQ_STORE_UNIT_STRUCT.size)
    CQ_STORE_UNIT_STRUCT.pack_into(cq, 0, -1, 1, 0)  # the record at -1, one byte
    cl = bytearray(b"\xab" * 63 + b"\xcd")
    walked = compiled.collect_messages(
        [FakeFile(memoryview(cq), 0, len(cq))], CQ_STORE_UNIT_STRUCT.size, 0,
        [FakeFile(memoryview(cl), -64, 64)], 64, -64,
        0, 1, 16000, 32, 1 << 20, None, False,
    )  # fmt: skip
    assert walked is not None
    status, _, body, count, _ = walked
    assert (status, count, body) == (1, 1, b"\xcd")  # FOUND: the file's last byte
