"""The C split of a pull body into Arrow columns (``_native``'s ``pull_columns``) against the
numpy path it twins (``pull_body.numpy_batch``) and the row decoder, without sockets.

Bodies are built with the record codec: IPv4 and IPv6 hosts, records with and without
KEYS/TAGS/UNIQ_KEY (the msgId then is the offset msgId), compressed bodies, properties that
name one property twice, more properties than the C walk takes, bad UTF-8 in a topic or in
properties, and every cut of a body. Both columnar paths must stop at the same record with
the same rows before it; ``body_batches`` must give the row decoder's rows on either path.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_messages, encode_message
from rocketq.errors import DecodeError
from rocketq.spark.schema import RecordBatchBuilder, topic_row
from rocketq.spark.topic.pull_body import TOPIC_SCHEMA, body_batches, native_batch, numpy_batch

COMPILED = native_record.COMPILED
pytestmark = pytest.mark.skipif(COMPILED is None, reason="the native module is not built")
BROKER = "broker-a"


def record(i: int, **kw: Any) -> bytes:
    """One commitlog record; ``properties`` (bytes) replaces the encoded properties."""
    msg = MessageExt(topic=kw.get("topic", "PullColumns"), body=kw.get("body", b"v%d" % i))
    for name, value in kw.get(
        "props", {"KEYS": f"k{i} x", "TAGS": "t", "UNIQ_KEY": f"U{i}"}
    ).items():
        msg.properties[name] = value
    msg.queue_id, msg.queue_offset, msg.commitlog_offset = 3, i, 1000 + 300 * i
    msg.born_timestamp, msg.store_timestamp = 1_700_000_000_000 + i, 1_700_000_000_005 + i
    msg.born_host = kw.get("born", ("10.0.0.1", 40000 + i))
    msg.store_host = kw.get("store", ("127.0.0.1", 10911))
    msg.reconsume_times = i % 3
    if kw.get("compressed"):
        msg.body = zlib.compress(msg.body or b"")
        msg.sys_flag |= MessageSysFlag.COMPRESSED_FLAG
    return bytes(encode_message(msg, kw.get("properties")))


def rows_of(batch: Any) -> list[dict[str, Any]]:
    return [] if batch is None else pa.Table.from_batches([batch]).to_pylist()


def columnar(body: bytes) -> tuple[list[dict[str, Any]], int]:
    """The C path's leading rows and where it stopped."""
    assert COMPILED is not None
    count, stop, buffers = COMPILED.pull_columns(body)
    return rows_of(native_batch(count, buffers, BROKER) if count else None), stop


def assert_twins_agree(body: bytes) -> int:
    expected, stop = numpy_batch(body, BROKER)
    got, native_stop = columnar(body)
    assert got == rows_of(expected)
    assert native_stop == stop
    return len(got)


def row_path(body: bytes) -> list[dict[str, Any]]:
    builder = RecordBatchBuilder()
    for msg in decode_messages(body, decompress=True):
        builder.append(topic_row(msg, BROKER))
    return pa.Table.from_batches([builder.flush()]).to_pylist()


def both_paths(body: bytes) -> Iterator[list[dict[str, Any]]]:
    for native in (True, False):
        native_record.use(native)
        try:
            yield pa.Table.from_batches(body_batches(body, BROKER), TOPIC_SCHEMA).to_pylist()
        finally:
            native_record.use(True)


def test_the_c_split_equals_the_numpy_path_and_the_row_decoder_for_plain_records() -> None:
    plain = [
        record(0),
        record(1, props={}),  # no properties: no key, tags; msgId is the offset msgId
        record(2, props={"TAGS": "only"}, born=("::1", 5), store=("fe80::2", 10911)),
        record(3, props={"KEYS": " lead", "UNIQ_KEY": "U3", "a": "b" * 300}, body=b""),
        record(4, topic="Töpic", props={"KEYS": "ключ", "TAGS": "標籤"}, body=bytes(range(256))),
    ]
    body = b"".join(plain)
    assert assert_twins_agree(body) == 5
    for got in both_paths(body):
        assert got == row_path(body)
    ids = [r["msgId"] for r in row_path(body)]
    assert ids[0] == "U0"
    assert len(ids[1]) == 32  # the offset msgId: store host, port and offset in hex
    for cut in range(len(body) + 1):  # a body cut anywhere: the whole records before the cut
        assert_twins_agree(body[:cut])


@pytest.mark.parametrize(
    "odd",
    [
        record(9, compressed=True),
        record(9, properties=b"KEYS\x01a\x02KEYS\x01b\x02"),  # a name twice
        record(9, props={f"p{k}": "v" for k in range(70)}),  # more than the C walk takes
    ],
    ids=["compressed", "repeated-name", "many-properties"],
)
def test_the_row_decoder_takes_over_from_a_record_the_columns_leave(odd: bytes) -> None:
    body = record(0) + record(1) + odd + record(10)
    count, stop, _buffers = COMPILED.pull_columns(body) if COMPILED else (0, 0, ())
    assert (count, stop) == (2, len(record(0)) + len(record(1)))
    for got in both_paths(body):
        assert got == row_path(body)


def test_bad_utf8_stops_both_paths_at_that_record_and_the_row_decoder_refuses_it() -> None:
    good = record(0)
    for spoiled in (
        record(1, topic="TopicÄ").replace("Ä".encode(), b"\xff\xfe"),
        record(1, properties=b"TAGS\x01\xc3\x28\x02"),
    ):
        body = good + spoiled
        assert assert_twins_agree(body) == 1
        for native in (True, False):
            native_record.use(native)
            try:
                with pytest.raises((DecodeError, UnicodeDecodeError)):
                    body_batches(body, BROKER)
            finally:
                native_record.use(True)


texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x01\x02"), max_size=8
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(["KEYS", "TAGS", "UNIQ_KEY", "a", "é"]), texts),
            st.binary(max_size=40),
            st.booleans(),
        ),
        max_size=6,
    ),
    st.integers(min_value=0, max_value=40),
)
def test_the_c_split_equals_the_numpy_path_on_generated_bodies(
    specs: list[tuple[dict[str, str], bytes, bool]], trim: int
) -> None:
    body = b"".join(
        record(i, props=props, body=value, born=("::7", 1) if v6 else ("1.2.3.4", 1))
        for i, (props, value, v6) in enumerate(specs)
    )
    assert assert_twins_agree(body) == len(specs)
    assert_twins_agree(body[: max(0, len(body) - trim)])
