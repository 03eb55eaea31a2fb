"""spark.read.format("rocketq-store") against the store's own decode, two brokers at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketq.common.message import MessageExt
from rocketq.testing.store import SEGMENT_BYTES
from tests.spark.store_data import store_decoded, write_store

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("source")
    a, b = base / "broker-a", base / "broker-b"
    write_store(a, 400, seed=1)
    write_store(b, 250, seed=2)
    return a, b


def expected_row(msg: MessageExt, broker: str) -> dict[str, Any]:
    keys = msg.properties.get("KEYS")
    return {
        "topic": msg.topic,
        "broker": broker,
        "queueId": msg.queue_id,
        "queueOffset": msg.queue_offset,
        "commitLogOffset": msg.commitlog_offset,
        "msgId": msg.properties.get("UNIQ_KEY") or msg.msg_id,
        "key": keys.split(" ")[0] if keys else None,
        "keys": keys,
        "tags": msg.properties.get("TAGS"),
        "value": msg.body,
        "properties": msg.properties,
        "bornMs": msg.born_timestamp,
        "storeMs": msg.store_timestamp,
        "timestampType": 1,
        "bornHost": f"{msg.born_host[0]}:{msg.born_host[1]}",
        "storeHost": f"{msg.store_host[0]}:{msg.store_host[1]}",
        "reconsumeTimes": msg.reconsume_times,
        "sysFlag": msg.sys_flag,
        "storeSize": msg.store_size,
    }


def test_store_rows_equal_the_stores_own_decode_across_two_brokers(
    spark: Any, two_stores: tuple[Path, Path]
) -> None:
    a, b = two_stores
    df = (
        spark.read.format("rocketq-store")
        .option("paths", f"{a},{b}")
        .option("splitBytes", str(48 * 1024))
        .load()
    )
    rows = df.selectExpr(
        "*", "unix_millis(bornTimestamp) AS bornMs", "unix_millis(timestamp) AS storeMs"
    ).drop("bornTimestamp", "timestamp")
    got = {(r["broker"], r["commitLogOffset"]): r.asDict() for r in rows.collect()}
    expected = {}
    for root in two_stores:
        for offset, msg in store_decoded(root).items():
            expected[(root.name, offset)] = expected_row(msg, root.name)
    assert len(expected) == 650
    assert got.keys() == expected.keys()
    for key, row in expected.items():
        mine = got[key]
        mine["value"] = bytes(mine["value"])
        assert mine == row, key


def test_unknown_and_bad_options_are_refused_by_name(
    spark: Any, two_stores: tuple[Path, Path]
) -> None:
    a, _ = two_stores
    reader = spark.read.format("rocketq-store")
    with pytest.raises(Exception, match="unknown option 'splitbyte'"):
        reader.option("splitByte", "5").load(str(a)).count()
    with pytest.raises(Exception, match="onCorruptRecord must be one of"):
        spark.read.format("rocketq-store").option("onCorruptRecord", "ignore").load(str(a)).count()


def test_topics_option_and_end_offset_select_a_deterministic_subset(
    spark: Any, two_stores: tuple[Path, Path]
) -> None:
    a, _ = two_stores
    decoded = sorted(store_decoded(a).values(), key=lambda m: m.commitlog_offset)
    cut = decoded[200].commitlog_offset
    df = (
        spark.read.format("rocketq-store")
        .option("topics", "Orders,Audit")
        .option("endOffset", str(cut))
        .option("splitBytes", "30000")
        .load(str(a))
    )
    got = sorted(r[0] for r in df.select("commitLogOffset").collect())
    want = [m.commitlog_offset for m in decoded[:200] if m.topic in ("Orders", "Audit")]
    assert got == want


def test_a_store_with_no_records_reads_as_an_empty_frame(spark: Any, tmp_path: Path) -> None:
    empty = tmp_path / "broker-c"
    (empty / "commitlog").mkdir(parents=True)
    (empty / "commitlog" / f"{0:020d}").write_bytes(bytes(64 * 1024))  # preallocated, unwritten
    df = spark.read.format("rocketq-store").load(str(empty))
    assert df.count() == 0
    with pytest.raises(Exception, match="is not a directory"):
        spark.read.format("rocketq-store").load(str(tmp_path / "missing")).count()


def test_a_corrupt_body_fails_the_read_with_its_offset_or_is_skipped(
    spark: Any, two_stores: tuple[Path, Path], tmp_path: Path
) -> None:
    import shutil

    root = tmp_path / "broker-a"
    shutil.copytree(two_stores[0], root)
    decoded = store_decoded(root)
    victim = next(m for m in sorted(decoded.values(), key=lambda m: -m.commitlog_offset) if m.body)
    segment = (
        root / "commitlog" / f"{victim.commitlog_offset // SEGMENT_BYTES * SEGMENT_BYTES:020d}"
    )
    data = bytearray(segment.read_bytes())
    at = data.index(victim.body, victim.commitlog_offset % SEGMENT_BYTES)
    data[at] ^= 0xFF
    segment.write_bytes(bytes(data))
    reader = spark.read.format("rocketq-store").option("splitBytes", "30000")
    with pytest.raises(Exception, match=f"at offset {victim.commitlog_offset}: body CRC mismatch"):
        reader.load(str(root)).count()
    skipped = reader.option("onCorruptRecord", "skip").load(str(root))
    assert skipped.count() == len(decoded) - 1


def test_the_source_is_found_by_name_in_a_new_session_without_registering(
    spark: Any, two_stores: tuple[Path, Path]
) -> None:
    fresh = spark.newSession()  # sees no per-session registration
    df = fresh.read.format("rocketq-store").option("topics", "Orders").load(str(two_stores[1]))
    assert df.count() == sum(
        1 for m in store_decoded(two_stores[1]).values() if m.topic == "Orders"
    )
