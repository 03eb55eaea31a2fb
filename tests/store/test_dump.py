"""The read-only walkers of rocketq.store.dump on the vector store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rocketq.common.message_decoder import encode_message
from rocketq.store import StoreConfig
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.dump import (
    CommitLogReader,
    DataEnd,
    IndexEntry,
    IndexFileInfo,
    IndexLayout,
    RecordInfo,
    format_cq_unit,
    format_record,
    iter_commitlog_records,
    iter_consume_queue,
    iter_index_entries,
    store_paths,
)
from rocketq.store.index_service import IndexService
from rocketq.testing.vectors import (
    INDEX_ENTRIES,
    INDEX_HEADER_HEX,
    NEXT_FREE_OFFSET,
    UNIQ_KEYS,
    cq_unit,
    index_file_bytes,
    message,
    write_vector_store,
)


def records(root: Path, from_offset: int = 0) -> tuple[list[RecordInfo], list[DataEnd]]:
    items = list(iter_commitlog_records(str(root), from_offset=from_offset))
    return (
        [i for i in items if isinstance(i, RecordInfo)],
        [i for i in items if isinstance(i, DataEnd)],
    )


def test_commitlog_records_carry_the_vector_fields(tmp_path: Path) -> None:
    write_vector_store(tmp_path)
    recs, ends = records(tmp_path)
    assert [
        (r.offset, r.size, r.topic, r.queue_id, r.queue_offset, r.tags, r.keys, r.body_size)
        for r in recs
    ] == [
        (0, 210, "TopicTest", 3, 0, "TagA", "k1 k2", 14),
        (210, 262, "SCHEDULE_TOPIC_XXXX", 2, 0, "TagA", "k1 k2", 16),
        (472, 226, "TopicTest", 3, 1, "TagCancel", "k1", 16),
    ]
    assert all(r.crc_ok for r in recs)
    assert [r.uniq_key for r in recs] == [UNIQ_KEYS[1], UNIQ_KEYS[2], UNIQ_KEYS[3]]
    assert [r.delay_level for r in recs] == [0, 3, 0]
    assert [r.tags_code for r in recs] == [2598919, 2598919, -1018732908]
    assert [(e.offset, e.clean, e.final) for e in ends] == [(NEXT_FREE_OFFSET, True, True)]


def test_the_walk_starts_at_from_offset(tmp_path: Path) -> None:
    write_vector_store(tmp_path)
    recs, _ = records(tmp_path, from_offset=472)
    assert [r.offset for r in recs] == [472]


def test_a_flipped_body_byte_shows_as_crc_not_ok(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    data = bytearray(store.commitlog.read_bytes())
    data[472 + 101] ^= 0x10
    store.commitlog.write_bytes(bytes(data))
    recs, _ = records(tmp_path)
    assert [r.crc_ok for r in recs] == [True, True, False]


def test_the_walk_never_writes_to_the_store(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    for path in (store.commitlog, store.queue3, store.index):
        os.chmod(path, stat.S_IRUSR)
    try:
        assert len(records(tmp_path)[0]) == 3
        assert len(list(iter_consume_queue(str(tmp_path), "TopicTest", 3))) == 2
        assert len(list(iter_index_entries(str(tmp_path)))) == 9
        assert not (tmp_path / "lock").exists()
    finally:
        for path in (store.commitlog, store.queue3, store.index):
            os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)


def test_consume_queue_units_are_the_vector_entries(tmp_path: Path) -> None:
    write_vector_store(tmp_path)
    units = list(iter_consume_queue(str(tmp_path), "TopicTest", 3))
    assert [(u.queue_offset, u.commit_log_offset, u.size, u.tags_code) for u in units] == [
        (0, 0, 210, 2598919),
        (1, 472, 226, -1018732908),
    ]
    assert [u.position for u in units] == [0, 20]
    (unit,) = iter_consume_queue(str(tmp_path), "SCHEDULE_TOPIC_XXXX", 2)
    assert unit.tags_code == 1700000015050
    assert list(iter_consume_queue(str(tmp_path), "NoSuchTopic", 0)) == []


def test_a_filler_unit_is_yielded_and_flagged(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    data = cq_unit(0, 0x7FFFFFFF, 0) + store.queue3.read_bytes()[:560]
    store.queue3.write_bytes(data)
    units = list(iter_consume_queue(str(tmp_path), "TopicTest", 3))
    assert [u.is_filler for u in units] == [True, False, False]
    assert "filler" in format_cq_unit(units[0])


def test_index_entries_follow_the_header_and_match_the_vector_table(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    items = list(iter_index_entries(str(tmp_path)))
    info = items[0]
    assert isinstance(info, IndexFileInfo)
    assert (info.begin_timestamp, info.end_timestamp) == (1700000000123, 1700000012077)
    assert (info.begin_phy_offset, info.end_phy_offset) == (0, 472)
    assert (info.hash_slot_count, info.index_count) == (7, 9)
    assert info.layout == IndexLayout(100, 400)
    assert info.bad_slots == []
    entries = items[1:]
    assert all(isinstance(e, IndexEntry) for e in entries)
    assert [
        (e.key_hash, e.phy_offset, e.time_diff_s, e.prev_index)
        for e in entries
        if isinstance(e, IndexEntry)
    ] == [row[1:] for row in INDEX_ENTRIES]
    assert [e.position for e in entries if isinstance(e, IndexEntry)] == [
        store.entry_position(n) for n in range(1, 9)
    ]


def test_index_layout_is_inferred_from_the_file_size() -> None:
    assert IndexLayout().for_size(420_000_040) == IndexLayout(5_000_000, 20_000_000)
    assert IndexLayout().for_size(40 + 84 * 100) == IndexLayout(100, 400)
    assert IndexLayout(1000, 4000).for_size(40 + 4 * 1000 + 20 * 4000) == IndexLayout(1000, 4000)
    assert IndexLayout(10, 7).for_size(40 + 40 + 140) == IndexLayout(10, 7)
    assert IndexLayout().for_size(41) is None


def test_index_layout_comes_from_the_option_then_the_config() -> None:
    config = StoreConfig(max_hash_slot_num=1000, max_index_num=3000)
    assert IndexLayout.of(None) == IndexLayout(5_000_000, 20_000_000)
    assert IndexLayout.of(config) == IndexLayout(1000, 3000)
    assert IndexLayout.of(config, 10) == IndexLayout(10, 40)


def test_store_paths_use_store_path_commit_log_only_when_set(tmp_path: Path) -> None:
    root = str(tmp_path)
    assert store_paths(root).commit_log == os.path.join(root, "commitlog")
    assert store_paths(root, StoreConfig()).commit_log == os.path.join(root, "commitlog")
    config = StoreConfig(store_path_commit_log="/x/cl")
    assert store_paths(root, config).commit_log == "/x/cl"
    assert store_paths(root, config).index == os.path.join(root, "index")


def test_format_record_prints_every_column(tmp_path: Path) -> None:
    write_vector_store(tmp_path)
    recs, _ = records(tmp_path)
    assert format_record(recs[2]).split() == [
        "472",
        "TopicTest",
        "3",
        "1",
        "TagCancel",
        "k1",
        "16",
        "ok",
    ]


def test_the_hand_built_index_file_is_what_index_service_writes(tmp_path: Path) -> None:
    """Cross-check: our IndexService fed the three records writes the same bytes."""
    service = IndexService(str(tmp_path / "index"), 100, 400, None)
    service.load(True)
    for topic, phy, ts, keys, uniq in (
        ("TopicTest", 0, 1700000000123, "k1 k2", UNIQ_KEYS[1]),
        ("SCHEDULE_TOPIC_XXXX", 210, 1700000005050, "k1 k2", UNIQ_KEYS[2]),
        ("TopicTest", 472, 1700000012077, "k1", UNIQ_KEYS[3]),
    ):
        service.build_index(DispatchRequest(topic, 0, phy, 1, 0, ts, 0, keys, uniq, 0, 0, {}))
    service.shutdown()
    (written,) = (tmp_path / "index").iterdir()
    data = written.read_bytes()
    assert data[:40].hex() == INDEX_HEADER_HEX
    assert data == index_file_bytes(100, 400)


@pytest.mark.parametrize("size", [0, 7])
def test_a_commitlog_file_too_short_for_a_header_ends_cleanly(tmp_path: Path, size: int) -> None:
    (tmp_path / "commitlog").mkdir()
    (tmp_path / "commitlog" / f"{0:020d}").write_bytes(bytes(size))
    recs, ends = records(tmp_path)
    assert recs == []
    assert [(e.offset, e.clean) for e in ends] == [(size, True)]


def test_commit_log_reader_reads_records_by_offset_across_files(tmp_path: Path) -> None:
    store = write_vector_store(tmp_path)
    msg = message(1)
    msg.commitlog_offset = 4096
    (store.root / "commitlog" / f"{4096:020d}").write_bytes(
        bytes(encode_message(msg)).ljust(4096, b"\0")
    )
    with CommitLogReader(str(tmp_path / "commitlog"), max_open=1) as reader:
        for _ in range(2):  # the second round re-maps files the first evicted
            first, second = reader.record_at(472), reader.record_at(4096)
            assert first is not None
            assert second is not None
            assert (first.topic, first.queue_offset, first.crc_ok) == ("TopicTest", 1, True)
            assert (second.offset, second.stored_offset, second.path) == (
                4096,
                4096,
                str(store.root / "commitlog" / f"{4096:020d}"),
            )
        assert reader.record_at(NEXT_FREE_OFFSET) is None
        assert reader.record_at(-5) is None
