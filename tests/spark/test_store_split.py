"""Byte-range splits of commitlog segments against the store's own sequential walk (no Spark)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from rocketq.common.message_decoder import decode_message
from rocketq.errors import ConfigError, CorruptionError
from rocketq.spark.store.split import (
    CommitLogSplit,
    StoreInput,
    iter_split,
    message_decoder,
    plan_splits,
)
from rocketq.store.dump import RecordInfo, iter_commitlog_records
from rocketq.testing.record_paths import record_paths
from rocketq.testing.store import SEGMENT_BYTES
from tests.spark.store_data import MAGICS, store_decoded, write_store

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("split") / "broker-a"
    write_store(root, 500)
    return root


def sequential_offsets(root: Path) -> list[int]:
    return [r.offset for r in iter_commitlog_records(str(root)) if isinstance(r, RecordInfo)]


def read_all(splits: list[CommitLogSplit], *, verify_crc: bool = True, skip: bool = False) -> list:
    out = []
    for split in splits:
        out += list(iter_split(split, message_decoder(verify_crc), skip_corrupt=skip))
    return out


@pytest.mark.parametrize("split_bytes", [61, 1000, 4096, 20_000, SEGMENT_BYTES, 1 << 30])
def test_splits_read_exactly_the_records_of_a_sequential_scan(
    store_root: Path, split_bytes: int
) -> None:
    splits = plan_splits([StoreInput(str(store_root), "broker-a")], split_bytes)
    offsets = [m.commitlog_offset for m in read_all(splits)]
    expected = sequential_offsets(store_root)
    assert len(os.listdir(store_root / "commitlog")) >= 6
    assert len(expected) == 500
    assert offsets == expected


def test_the_fixture_store_plants_magic_codes_inside_bodies(store_root: Path) -> None:
    bodies = [m.body for m in store_decoded(store_root).values()]
    planted = [b for b in bodies if any(magic in b for magic in MAGICS)]
    assert len(planted) >= 50


def test_split_records_equal_the_stores_own_decode_field_by_field(store_root: Path) -> None:
    splits = plan_splits([StoreInput(str(store_root), "broker-a")], 777)
    mine = {m.commitlog_offset: m for m in read_all(splits)}
    theirs = store_decoded(store_root)
    assert mine.keys() == theirs.keys()
    assert mine == theirs


def test_end_offset_cuts_at_a_record_start(store_root: Path) -> None:
    expected = sequential_offsets(store_root)
    cut = expected[300]
    splits = plan_splits([StoreInput(str(store_root), "b")], 5000, end_offset=cut)
    assert [m.commitlog_offset for m in read_all(splits)] == expected[:300]


def test_split_bytes_must_be_positive(store_root: Path) -> None:
    with pytest.raises(ConfigError, match="split bytes"):
        plan_splits([StoreInput(str(store_root), "b")], 0)


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _flip_body_byte(root: Path, offset: int) -> None:
    seg = root / "commitlog" / f"{offset - offset % SEGMENT_BYTES:020d}"
    with open(seg, "r+b") as f:
        pos = offset % SEGMENT_BYTES
        msg = decode_message(f.read(), pos)
        body_pos = pos + msg.store_size - 2 - len(msg.topic) - 1 - len(msg.body) - _props_len(msg)
        f.seek(body_pos)
        byte = f.read(1)
        f.seek(body_pos)
        f.write(bytes([byte[0] ^ 0xFF]))


def _props_len(msg: object) -> int:
    from rocketq.common.properties import encode_properties

    return len(encode_properties(msg.properties))  # type: ignore[attr-defined]


def test_a_bad_body_crc_fails_with_path_and_offset_or_is_skipped(
    store_root: Path, tmp_path: Path
) -> None:
    root = _copy(store_root, tmp_path / "broker-a")
    expected = sequential_offsets(root)
    victim = next(o for o in expected if decode_message(_record(root, o)).body)
    _flip_body_byte(root, victim)
    splits = plan_splits([StoreInput(str(root), "b")], 3000)
    with pytest.raises(CorruptionError) as err:
        read_all(splits)
    assert err.value.offset == victim
    assert "CRC" in err.value.reason
    assert err.value.path.endswith(f"{victim - victim % SEGMENT_BYTES:020d}")
    skipped = [m.commitlog_offset for m in read_all(splits, skip=True)]
    assert skipped == [o for o in expected if o != victim]
    unchecked = [m.commitlog_offset for m in read_all(splits, verify_crc=False)]
    assert unchecked == expected


def _record(root: Path, offset: int) -> bytes:
    seg = root / "commitlog" / f"{offset - offset % SEGMENT_BYTES:020d}"
    data = seg.read_bytes()
    pos = offset % SEGMENT_BYTES
    (size,) = struct.unpack_from(">i", data, pos)
    return data[pos : pos + size]


def test_a_smashed_header_is_skipped_by_resynchronising(store_root: Path, tmp_path: Path) -> None:
    root = _copy(store_root, tmp_path / "broker-a")
    expected = sequential_offsets(root)
    victim = expected[100]
    seg = root / "commitlog" / f"{victim - victim % SEGMENT_BYTES:020d}"
    with open(seg, "r+b") as f:
        f.seek(victim % SEGMENT_BYTES)
        f.write(b"\xee" * 40)
    splits = plan_splits([StoreInput(str(root), "b")], 2048)
    with pytest.raises(CorruptionError) as err:
        read_all(splits)
    assert err.value.offset == victim
    skipped = [m.commitlog_offset for m in read_all(splits, skip=True)]
    assert skipped == [o for o in expected if o != victim]


@pytest.mark.parametrize("native", [True, False], ids=["c", "python"])
def test_a_torn_tail_in_the_last_segment_ends_the_data_as_recovery_does(
    store_root: Path, tmp_path: Path, native: bool
) -> None:
    root = _copy(store_root, tmp_path / "broker-a")
    expected = sequential_offsets(root)
    torn = expected[-5]
    seg = root / "commitlog" / f"{torn - torn % SEGMENT_BYTES:020d}"
    assert seg == sorted((root / "commitlog").iterdir())[-1]
    with open(seg, "r+b") as f:
        f.seek(torn % SEGMENT_BYTES + 4)
        f.write(b"\0\0\0\0")  # the magic code of a record half written
    with record_paths(native):  # the data end is the store's scan, on either path
        splits = plan_splits([StoreInput(str(root), "b")], 1500)
    assert [m.commitlog_offset for m in read_all(splits)] == expected[:-5]
    assert sequential_offsets(root) == expected[:-5]


def test_a_whole_record_copied_into_a_body_never_starts_a_split(
    store_root: Path, tmp_path: Path
) -> None:
    from rocketq.store.message_store import MessageStore
    from tests.spark.store_data import message_for, store_config

    root = _copy(store_root, tmp_path / "broker-a")
    first = sequential_offsets(root)[0]
    fake = _record(root, first)  # a genuine record, magic code and all, as a body
    store = MessageStore(store_config(root))
    store.load()
    store.start()
    try:
        import random

        msg = message_for(random.Random(1), 3)
        msg.body = fake + fake[:120]
        assert store.put_message(msg).status.name == "PUT_OK"
    finally:
        store.shutdown()
    expected = sequential_offsets(root)
    host = expected[-1]
    seg = root / "commitlog" / f"{host - host % SEGMENT_BYTES:020d}"
    base = int(seg.name)
    (whole,) = plan_splits([StoreInput(str(root), "b")], 1 << 30)[-1:]
    assert whole.path == str(seg)
    decode = message_decoder(True)
    for start in range(host - base, host - base + len(msg.body) + 100):
        head = CommitLogSplit("b", str(seg), base, 0, start, whole.data_end)
        tail = CommitLogSplit("b", str(seg), base, start, whole.end, whole.data_end)
        got = [m.commitlog_offset for s in (head, tail) for m in iter_split(s, decode)]
        assert got == [o for o in expected if o >= base], start


def test_store_columns_are_the_shared_store_rows_transposed(store_root: Path) -> None:
    from rocketq.spark.schema import store_row
    from rocketq.spark.store.rows import message_columns
    from rocketq.spark.store.schema import STORE_COLUMNS

    splits = plan_splits([StoreInput(str(store_root), "broker-a")], 1 << 30)
    msgs = read_all(splits)
    rows = [store_row(m, "broker-a") for m in msgs]
    expected = [list(c) for c in zip(*rows, strict=True)]
    properties = [n for n, (name, _) in enumerate(STORE_COLUMNS) if name == "properties"]
    for n in properties:  # item lists in store_row, the dicts themselves in the columns
        expected[n] = [dict(items) for items in expected[n]]
    assert properties
    assert message_columns(msgs, "broker-a") == expected
