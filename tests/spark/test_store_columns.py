"""The columnar split reader equals the row reader (the store's ``decode_message``) row for row.

Segments are laid out here record by record (``encode_message``, or raw bytes for what the
encoder cannot produce) so that every shape of record is covered: the golden vectors, v2
topics, IPv6 hosts, records without UNIQ_KEY, odd properties strings, CRC and header damage,
torn tails, BLANK tails and split boundaries anywhere.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rocketq.common.message import MessageExt  # noqa: E402
from rocketq.common.message_const import MessageSysFlag  # noqa: E402
from rocketq.common.message_decoder import encode_message  # noqa: E402
from rocketq.common.record_layout import (  # noqa: E402
    BLANK_MAGIC_CODE,
    BLANK_STRUCT,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
)
from rocketq.errors import CorruptionError  # noqa: E402
from rocketq.spark.schema import arrow_schema  # noqa: E402
from rocketq.spark.store.columns import columnar_batches  # noqa: E402
from rocketq.spark.store.rows import message_batches  # noqa: E402
from rocketq.spark.store.schema import STORE_COLUMNS  # noqa: E402
from rocketq.spark.store.split import (  # noqa: E402
    CommitLogSplit,
    StoreInput,
    iter_split,
    message_decoder,
    plan_splits,
)
from rocketq.testing.vectors import OFFSETS, record  # noqa: E402

_PROPLEN = struct.Struct(">h")
_TOTAL = struct.Struct(">i")
MAGICS = [m.to_bytes(4, "big") for m in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2)]


def with_raw_properties(message: MessageExt, raw: bytes) -> bytes:
    """``message``'s record with its properties string replaced by ``raw`` (any bytes)."""
    message.properties = {}
    rec = encode_message(message)
    assert rec[-2:] == b"\0\0"
    rec[-2:] = _PROPLEN.pack(len(raw))
    rec += raw
    rec[:4] = _TOTAL.pack(len(rec))
    return bytes(rec)


def lay_out(
    records: list[bytes | Any], base: int, size: int, *, blank: bool
) -> tuple[bytes, list[int]]:
    """Records (bytes, or MessageExt to encode) at ``base``, PHYSICALOFFSETs set; a BLANK tail
    when ``blank`` (a full segment), zeros otherwise."""
    data = bytearray()
    offsets = []
    for item in records:
        rec = bytearray(encode_message(item) if isinstance(item, MessageExt) else item)
        rec[28:36] = (base + len(data)).to_bytes(8, "big", signed=True)
        offsets.append(base + len(data))
        data += rec
    assert len(data) + (8 if blank else 0) <= size, "segment too small for the records"
    if blank:
        data += BLANK_STRUCT.pack(size - len(data), BLANK_MAGIC_CODE)
    data += bytes(size - len(data))
    return bytes(data), offsets


def write_segments(root: Path, segments: list[bytes], size: int) -> None:
    log = root / "commitlog"
    log.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(segments):
        (log / f"{i * size:020d}").write_bytes(data)


def both(split: CommitLogSplit, *, verify_crc: bool = True, skip: bool = False, **kw: Any) -> Any:
    """(row reader table, columnar reader table) of one split."""
    schema = arrow_schema(STORE_COLUMNS)
    msgs = iter_split(split, message_decoder(verify_crc), skip_corrupt=skip)
    topics = kw.get("topics")
    if topics is not None:
        msgs = (m for m in msgs if m.topic in topics)
    rows = pa.Table.from_batches(list(message_batches(msgs, split.broker, 7)), schema=schema)
    cols = columnar_batches(split, verify_crc=verify_crc, skip_corrupt=skip, batch_rows=5, **kw)
    return rows, pa.Table.from_batches(list(cols), schema=schema)


def assert_same_rows(root: Path, split_bytes: int, **kw: Any) -> int:
    """Every split of the store read both ways; returns the row count."""
    count = 0
    for split in plan_splits([StoreInput(str(root), "broker-x")], split_bytes):
        rows, cols = both(split, **kw)
        assert cols.equals(rows), _first_difference(rows, cols)
        count += rows.num_rows
    return count


def _first_difference(rows: Any, cols: Any) -> str:
    if rows.num_rows != cols.num_rows:
        return f"{rows.num_rows} rows by the row reader, {cols.num_rows} by the columnar one"
    for name in rows.column_names:
        a, b = rows[name].to_pylist(), cols[name].to_pylist()
        if a != b:
            i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
            return f"column {name} row {i}: {a[i]!r} != {b[i]!r}"
    return "schemas differ"


def msg(n: int, **fields: Any) -> MessageExt:
    base: dict[str, Any] = {
        "topic": f"T{n % 3}",
        "body": bytes([n % 251]) * (n * 7 % 300),
        "properties": {"UNIQ_KEY": f"U{n}", "KEYS": f"k{n} x{n}", "TAGS": f"t{n % 2}"},
        "queue_id": n % 4,
        "queue_offset": n,
        "born_timestamp": 1_700_000_000_000 + n,
        "store_timestamp": 1_700_000_000_500 + n,
        "born_host": ("10.0.0.7", 40000 + n),
        "store_host": ("127.0.0.1", 10911),
        "reconsume_times": n % 3,
    }
    base.update(fields)
    return MessageExt(**base)


# ---------------------------------------------------------------------- fixed cases


def outcome(split: CommitLogSplit, **kw: Any) -> tuple[str, Any, Any]:
    """What each reader makes of ``split``: equal tables, or the same error text."""
    try:
        rows, cols = both(split, **kw)
    except CorruptionError as exc:
        with pytest.raises(CorruptionError) as got:
            list(columnar_batches(split, verify_crc=kw.get("verify_crc", True)))
        return "error", str(exc), str(got.value)
    return "rows", rows, cols


def test_the_golden_vectors_read_the_same_both_ways(tmp_path: Path) -> None:
    data = b"".join(record(n) for n in (1, 2, 3))
    assert [OFFSETS[n] for n in (1, 2, 3)] == [0, 210, 472]
    segment, _ = lay_out([data], 0, 4096, blank=True)
    write_segments(tmp_path, [segment], 4096)
    for split_bytes in (9, 100, 211, 473, 4096):
        assert assert_same_rows(tmp_path, split_bytes) == 3


def test_a_store_written_by_the_message_store_reads_the_same_both_ways(tmp_path: Path) -> None:
    from tests.spark.store_data import write_store

    sent = write_store(tmp_path, 300, transactional=True)  # several 64 KiB segments
    assert len(os.listdir(tmp_path / "commitlog")) > 3
    for split_bytes in (5000, 1 << 16):
        assert assert_same_rows(tmp_path, split_bytes) == len(sent)


def mixed_messages() -> list[MessageExt]:
    """Every shape of record the encoder makes."""
    v6 = ("2001:db8::10", 10912)
    return [
        msg(0),
        msg(1, topic="V2-" + "t" * 200),  # v2 magic: a 2-byte TOPICLEN
        msg(2, born_host=("2001:db8::7", 5000)),  # BORNHOST_V6
        msg(3, store_host=v6, properties={"KEYS": "only"}),  # STOREHOST_V6, offset msgId
        msg(4, born_host=("::1", 1), store_host=v6, properties={}),  # both v6, no properties
        msg(5, body=b""),
        msg(6, body=b"x" * 50 + MAGICS[0] + b"y" * 40 + MAGICS[1]),
        msg(7, topic="Tópico-ü", properties={"KEYS": "ключ", "TAGS": "标签", "UNIQ_KEY": "U7"}),
        msg(8, sys_flag=MessageSysFlag.COMPRESSED_FLAG, body=b"\x78\x9c not inflated"),
        msg(9, sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE, properties={"TAGS": "a"}),
        msg(10, properties={"KEYS": " lead space", "a": "b\x01c"}),
    ]


def test_every_record_shape_reads_the_same_in_splits_of_every_size(tmp_path: Path) -> None:
    size = 4096
    batch = mixed_messages()
    segments = [
        lay_out(batch[:5], 0, size, blank=True)[0],
        lay_out(batch[5:], size, size, blank=True)[0],
        lay_out(batch[2:9], 2 * size, size, blank=False)[0],  # the last one: no BLANK tail
    ]
    write_segments(tmp_path, segments, size)
    for split_bytes in (37, 256, 1000, 1999, size):
        assert assert_same_rows(tmp_path, split_bytes) == 5 + 6 + 7
    assert assert_same_rows(tmp_path, size, verify_crc=False) == 18
    assert assert_same_rows(tmp_path, 999, topics=frozenset({"T0", "T1"})) > 0


RAW_PROPERTIES = [
    b"UNIQ_KEY\x01u\x02KEYS\x01a b\x02",
    b"KEYS\x01a\x02KEYS\x01b\x02",  # a name twice: the dict keeps the last value
    b"\x02\x02TAGS\x01t",  # no final separator, empty segments first
    b"\x01v\x02n\x01\x02noseparator\x02x\x01y\x01z\x02",  # empty name, empty value, 0x01 in value
    b"ab",
    b"",
    "ñame\x01välue\x02".encode(),
]


def test_odd_properties_strings_read_the_same(tmp_path: Path) -> None:
    size = 8192
    records = [with_raw_properties(msg(n), raw) for n, raw in enumerate(RAW_PROPERTIES * 3)]
    write_segments(tmp_path, [lay_out(records, 0, size, blank=True)[0]], size)
    for split_bytes in (64, 700, size):
        assert assert_same_rows(tmp_path, split_bytes) == 21


def _damaged_store(root: Path, damage: int) -> list[int]:
    """A store whose first segment's record 4 (of 9) is damaged in one of several ways."""
    size = 8192
    records = [bytearray(encode_message(msg(n))) for n in range(9)]
    bad = records[4]
    if damage == 0:
        bad[-1] ^= 0xFF  # a properties byte: no longer the same map
        bad[-3] = 0xC3  # and not UTF-8
    elif damage == 1:
        bad[100] ^= 0x01  # a body byte: the CRC fails
    elif damage == 2:
        bad[28:36] = (123).to_bytes(8, "big")  # PHYSICALOFFSET from elsewhere
    elif damage == 3:
        bad[4:8] = (0x12345678).to_bytes(4, "big")  # not a magic code
    elif damage == 4:
        bad[84:88] = (10_000).to_bytes(4, "big")  # BODYLENGTH past the record
    elif damage == 5:
        bad[0:4] = (60).to_bytes(4, "big")  # TOTALSIZE below the minimum
    data, offsets = lay_out(records, 0, size, blank=True)
    if damage == 2:
        data = data[: offsets[4] + 28] + (123).to_bytes(8, "big") + data[offsets[4] + 36 :]
    last, _ = lay_out([msg(9)], size, size, blank=False)
    write_segments(root, [data, last], size)  # not the last segment: recovery's end is later
    return offsets


@pytest.mark.parametrize("damage", range(6))
def test_damaged_records_fail_or_are_skipped_the_same_way(tmp_path: Path, damage: int) -> None:
    _damaged_store(tmp_path, damage)
    whole, _ = plan_splits([StoreInput(str(tmp_path), "b")], 8192)
    assert outcome(whole)[0] == "error"  # the damage is seen
    assert outcome(whole, skip=True)[0] == "rows"
    for split_bytes in (333, 8192):
        for split in plan_splits([StoreInput(str(tmp_path), "b")], split_bytes):
            for kw in ({}, {"skip": True}, {"verify_crc": False}):
                kind, first, second = outcome(split, **kw)
                if kind == "error":
                    assert first == second
                else:
                    assert second.equals(first), _first_difference(first, second)


def test_a_torn_last_record_ends_the_data_for_both_readers(tmp_path: Path) -> None:
    size = 4096
    full, offsets = lay_out([msg(n) for n in range(6)], 0, size, blank=False)
    torn = full[: offsets[5] + 40] + bytes(size - offsets[5] - 40)  # half a header survives
    write_segments(tmp_path, [torn], size)
    for split_bytes in (50, 500, size):
        assert assert_same_rows(tmp_path, split_bytes) == 5


def test_a_split_cut_inside_any_record_hands_it_to_the_split_it_starts_in(
    tmp_path: Path,
) -> None:
    size = 4096
    data, offsets = lay_out(mixed_messages()[:6], 0, size, blank=True)
    write_segments(tmp_path, [data], size)
    (whole,) = plan_splits([StoreInput(str(tmp_path), "b")], size)
    expected = both(whole)[0]
    for cut in range(1, offsets[-1] + 20, 7):
        head = CommitLogSplit("b", whole.path, 0, 0, cut, whole.data_end)
        tail = CommitLogSplit("b", whole.path, 0, cut, size, whole.data_end)
        parts = [
            pa.Table.from_batches(
                list(columnar_batches(s, verify_crc=True)), schema=arrow_schema(STORE_COLUMNS)
            )
            for s in (head, tail)
        ]
        assert pa.concat_tables(parts).equals(expected), cut


def test_batches_hold_at_most_batch_rows_rows(tmp_path: Path) -> None:
    size = 8192
    write_segments(tmp_path, [lay_out([msg(n) for n in range(20)], 0, size, blank=True)[0]], size)
    (split,) = plan_splits([StoreInput(str(tmp_path), "b")], size)
    sizes = [b.num_rows for b in columnar_batches(split, verify_crc=True, batch_rows=6)]
    assert sizes == [6, 6, 6, 2]


# ---------------------------------------------------------------------- generated


HOSTS = st.one_of(
    st.tuples(st.sampled_from(["10.0.0.1", "127.0.0.1", "192.168.9.9"]), st.integers(0, 65535)),
    st.tuples(st.sampled_from(["::1", "2001:db8::1", "fe80::2"]), st.integers(0, 65535)),
)
TEXT = st.text(
    st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)), max_size=12
)
BODY = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda a, m, b: a + m + b,
        st.binary(max_size=40),
        st.sampled_from(MAGICS),
        st.binary(max_size=40),
    ),
)


@st.composite
def messages(draw: st.DrawFn) -> MessageExt:
    props = draw(
        st.dictionaries(
            st.sampled_from(["UNIQ_KEY", "KEYS", "TAGS", "a", "DELAY"]) | TEXT, TEXT, max_size=5
        )
    )
    return MessageExt(
        topic=draw(st.one_of(TEXT, st.text(min_size=100, max_size=140))),
        body=draw(BODY),
        properties={k: v for k, v in props.items() if k},
        queue_id=draw(st.integers(0, 2**31 - 1)),
        queue_offset=draw(st.integers(0, 2**62)),
        sys_flag=draw(st.sampled_from([0, 1, 4, 8, 12, 0x100])),
        born_timestamp=draw(st.integers(0, 2**45)),
        store_timestamp=draw(st.integers(0, 2**45)),
        born_host=draw(HOSTS),
        store_host=draw(HOSTS),
        reconsume_times=draw(st.integers(0, 16)),
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(messages(), min_size=1, max_size=25), split_bytes=st.integers(64, 9000))
def test_generated_records_read_the_same_in_generated_splits(
    tmp_path_factory: pytest.TempPathFactory, batch: list[MessageExt], split_bytes: int
) -> None:
    root = tmp_path_factory.mktemp("gen")
    size = 1 << 16
    write_segments(root, [lay_out(list(batch), 0, size, blank=False)[0]], size)
    assert assert_same_rows(root, split_bytes) == len(batch)
