"""ConsumeQueue: golden units, idempotent dispatch, fillers, truncation, recovery, clean-up."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.common.hashing import tags_string_to_tags_code
from rocketq.store.commitlog import DispatchRequest, check_message_and_return_size
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.format import CQ_STORE_UNIT_STRUCT

UNITS = 10
FILE = UNITS * 20
V2_HEX = (
    "00000106daa320a74a8216630000000200000000000000000000000000000000000000d20000000000000"
    "18bcfe57b887f0000010000d4310000018bcfe57bba7f00000100002a9f0000000000000000000000000"
    "000001048656c6c6f20526f636b65744d512032135343484544554c455f544f5049435f585858580088"
    "554e49515f4b455901374630303030303133303339314236443335383634374237373338383030303102"
    "434c55535445520144656661756c74436c75737465720244454c4159013302544147530154616741024b"
    "455953016b31206b3202574149540174727565025245414c5f544f50494301546f70696354657374025"
    "245414c5f514944013302"
)


def req(queue_offset: int, phy: int, size: int = 100, tags: int = 0) -> DispatchRequest:
    return DispatchRequest("T", 0, phy, size, tags, 0, queue_offset, "", None, 0, 0, {})


def new_cq(root: Path, size: int = FILE) -> ConsumeQueue:
    cq = ConsumeQueue("T", 0, str(root), size)
    cq.load()
    cq.recover()
    return cq


def test_vector_units_are_byte_exact(tmp_path: Path) -> None:
    cq = ConsumeQueue("TopicTest", 3, str(tmp_path), 6_000_000)
    cq.put_message_position_info_wrapper(req(0, 0, 210, tags_string_to_tags_code("TagA")))
    cq.put_message_position_info_wrapper(req(1, 472, 226, tags_string_to_tags_code("TagCancel")))
    cq.shutdown()
    data = (tmp_path / "TopicTest" / "3" / f"{0:020d}").read_bytes()
    assert len(data) == 6_000_000
    assert data[:20].hex() == "0000000000000000000000d2000000000027a807"
    assert data[20:40].hex() == "00000000000001d8000000e2ffffffffc3475e94"
    assert data[40:60] == bytes(20)


def test_delay_message_unit_holds_the_delivery_time() -> None:
    record = bytes.fromhex(V2_HEX)
    view = memoryview(bytearray(record) + bytes(8))
    got = check_message_and_return_size(
        view, 0, len(view), 210, check_crc=True, delay_table={1: 1000, 2: 5000, 3: 10_000}
    )
    assert got is not None
    assert got.tags_code == 1700000015050
    assert CQ_STORE_UNIT_STRUCT.pack(210, got.msg_size, got.tags_code).hex() == (
        "00000000000000d2000001060000018bcfe5a2ca"
    )


def test_redispatch_is_idempotent_and_units_roll_over_files(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    for i in range(25):
        cq.put_message_position_info_wrapper(req(i, 100 * i))
    for i in range(25):
        cq.put_message_position_info_wrapper(req(i, 100 * i))
    assert cq.get_max_offset_in_queue() == 25
    assert cq.get_unit(24) == (2400, 100, 0)
    assert cq.get_unit(25) is None
    assert len(list((tmp_path / "T" / "0").iterdir())) == 3
    cq.shutdown()
    again = new_cq(tmp_path)
    assert again.get_max_offset_in_queue() == 25
    assert again.get_max_physic_offset() == 2500
    again.shutdown()


def test_first_unit_at_a_later_offset_is_preceded_by_fillers(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    cq.put_message_position_info_wrapper(req(13, 5000))
    assert cq.get_min_offset_in_queue() == 13
    assert cq.get_max_offset_in_queue() == 14
    assert cq.get_unit(12) is None
    assert cq.get_unit(13) == (5000, 100, 0)
    cq.shutdown()
    data = (tmp_path / "T" / "0" / f"{FILE:020d}").read_bytes()
    assert data[:20].hex() == "00000000000000007fffffff0000000000000000"
    again = new_cq(tmp_path)
    assert again.get_min_offset_in_queue() == 13
    assert again.get_max_physic_offset() == 5100
    again.shutdown()


def test_truncation_zeroes_dropped_units_so_they_never_come_back(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    for i in range(15):
        cq.put_message_position_info_wrapper(req(i, 100 * i))
    cq.truncate_dirty_logic_files(700)
    assert cq.get_max_offset_in_queue() == 7
    assert cq.get_max_physic_offset() == 700
    cq.shutdown()
    assert len(list((tmp_path / "T" / "0").iterdir())) == 1
    again = new_cq(tmp_path)
    assert again.get_max_offset_in_queue() == 7
    again.put_message_position_info_wrapper(req(7, 700))
    assert again.get_unit(7) == (700, 100, 0)
    again.shutdown()


def test_truncation_below_the_first_unit_empties_the_queue(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    for i in range(3):
        cq.put_message_position_info_wrapper(req(i, 1000 + 100 * i))
    cq.truncate_dirty_logic_files(500)
    assert cq.get_max_offset_in_queue() == 0
    assert cq.get_max_physic_offset() == -1
    cq.put_message_position_info_wrapper(req(0, 500))
    assert cq.get_unit(0) == (500, 100, 0)
    cq.shutdown()


def test_expired_files_are_deleted_and_min_offset_follows(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    for i in range(25):
        cq.put_message_position_info_wrapper(req(i, 100 * i))
    assert cq.delete_expired_file(1250) == 1
    assert cq.get_min_offset_in_queue() == 13
    assert cq.get_unit(12) is None
    assert cq.get_unit(13) == (1300, 100, 0)
    cq.shutdown()


def test_a_gap_in_queue_offsets_is_filled_and_later_units_stay_aligned(tmp_path: Path) -> None:
    cq = new_cq(tmp_path)
    cq.put_message_position_info_wrapper(req(0, 0))
    cq.put_message_position_info_wrapper(req(4, 400))
    assert cq.get_max_offset_in_queue() == 5
    assert cq.get_unit(4) == (400, 100, 0)
    cq.shutdown()


@settings(max_examples=30, deadline=None)
@given(
    units=st.lists(st.tuples(st.integers(1, 2**20), st.integers(-(2**63), 2**63 - 1)), max_size=40)
)
def test_units_round_trip(units: list[tuple[int, int]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        cq = new_cq(Path(d))
        phy = 0
        expected = []
        for i, (size, tags) in enumerate(units):
            cq.put_message_position_info_wrapper(req(i, phy, size, tags))
            expected.append((phy, size, tags))
            phy += size
        got = [cq.get_unit(i) for i in range(len(units))]
        cq.shutdown()
        assert got == expected
