"""IndexFile and IndexService: golden bytes of the vectors, chains, new files, recovery."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.common.hashing import index_key_hash
from rocketq.store.checkpoint import StoreCheckpoint
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.format import index_entry_position, index_slot_position
from rocketq.store.index_file import IndexFile
from rocketq.store.index_service import IndexService

SLOTS = 5_000_000
ENTRIES = 20_000_000
T1, T2, T3 = 1700000000123, 1700000005050, 1700000012077
U1 = "7F00000130391B6D358647B760000000"
U2 = "7F00000130391B6D358647B773880001"
U3 = "7F00000130391B6D358647B78EE00002"


def request(topic: str, offset: int, ts: int, keys: str, uniq: str | None) -> DispatchRequest:
    return DispatchRequest(topic, 0, offset, 100, 0, ts, 0, keys, uniq, 0, 0, {})


def vector_service(index_dir: Path, slots: int = SLOTS, entries: int = ENTRIES) -> IndexService:
    service = IndexService(str(index_dir), slots, entries, None)
    service.load(True)
    service.build_index(request("TopicTest", 0, T1, "k1 k2", U1))
    service.build_index(request("SCHEDULE_TOPIC_XXXX", 210, T2, "k1 k2", U2))
    service.build_index(request("TopicTest", 472, T3, "k1", U3))
    return service


def test_index_file_after_the_three_vectors_is_byte_exact(tmp_path: Path) -> None:
    service = vector_service(tmp_path / "index")
    service.shutdown()
    (name,) = os.listdir(tmp_path / "index")
    assert len(name) == 17
    data = (tmp_path / "index" / name).read_bytes()
    assert len(data) == 420_000_040
    assert data[:40].hex() == (
        "0000018bcfe5687b0000018bcfe5972d000000000000000000000000000001d80000000700000009"
    )
    slots = {252_913: 5, 252_914: 6, 2_746_024: 8, 2_746_025: 3, 3_071_666: 4}
    slots |= {3_621_094: 7, 4_047_430: 1}
    for slot, value in slots.items():
        pos = index_slot_position(slot)
        assert int.from_bytes(data[pos : pos + 4], "big") == value
    entries = {
        1: "2f07e88600000000000000000000000000000000",
        2: "0029e6a800000000000000000000000000000000",
        3: "0029e6a900000000000000000000000000000000",
        4: "5f40a37200000000000000d20000000400000000",
        5: "75bbf7b100000000000000d20000000400000000",
        6: "75bbf7b200000000000000d20000000400000000",
        7: "7982e3a600000000000001d80000000b00000000",
        8: "0029e6a800000000000001d80000000b00000002",
    }
    for number, hex_bytes in entries.items():
        pos = index_entry_position(SLOTS, number)
        assert data[pos : pos + 20].hex() == hex_bytes, number
    zero = index_entry_position(SLOTS, 0)
    assert data[zero : zero + 20] == bytes(20)


def test_query_walks_the_chain_newest_first_and_stops_at_begin(tmp_path: Path) -> None:
    service = vector_service(tmp_path / "index")
    try:
        assert service.query_offset("TopicTest", "k1", 32, 0, 2**62).phy_offsets == [472, 0]
        assert service.query_offset("TopicTest", "k1", 32, T2 - 50, 2**62).phy_offsets == [472]
        assert service.query_offset("TopicTest", U2, 32, 0, 2**62).phy_offsets == []
        found = service.query_offset("SCHEDULE_TOPIC_XXXX", U2, 32, 0, 2**62)
        assert found.phy_offsets == [210]
        assert found.index_last_update_timestamp == T3
        assert found.index_last_update_phyoffset == 472
    finally:
        service.shutdown()


def test_reloaded_index_answers_the_same(tmp_path: Path) -> None:
    vector_service(tmp_path / "index", 100, 400).shutdown()
    service = IndexService(str(tmp_path / "index"), 100, 400, None)
    service.load(True)
    try:
        assert service.query_offset("TopicTest", "k1", 32, 0, 2**62).phy_offsets == [472, 0]
        service.build_index(request("TopicTest", 472, T3, "k1", None))  # re-dispatch: same end
        service.build_index(request("TopicTest", 300, T3, "k1", None))  # below endPhyOffset
        assert service.query_offset("TopicTest", "k1", 32, 0, 2**62).phy_offsets == [472, 472, 0]
    finally:
        service.shutdown()


def test_full_file_rolls_to_a_new_one_and_moves_the_checkpoint(tmp_path: Path) -> None:
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    service = IndexService(str(tmp_path / "index"), 8, 4, cp)  # 3 entries a file
    service.load(True)
    for i in range(7):
        service.build_index(request("T", 100 * i, T1 + 1000 * i, f"k{i % 2}", None))
    try:
        assert len(service.index_file_list) == 3
        first, second, _third = service.index_file_list
        assert cp.index_msg_timestamp == second.end_timestamp
        assert second.begin_timestamp == T1 + 3000  # replaced by its first message's time
        assert first.end_phy_offset == 200
        got = service.query_offset("T", "k0", 32, 0, 2**62).phy_offsets
        assert got == [600, 400, 200, 0]
    finally:
        service.shutdown()
        cp.shutdown()
    names = sorted(os.listdir(tmp_path / "index"))
    assert len(names) == 3


def test_abnormal_load_drops_files_newer_than_the_checkpoint(tmp_path: Path) -> None:
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    service = IndexService(str(tmp_path / "index"), 8, 4, cp)
    service.load(True)
    for i in range(4):
        service.build_index(request("T", 100 * i, T1 + 1000 * i, "k", None))
    service.shutdown()
    cp.shutdown()
    reopened = IndexService(str(tmp_path / "index"), 8, 4, StoreCheckpoint(cp.path))
    reopened.load(False)
    try:
        assert len(reopened.index_file_list) == 1
        assert reopened.query_offset("T", "k", 32, 0, 2**62).phy_offsets == [200, 100, 0]
    finally:
        reopened.shutdown()
    assert len(os.listdir(tmp_path / "index")) == 1


def test_expired_files_go_but_never_the_last(tmp_path: Path) -> None:
    service = IndexService(str(tmp_path / "index"), 8, 4, None)
    service.load(True)
    for i in range(7):
        service.build_index(request("T", 100 * i, T1 + i, "k", None))
    try:
        assert service.delete_expired_file(250) == 1
        assert service.delete_expired_file(10_000) == 1
        assert len(service.index_file_list) == 1
    finally:
        service.shutdown()


def test_rollback_records_and_keyless_records_are_not_indexed(tmp_path: Path) -> None:
    service = IndexService(str(tmp_path / "index"), 8, 40, None)
    service.load(True)
    rollback = request("T", 0, T1, "k", "U")
    rollback.sys_flag = 0x0C
    service.build_index(rollback)
    service.build_index(request("T", 10, T1, "", None))
    try:
        assert service.index_file_list == []
        assert service.query_offset("T", "k", 32, 0, 2**62).phy_offsets == []
    finally:
        service.shutdown()


def test_polygenelubricants_hashes_to_slot_zero(tmp_path: Path) -> None:
    assert index_key_hash("polygenelubricants") == 0
    f = IndexFile(str(tmp_path / "20230101000000000"), 7, 10)
    try:
        assert f.put_key("polygenelubricants", 42, T1)
        out: list[int] = []
        f.select_phy_offset(out, "polygenelubricants", 10, 0, 2**62)
        assert out == [42]
        assert int.from_bytes(f.mapped_file.view[40:44], "big") == 1
    finally:
        f.shutdown()


@settings(max_examples=40, deadline=None)
@given(
    inserts=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "dd", "eee"]), st.integers(0, 10**9)),
        min_size=1,
        max_size=60,
    )
)
def test_every_inserted_offset_is_found_for_its_key_hash(inserts: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        f = IndexFile(os.path.join(d, "20230101000000000"), 3, 100)
        try:
            for key, phy in inserts:
                assert f.put_key(key, phy, T1)
            for key in {k for k, _ in inserts}:
                out: list[int] = []
                f.select_phy_offset(out, key, 100, 0, 2**62)
                want = [p for k, p in reversed(inserts) if index_key_hash(k) == index_key_hash(key)]
                assert out == want
        finally:
            f.shutdown()


def test_an_index_sync_writes_back_with_fdatasync_which_lets_the_loop_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mmap.flush (msync) holds the GIL for the whole sync of the 420 MB mapping: 6-9 ms
    of the broker's loop once a second (BENCHMARKS.md, issue 22); fdatasync releases it."""
    from rocketq.store import mapped_file

    synced: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(mapped_file, "USE_FDATASYNC", True)
    monkeypatch.setattr(mapped_file.os, "fdatasync", fdatasync)
    service = vector_service(tmp_path, slots=100, entries=400)
    last = service.index_file_list[-1]
    synced.clear()
    service.sync_last()
    last.flush()
    assert synced == [last.mapped_file._fd, last.mapped_file._fd]
    service.shutdown()
