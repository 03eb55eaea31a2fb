"""check_store on the vector store (rocketq.testing.vectors), corrupted stores, MessageStore's."""

from __future__ import annotations

import dataclasses
import os
import shutil
import struct
from pathlib import Path

from rocketq.common.message_decoder import encode_message
from rocketq.store import StoreConfig
from rocketq.store.check import check_store
from rocketq.testing.vectors import (
    NEXT_FREE_OFFSET,
    VectorStore,
    cq_unit,
    message,
    record,
    write_vector_store,
)

SEG = 4096


def patch(path: Path, position: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def flip(path: Path, position: int) -> None:
    byte = path.read_bytes()[position]
    patch(path, position, bytes([byte ^ 0xFF]))


def reasons(store: VectorStore, *, require_consume_queues: bool = True) -> list[str]:
    report = check_store(str(store.root), require_consume_queues=require_consume_queues)
    return [p.reason for p in report.problems]


def second_file_record(queue_offset: int = 2, phy: int = SEG) -> bytes:
    """V1's message again, in TopicTest/3 at queue offset 2, written at ``phy``."""
    msg = message(1)
    msg.queue_offset, msg.commitlog_offset = queue_offset, phy
    return bytes(encode_message(msg))


def add_second_file(store: VectorStore, first_tail: bytes | None) -> None:
    """A second commitlog file with one record, its CQ unit; ``first_tail`` ends file one."""
    if first_tail is not None:
        patch(store.commitlog, NEXT_FREE_OFFSET, first_tail)
    rec = second_file_record()
    (store.root / "commitlog" / f"{SEG:020d}").write_bytes(rec.ljust(SEG, b"\0"))
    patch(store.queue3, 40, cq_unit(SEG, len(rec), 2598919))


def blank_record() -> bytes:
    return struct.pack(">iI", SEG - NEXT_FREE_OFFSET, 0xCBD43194)


# ---------------------------------------------------------------------- a healthy store


def test_the_vector_store_passes_with_every_part_counted(tmp_path: Path) -> None:
    report = check_store(str(write_vector_store(tmp_path).root))
    assert report.ok, str(report)
    assert (report.records, report.crc_checked) == (3, 3)
    assert (report.consume_queue_units, report.index_entries, report.expired) == (3, 8, 0)
    assert report.data_end == NEXT_FREE_OFFSET
    assert str(report).endswith("\nOK")


def test_a_blank_record_ends_a_file_and_the_next_file_is_walked(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    add_second_file(store, blank_record())
    report = check_store(str(tmp_path))
    assert report.ok, str(report)
    assert report.records == 4
    assert report.data_end == SEG + len(second_file_record())


def test_a_preallocated_zero_file_after_the_data_is_normal(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    (store.root / "commitlog" / f"{SEG:020d}").write_bytes(bytes(SEG))
    report = check_store(str(tmp_path))
    assert report.ok, str(report)
    assert report.data_end == NEXT_FREE_OFFSET


def test_the_index_slot_count_is_inferred_when_the_default_does_not_fit(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path, slots=50, entries=200)
    report = check_store(str(store.root))
    assert report.ok, str(report)
    assert report.index_entries == 8


def test_a_prepared_transaction_record_needs_no_consume_queue_unit(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    msg = message(1)
    msg.sys_flag, msg.queue_offset, msg.commitlog_offset = 0x4, 7, NEXT_FREE_OFFSET
    patch(store.commitlog, NEXT_FREE_OFFSET, bytes(encode_message(msg)))
    assert check_store(str(tmp_path)).ok
    msg.sys_flag = 0x8  # a committed one does
    patch(store.commitlog, NEXT_FREE_OFFSET, bytes(encode_message(msg)))
    assert reasons(store) == ["record TopicTest/3 offset 7 has no consume queue unit"]


def test_a_topic_without_a_queue_dir_is_only_reported_when_queues_are_required(
    tmp_path: Path,
) -> None:
    store = write_vector_store(tmp_path)
    shutil.rmtree(store.schedule_queue.parent.parent)
    assert reasons(store) == ["record SCHEDULE_TOPIC_XXXX/2 offset 0 has no consume queue unit"]
    assert reasons(store, require_consume_queues=False) == []


def test_a_delay_queue_accepts_any_delivery_time_from_the_store_time_on(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.schedule_queue, 12, struct.pack(">q", 1700000005050))
    assert check_store(str(tmp_path)).ok
    patch(store.schedule_queue, 12, struct.pack(">q", 1700000005049))
    assert reasons(store) == [
        "SCHEDULE_TOPIC_XXXX/2 unit 0: delivery time 1700000005049 before the store time"
        " 1700000005050",
        "record SCHEDULE_TOPIC_XXXX/2 offset 0 has no consume queue unit",
    ]


def test_units_and_entries_below_the_first_commitlog_file_are_expired(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    add_second_file(store, blank_record())
    store.commitlog.unlink()
    report = check_store(str(tmp_path))
    assert report.ok, str(report)
    assert report.records == 1
    assert report.expired == 3 + 8


def test_store_path_commit_log_comes_from_the_config(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path / "root")
    elsewhere = tmp_path / "cl"
    (store.root / "commitlog").rename(elsewhere)
    assert not check_store(str(store.root)).ok
    config = dataclasses.replace(StoreConfig(), store_path_commit_log=str(elsewhere))
    assert check_store(str(store.root), config=config).ok


# ---------------------------------------------------------------------- corruption


def test_a_missing_middle_commitlog_file_and_an_odd_file_size_are_reported(
    tmp_path: Path,
) -> None:
    store = write_vector_store(tmp_path)
    (store.root / "commitlog" / f"{3 * SEG:020d}").write_bytes(bytes(SEG))
    (store.root / "commitlog" / f"{4 * SEG:020d}").write_bytes(bytes(100))
    found = [(Path(p.path).name, p.reason) for p in check_store(str(tmp_path)).problems]
    assert found == [
        (f"{3 * SEG:020d}", f"the previous file ends at {SEG}: files are missing or overlap"),
        (f"{4 * SEG:020d}", f"file size 100, expected {SEG}"),
    ]


def test_a_flipped_body_byte_is_reported_with_path_and_offset(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    flip(store.commitlog, 210 + 90)
    report = check_store(str(tmp_path))
    assert [(p.path, p.offset, p.reason) for p in report.problems] == [
        (str(store.commitlog), 210, "body CRC mismatch")
    ]
    assert f"{store.commitlog} @ 210: body CRC mismatch" in str(report)


def test_a_record_whose_physical_offset_is_not_its_position_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.commitlog, 472 + 28, struct.pack(">q", 4096))
    report = check_store(str(tmp_path))
    assert [(p.offset, p.reason) for p in report.problems] == [(472, "PHYSICALOFFSET is 4096")]
    assert report.records == 3


def test_a_unit_pointing_between_records_is_reported_with_its_position(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.queue3, 20, cq_unit(500, 226, -1018732908))
    report = check_store(str(tmp_path))
    assert [(p.path, p.offset, p.reason) for p in report.problems] == [
        (str(store.queue3), 20, "TopicTest/3 unit 1: commitlog offset 500 is not a record start"),
        (str(store.commitlog), 472, "record TopicTest/3 offset 1 has no consume queue unit"),
    ]


def test_a_unit_pointing_at_another_queues_record_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.queue3, 0, cq_unit(210, 262, 2598919))
    assert reasons(store)[0] == "TopicTest/3 unit 0: points at SCHEDULE_TOPIC_XXXX/2 offset 0"


def test_a_consume_queue_ext_address_as_tags_code_is_not_compared(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.queue3, 20, cq_unit(472, 226, -(1 << 31) - 1))
    assert check_store(str(tmp_path)).ok
    patch(store.queue3, 20, cq_unit(472, 226, -(1 << 31)))
    assert reasons(store)[0].startswith("TopicTest/3 unit 1: tags code -2147483648")


def test_a_wrong_tag_hash_or_size_in_a_unit_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.queue3, 20, cq_unit(472, 226, 12345))
    patch(store.queue3, 0, cq_unit(0, 211, 2598919))
    found = reasons(store)
    assert "TopicTest/3 unit 0: size 211, record has 210" in found
    assert "TopicTest/3 unit 1: tags code 12345, hash of 'TagCancel' is -1018732908" in found


def test_a_gap_in_queue_offsets_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    data = store.queue3.read_bytes()
    store.queue3.write_bytes(data[:20])
    (store.queue3.parent / f"{40:020d}").write_bytes(data[20:40])
    found = reasons(store)
    assert "TopicTest/3 queue offset jumps from 1 to 2" in found
    assert "TopicTest/3 unit 2: points at TopicTest/3 offset 1" in found


def test_an_index_entry_pointing_nowhere_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.index, store.entry_position(2) + 4, struct.pack(">q", 99))
    report = check_store(str(tmp_path))
    assert [(p.path, p.offset, p.reason) for p in report.problems] == [
        (
            str(store.index),
            store.entry_position(2),
            "entry 2: commitlog offset 99 is not a record start",
        )
    ]


def test_an_index_entry_whose_hash_matches_no_key_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.index, store.entry_position(5), struct.pack(">i", 42))
    assert reasons(store) == ["entry 5: key hash 42 matches no key of the record at 210"]


def test_a_slot_past_the_index_count_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.index, 40 + 4 * 7, struct.pack(">i", 10))
    assert reasons(store) == ["slot 7 holds 10, index count is 9"]


def test_an_index_file_of_no_known_size_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    with open(store.index, "ab") as f:
        f.write(b"\0")
    assert reasons(store) == [f"size {40 + 400 + 8000 + 1} fits no index layout"]


def test_garbage_after_the_last_record_is_a_note_not_a_problem(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.commitlog, 900, b"\x01\x02\x03")
    report = check_store(str(tmp_path))
    assert report.ok, str(report)
    assert [(n.offset, n.reason) for n in report.notes] == [
        (NEXT_FREE_OFFSET, "non-zero bytes after the last record (a torn tail)")
    ]
    assert report.data_end == NEXT_FREE_OFFSET
    assert f"note: {store.commitlog} @ 698" in str(report)


def test_a_torn_last_record_ends_the_data_as_recovery_would(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    patch(store.commitlog, NEXT_FREE_OFFSET, record(1)[:100])
    report = check_store(str(tmp_path))
    assert report.ok, str(report)
    assert report.records == 3
    assert [n.offset for n in report.notes] == [NEXT_FREE_OFFSET]
    assert "TOTALSIZE 210" in report.notes[0].reason


def test_records_hidden_behind_a_bad_header_in_the_last_file_show_through_their_units(
    tmp_path: Path,
) -> None:
    store = write_vector_store(tmp_path)
    flip(store.commitlog, 210 + 5)  # V2's magic: V2 and V3 are no longer reachable
    report = check_store(str(tmp_path))
    assert report.data_end == 210
    assert "SCHEDULE_TOPIC_XXXX/2 unit 0: commitlog offset 210 is not a record start" in [
        p.reason for p in report.problems
    ]
    assert "TopicTest/3 unit 1: commitlog offset 472 is not a record start" in [
        p.reason for p in report.problems
    ]


def test_garbage_in_a_non_last_file_is_reported_and_later_files_still_checked(
    tmp_path: Path,
) -> None:
    store = write_vector_store(tmp_path)
    add_second_file(store, b"\xde\xad\xbe\xef" * 4)
    report = check_store(str(tmp_path))
    assert [(p.path, p.offset) for p in report.problems] == [(str(store.commitlog), 698)]
    assert "bad magic" in report.problems[0].reason
    assert report.records == 4


def test_a_zero_header_before_a_later_file_is_reported(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    add_second_file(store, None)
    report = check_store(str(tmp_path))
    assert [(p.path, p.offset, p.reason) for p in report.problems] == [
        (str(store.commitlog), 698, "zero header before the blank record")
    ]
    assert report.records == 4


def test_a_store_written_by_message_store_passes(tmp_path: Path) -> None:
    from rocketq.testing import store as support

    store = support.open_store(tmp_path / "s")
    for i in range(400):
        props = {"TAGS": f"T{i % 3}", "KEYS": f"k{i} shared", "UNIQ_KEY": f"U{i}"}
        store.put_message(
            support.new_msg(queue_id=i % 4, body=os.urandom(i % 300), properties=props)
        )
    store.shutdown()
    report = check_store(str(tmp_path / "s"))
    assert report.ok, str(report)
    assert report.records == 400
    assert report.consume_queue_units == 400
    assert report.index_entries == 1200
    assert len(os.listdir(tmp_path / "s" / "commitlog")) >= 2  # the walk crossed a file


def test_message_store_delay_and_transaction_records_pass_and_a_flip_is_found(
    tmp_path: Path,
) -> None:
    from rocketq.testing import store as support

    store = support.open_store(tmp_path / "s")
    offsets = []
    for i in range(300):
        topic, props, sys_flag = "TopicTest", {"TAGS": f"T{i % 5}", "KEYS": f"k{i}"}, 0
        if i % 7 == 0:
            topic, props = "SCHEDULE_TOPIC_XXXX", {**props, "DELAY": str(1 + i % 18)}
        elif i % 11 == 0:
            sys_flag = 0x4  # prepared: no consume queue unit
        msg = support.new_msg(
            topic=topic, queue_id=i % 3, body=os.urandom(50 + i), properties=props
        )
        msg.sys_flag = sys_flag
        result = store.put_message(msg)
        assert result.is_ok
        assert result.append_result is not None
        offsets.append(result.append_result.wrote_offset)
    store.shutdown()
    report = check_store(str(tmp_path / "s"))
    assert report.ok, str(report)
    assert report.records == 300
    assert report.consume_queue_units == 300 - len([i for i in range(300) if i % 11 == 0 and i % 7])
    commitlog = tmp_path / "s" / "commitlog"
    target = offsets[150]
    (path,) = [p for p in commitlog.iterdir() if int(p.name) <= target < int(p.name) + 64 * 1024]
    flip(path, target - int(path.name) + 120)  # inside the body (IPv4 hosts: body at 88)
    report = check_store(str(tmp_path / "s"))
    assert [(p.path, p.offset, p.reason) for p in report.problems] == [
        (str(path), target, "body CRC mismatch")
    ]


def test_a_schedule_topic_record_with_delay_zero_keeps_its_tags_hash(tmp_path: Path) -> None:
    from rocketq.testing import store as support

    store = support.open_store(tmp_path / "s")
    props = {"TAGS": "TagA", "DELAY": "0"}
    store.put_message(support.new_msg(topic="SCHEDULE_TOPIC_XXXX", properties=props))
    store.shutdown()
    report = check_store(str(tmp_path / "s"))
    assert report.ok, str(report)
