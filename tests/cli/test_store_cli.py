"""``rocketq store dump`` and ``rocketq store check`` through click's CliRunner."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from rocketq.cli.main import cli
from rocketq.cli.store import store as store_cli
from rocketq.testing.vectors import VectorStore, write_vector_store


@pytest.fixture
def vstore(tmp_path: Path) -> VectorStore:
    return write_vector_store(tmp_path / "store")


def run(*args: str) -> Result:
    return CliRunner().invoke(store_cli, list(args))


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)
        os.fsync(f.fileno())


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.split()[0].isdigit()]


def test_dump_prints_one_row_per_record_with_every_column(vstore: VectorStore) -> None:
    result = run("dump", "--store", str(vstore.root))
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0].split()
    assert header == ["offset", "topic", "queue", "qoffset", "tags", "keys", "body", "crc"]
    assert rows(result.output)[:3] == [
        ["0", "TopicTest", "3", "0", "TagA", "k1", "k2", "14", "ok"],
        ["210", "SCHEDULE_TOPIC_XXXX", "2", "0", "TagA", "k1", "k2", "16", "ok"],
        ["472", "TopicTest", "3", "1", "TagCancel", "k1", "16", "ok"],
    ]
    assert "698 end of data: unwritten space" in " ".join(result.output.split())


def test_dump_honours_from_offset_and_limit(vstore: VectorStore) -> None:
    result = run("dump", "--store", str(vstore.root), "--from-offset", "210", "--limit", "1")
    assert result.exit_code == 0, result.output
    assert [r[0] for r in rows(result.output)] == ["210"]
    assert "stopped after 1 records" in result.output


def test_dump_marks_a_bad_crc(vstore: VectorStore) -> None:
    flip(vstore.commitlog, 100)
    result = run("dump", "--store", str(vstore.root), "--limit", "1")
    assert rows(result.output)[0][-1] == "BAD"


def test_dump_prints_a_consume_queue(vstore: VectorStore) -> None:
    result = run("dump", "--store", str(vstore.root), "--consume-queue", "TopicTest:3")
    assert result.exit_code == 0, result.output
    assert rows(result.output) == [["0", "0", "210", "2598919"], ["1", "472", "226", "-1018732908"]]


@pytest.mark.parametrize("spec", ["TopicTest", "TopicTest:x", ":3"])
def test_dump_refuses_a_malformed_queue(vstore: VectorStore, spec: str) -> None:
    result = run("dump", "--store", str(vstore.root), "--consume-queue", spec)
    assert result.exit_code == 2
    assert "TOPIC:QID" in result.output


def test_dump_prints_the_index_header_and_entries(vstore: VectorStore) -> None:
    result = run("dump", "--store", str(vstore.root), "--index", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert "8 entries, 7 slots used, 100 slots" in result.output
    entries = [line.split() for line in result.output.splitlines() if line.strip().startswith("#")]
    assert entries == [
        ["#1", "hash", "789047430", "offset", "0", "+0s", "prev", "0"],
        ["#2", "hash", "2746024", "offset", "0", "+0s", "prev", "0"],
        ["#3", "hash", "2746025", "offset", "0", "+0s", "prev", "0"],
    ]


def test_dump_index_says_when_the_slot_count_does_not_fit(vstore: VectorStore) -> None:
    with open(vstore.index, "ab") as f:
        f.write(b"\0\0")
    result = run("dump", "--store", str(vstore.root), "--index")
    assert "fits no index layout" in result.output


def test_check_exits_zero_and_says_ok_on_a_sound_store(vstore: VectorStore) -> None:
    result = run("check", "--store", str(vstore.root))
    assert result.exit_code == 0, result.output
    assert "3 records" in result.output
    assert result.output.rstrip().endswith("OK")


def test_check_exits_one_with_path_and_offset_of_a_bad_crc(vstore: VectorStore) -> None:
    flip(vstore.commitlog, 472 + 110)
    result = run("check", "--store", str(vstore.root))
    assert result.exit_code == 1
    assert "1 problem(s)" in result.output
    assert f"{vstore.commitlog} @ 472: body CRC mismatch" in result.output


def test_check_exits_one_on_a_unit_pointing_at_the_wrong_offset(vstore: VectorStore) -> None:
    data = bytearray(vstore.queue3.read_bytes())
    data[7] = 211  # unit 0 now points at commitlog offset 211
    vstore.queue3.write_bytes(bytes(data))
    result = run("check", "--store", str(vstore.root))
    assert result.exit_code == 1
    assert f"{vstore.queue3} @ 0: TopicTest/3 unit 0: commitlog offset 211" in result.output


def test_check_exits_one_on_garbage_in_a_non_last_commitlog_file(vstore: VectorStore) -> None:
    data = bytearray(vstore.commitlog.read_bytes())
    data[698:702] = b"\x00\x00\x00\x99"
    vstore.commitlog.write_bytes(bytes(data))
    (vstore.root / "commitlog" / f"{4096:020d}").write_bytes(b"\x01" * 4096)
    result = run("check", "--store", str(vstore.root))
    assert result.exit_code == 1
    assert f"{vstore.commitlog} @ 698" in result.output


def test_check_reads_storepathcommitlog_and_slots_from_a_broker_conf(
    vstore: VectorStore, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere"
    (vstore.root / "commitlog").rename(moved)
    conf = tmp_path / "broker.conf"
    conf.write_text(f"storePathCommitLog={moved}\nmaxHashSlotNum=100\nmaxIndexNum=400\n")
    assert run("check", "--store", str(vstore.root)).exit_code == 1
    result = run("check", "--store", str(vstore.root), "-c", str(conf))
    assert result.exit_code == 0, result.output


def test_check_takes_the_slot_count_from_the_option(tmp_path: Path) -> None:
    vstore = write_vector_store(tmp_path / "s", slots=60, entries=100)
    assert run("check", "--store", str(vstore.root)).exit_code == 1  # fits no inferred layout
    result = run("check", "--store", str(vstore.root), "--max-hash-slot-num", "60")
    assert result.exit_code == 1  # 4 x 60 entries is still not the file's 100
    conf = tmp_path / "broker.conf"
    conf.write_text("maxHashSlotNum=60\nmaxIndexNum=100\n")
    assert run("check", "--store", str(vstore.root), "-c", str(conf)).exit_code == 0


def test_the_store_group_is_reachable_from_the_rocketq_command(vstore: VectorStore) -> None:
    result = CliRunner().invoke(cli, ["store", "check", "--store", str(vstore.root)])
    assert result.exit_code == 0, result.output
    assert "OK" in result.output


def test_a_missing_store_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = run("check", "--store", str(tmp_path / "nope"))
    assert result.exit_code == 2


def test_dump_of_a_queue_that_does_not_exist_fails(vstore: VectorStore) -> None:
    result = run("dump", "--store", str(vstore.root), "--consume-queue", "TopicTest:9")
    assert result.exit_code == 1
    assert "no consume queue TopicTest:9" in result.output


def test_check_of_a_store_that_never_stored_anything_passes_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").write_bytes(bytes(4096))
    result = run("check", "--store", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "note: " in result.output
    assert "no commitlog directory" in result.output


def test_check_can_allow_topics_without_consume_queues(vstore: VectorStore) -> None:
    shutil.rmtree(vstore.schedule_queue.parent.parent)
    strict = run("check", "--store", str(vstore.root))
    assert strict.exit_code == 1
    assert "SCHEDULE_TOPIC_XXXX/2 offset 0 has no consume queue unit" in strict.output
    lenient = run("check", "--store", str(vstore.root), "--no-require-consume-queues")
    assert lenient.exit_code == 0, lenient.output


def test_store_check_cli_prints_progress_on_stderr_and_the_report_on_stdout(
    tmp_path: Path,
) -> None:
    root = str(write_vector_store(tmp_path).root)
    result = CliRunner().invoke(cli, ["store", "check", "--store", root])
    assert result.exit_code == 0, result.output
    assert "checking the commit log" in result.stderr
    assert result.stdout.rstrip().endswith("OK")
    assert "checking the commit log" not in result.stdout
