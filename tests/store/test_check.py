"""rocketq store check / dump on hand-built stores (store-vectors.md) and on MessageStore output."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from rocketq.cli.store import store as store_cli
from rocketq.store.check import check_store
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.format import CQ_STORE_UNIT_STRUCT, index_entry_position
from rocketq.store.index_service import IndexService
from tests.store.records import VECTOR1_HEX
from tests.store.test_consume_queue import V2_HEX

V3_HEX = (
    "000000e2daa320a73d8526f50000000300000000000000000000000100000000000001d80000001000000"
    "18bcfe596e020010db80000000000000000000000100000d4320000018bcfe5972d7f00000100002a9f00"
    "00000000000000000000000000001048656c6c6f20526f636b65744d51203309546f7069635465737400"
    "62554e49515f4b455901374630303030303133303339314236443335383634374237384545303030303"
    "202434c55535445520144656661756c74436c757374657202544147530154616743616e63656c024b455"
    "953016b310257414954017472756502"
)
FILE_SIZE = 4096
SLOTS, ENTRIES = 100, 400
U1 = "7F00000130391B6D358647B760000000"
U2 = "7F00000130391B6D358647B773880001"
U3 = "7F00000130391B6D358647B78EE00002"


def cq_unit(phy: int, size: int, tags: int) -> bytes:
    return CQ_STORE_UNIT_STRUCT.pack(phy, size, tags)


def build_vector_store(root: Path) -> Path:
    """The three records of store-vectors.md with their units and index entries."""
    records = bytes.fromhex(VECTOR1_HEX) + bytes.fromhex(V2_HEX) + bytes.fromhex(V3_HEX)
    assert len(records) == 698
    (root / "commitlog").mkdir(parents=True)
    (root / "commitlog" / f"{0:020d}").write_bytes(records.ljust(FILE_SIZE, b"\0"))
    q3 = root / "consumequeue" / "TopicTest" / "3"
    q3.mkdir(parents=True)
    units = cq_unit(0, 210, 2598919) + cq_unit(472, 226, -1018732908)
    (q3 / f"{0:020d}").write_bytes(units.ljust(600, b"\0"))
    q2 = root / "consumequeue" / "SCHEDULE_TOPIC_XXXX" / "2"
    q2.mkdir(parents=True)
    (q2 / f"{0:020d}").write_bytes(cq_unit(210, 262, 1700000015050).ljust(600, b"\0"))
    index = IndexService(str(root / "index"), SLOTS, ENTRIES, None)
    index.load(True)
    for topic, phy, ts, keys, uniq in (
        ("TopicTest", 0, 1700000000123, "k1 k2", U1),
        ("SCHEDULE_TOPIC_XXXX", 210, 1700000005050, "k1 k2", U2),
        ("TopicTest", 472, 1700000012077, "k1", U3),
    ):
        index.build_index(DispatchRequest(topic, 0, phy, 1, 0, ts, 0, keys, uniq, 0, 0, {}))
    index.shutdown()
    return root


def flip(path: Path, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_the_vector_store_passes_with_every_part_counted(tmp_path: Path) -> None:
    report = check_store(str(build_vector_store(tmp_path)))
    assert report.ok, str(report)
    assert (report.records, report.consume_queue_units, report.index_entries) == (3, 3, 8)
    assert report.data_end == 698


def test_a_flipped_body_byte_is_reported_with_path_and_offset(tmp_path: Path) -> None:
    root = build_vector_store(tmp_path)
    flip(root / "commitlog" / f"{0:020d}", 210 + 90)
    report = check_store(str(root))
    assert not report.ok
    assert [(p.offset, p.reason) for p in report.problems] == [(210, "body CRC mismatch")]
    assert report.problems[0].path.endswith(f"{0:020d}")


def test_a_unit_pointing_elsewhere_and_a_wrong_tag_hash_are_reported(tmp_path: Path) -> None:
    root = build_vector_store(tmp_path)
    q3 = root / "consumequeue" / "TopicTest" / "3" / f"{0:020d}"
    data = bytearray(q3.read_bytes())
    data[0:20] = cq_unit(100, 210, 2598919)
    data[20:40] = cq_unit(472, 226, 12345)
    q3.write_bytes(bytes(data))
    reasons = [p.reason for p in check_store(str(root)).problems]
    assert any("unit 0: commitlog offset 100 is not a record start" in r for r in reasons)
    assert any("unit 1: tags code 12345" in r for r in reasons)
    assert any("offset 0 has no consume queue unit" in r for r in reasons)


def test_an_index_entry_pointing_nowhere_is_reported(tmp_path: Path) -> None:
    root = build_vector_store(tmp_path)
    (index_path,) = (root / "index").iterdir()
    pos = index_entry_position(SLOTS, 2) + 4
    with open(index_path, "r+b") as f:
        f.seek(pos)
        f.write((99).to_bytes(8, "big"))
    report = check_store(str(root))
    assert [p.reason for p in report.problems] == [
        "entry 2: commitlog offset 99 is not a record start"
    ]


def test_garbage_after_the_last_record_is_reported_but_zeros_are_not(tmp_path: Path) -> None:
    root = build_vector_store(tmp_path)
    path = root / "commitlog" / f"{0:020d}"
    with open(path, "r+b") as f:
        f.seek(900)
        f.write(b"\x01\x02\x03")
    report = check_store(str(root))
    assert [(p.offset, p.reason) for p in report.problems] == [
        (698, "non-zero bytes after the last record")
    ]


def test_dump_prints_records_units_and_index_entries(tmp_path: Path) -> None:
    root = str(build_vector_store(tmp_path))
    runner = CliRunner()
    out = runner.invoke(store_cli, ["dump", "--store", root]).output
    assert "TopicTest" in out
    assert "SCHEDULE_TOPIC_XXXX" in out
    assert "k1 k2" in out
    assert "end of data" in out
    lines = [line for line in out.splitlines() if line.strip().startswith(("0 ", "210 ", "472 "))]
    assert len(lines) == 3
    assert all(line.rstrip().endswith("ok") for line in lines)
    out = runner.invoke(store_cli, ["dump", "--store", root, "--consume-queue", "TopicTest:3"])
    assert "-1018732908" in out.output
    out = runner.invoke(store_cli, ["dump", "--store", root, "--index"])
    assert "8 entries" in out.output


def test_check_command_exits_one_with_a_report_on_a_mismatch(tmp_path: Path) -> None:
    root = build_vector_store(tmp_path)
    runner = CliRunner()
    good = runner.invoke(store_cli, ["check", "--store", str(root)])
    assert good.exit_code == 0
    assert "OK" in good.output
    flip(root / "commitlog" / f"{0:020d}", 472 + 110)
    bad = runner.invoke(store_cli, ["check", "--store", str(root)])
    assert bad.exit_code == 1
    assert "body CRC mismatch" in bad.output


def test_a_store_written_by_message_store_passes(tmp_path: Path) -> None:
    from tests.store import store_support as support

    store = support.open_store(tmp_path / "s")
    for i in range(200):
        props = {"TAGS": f"T{i % 3}", "KEYS": f"k{i} shared", "UNIQ_KEY": f"U{i}"}
        store.put_message(
            support.new_msg(queue_id=i % 4, body=os.urandom(i % 300), properties=props)
        )
    store.shutdown()
    report = check_store(str(tmp_path / "s"))
    assert report.ok, str(report)
    assert report.records == 200
    assert report.consume_queue_units == 200
    assert report.index_entries == 600
