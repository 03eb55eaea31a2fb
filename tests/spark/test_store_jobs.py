"""`rocketq spark rebuild|export|stats` on real stores, through the CLI and the shared session."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rocketq.cli.main import cli
from rocketq.store.dump import RecordInfo, iter_commitlog_records
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import SEGMENT_BYTES
from tests.spark.store_data import (
    SCHEDULE_TOPIC,
    TOPICS,
    store_config,
    store_decoded,
    write_store,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

BROKER_CONF = """\
mappedFileSizeCommitLog=65536
mappedFileSizeConsumeQueue=400
maxHashSlotNum=64
maxIndexNum=256
"""


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "broker-a"
    sent = write_store(root, 500, seed=3, transactional=True)
    assert sum(1 for m in sent if m.sys_flag) == 36
    assert sum(1 for m in sent if m.topic == SCHEDULE_TOPIC) == 11
    return root


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["spark", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def keyed_offsets(root: Path, key: str) -> list[int]:
    """What the store's IndexService answers for ``key`` in every topic."""
    store = MessageStore(store_config(root))
    store.load()
    try:
        found = []
        for topic in TOPICS:
            result = store.index_service.query_offset(topic, key, 64, 0, 1 << 62)
            found += sorted(result.phy_offsets)
        return found
    finally:
        store.shutdown()


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
def test_rebuilt_consume_queues_and_index_files_equal_the_originals_byte_for_byte(
    spark: Any, store_root: Path, tmp_path: Path
) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(BROKER_CONF)
    out = tmp_path / "rebuilt"
    output = run(
        "rebuild",
        "--store",
        str(store_root),
        "--out",
        str(out),
        "-c",
        str(conf),
        "--split-bytes",
        "40000",
    )
    original_cq = tree_bytes(store_root / "consumequeue")
    assert len(original_cq) > len(TOPICS) * 4  # several files per queue
    assert tree_bytes(out / "consumequeue") == original_cq
    original_index = sorted((store_root / "index").iterdir())
    rebuilt_index = sorted((out / "index").iterdir())
    assert len(original_index) >= 3
    assert [p.read_bytes() for p in rebuilt_index] == [p.read_bytes() for p in original_index]
    assert f"{len(TOPICS) * 4 + 1} consume queues, {500 - 36} units" in output
    assert not [p for p in out.iterdir() if p.name.startswith(".rebuild")]
    # the recovery use: a store that lost its queues and index serves everything again
    lost = tmp_path / "lost" / "broker-a"
    shutil.copytree(store_root, lost)
    shutil.rmtree(lost / "consumequeue")
    shutil.rmtree(lost / "index")
    shutil.copytree(out / "consumequeue", lost / "consumequeue")
    shutil.copytree(out / "index", lost / "index")
    assert store_decoded(lost) == store_decoded(store_root)
    assert keyed_offsets(lost, "order-5") == keyed_offsets(store_root, "order-5") != []


def test_rebuild_refuses_an_out_folder_that_already_holds_queues(store_root: Path) -> None:
    result = CliRunner().invoke(
        cli, ["spark", "rebuild", "--store", str(store_root), "--out", str(store_root)]
    )
    assert result.exit_code != 0
    assert "exists; rebuild writes a fresh tree" in result.output


def test_export_writes_parquet_partitioned_by_topic_and_date(
    spark: Any, store_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "parquet"
    output = run("export", "--store", str(store_root), "--out", str(out), "--split-bytes", "40000")
    assert "exported 500 records" in output
    assert re.search(r"^export: \d+\.\d MiB of commitlog from 1 store\(s\)$", output, re.M)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(
        f"topic={t}" for t in (*TOPICS, SCHEDULE_TOPIC)
    )
    assert all(p.name.startswith("date=20") for p in (out / "topic=Orders").iterdir() if p.is_dir())
    again = CliRunner().invoke(
        cli, ["spark", "export", "--store", str(store_root), "--out", str(out)]
    )
    assert again.exit_code != 0
    assert "exists; pass --overwrite" in again.output
    back = spark.read.parquet(str(out))
    assert back.count() == 500
    offsets = sorted(r[0] for r in back.select("commitLogOffset").collect())
    walked = [
        r.offset for r in iter_commitlog_records(str(store_root)) if isinstance(r, RecordInfo)
    ]
    assert offsets == walked
    # every file, not whichever the listing gives first: a file whose tags are all null has
    # no dictionary page for them
    files = [parquet_encodings(path) for path in (out / "topic=Orders").rglob("*.parquet")]
    assert files
    for encodings in files:
        assert not encodings["value"] & DICTIONARY_ENCODINGS  # bodies: no dictionary attempt
        assert not encodings["msgId"] & DICTIONARY_ENCODINGS
    assert any(e["tags"] & DICTIONARY_ENCODINGS for e in files)  # few values: dictionary pages


DICTIONARY_ENCODINGS = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}


def parquet_encodings(path: Path) -> dict[str, set[str]]:
    """The encodings of each top-level column in the first row group of a Parquet file."""
    import pyarrow.parquet as pq

    group = pq.ParquetFile(path).metadata.row_group(0)
    out: dict[str, set[str]] = {}
    for i in range(group.num_columns):
        column = group.column(i)
        out.setdefault(column.path_in_schema.split(".")[0], set()).update(column.encodings)
    return out


def test_stats_count_topics_tags_hours_and_report_the_gap_a_lost_record_leaves(
    spark: Any, store_root: Path, tmp_path: Path
) -> None:
    root = tmp_path / "broker-a"
    shutil.copytree(store_root, root)
    records = [r for r in iter_commitlog_records(str(root)) if isinstance(r, RecordInfo)]
    victim = next(r for r in records[123:] if r.in_consume_queue)
    segment = root / "commitlog" / f"{victim.offset - victim.offset % SEGMENT_BYTES:020d}"
    with open(segment, "r+b") as f:
        f.seek(victim.offset % SEGMENT_BYTES)
        f.write(b"\xee" * 40)
    output = run("stats", "--store", str(root), "--skip-corrupt", "--split-bytes", "30000")
    for topic in TOPICS:
        kept = [r for r in records if r.topic == topic and r.offset != victim.offset]
        size = sum(r.size for r in kept)
        assert f"{topic:<32} {len(kept):>10} {size:>14}" in output
    assert "queue gaps: 1" in output
    expected = f"broker-a {victim.topic}:{victim.queue_id} missing offsets "
    assert f"{expected}{victim.queue_offset}..{victim.queue_offset}" in output
