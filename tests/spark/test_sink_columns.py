"""The sink's columnar conversion (``batch_to_messages``) against its reference,
``row_to_message`` per row: the same messages, byte for byte in a batch body."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from rocketq.common.message_decoder import encode_batch_messages  # noqa: E402
from rocketq.errors import ClientError  # noqa: E402
from rocketq.spark.topic.options import WriteOptions  # noqa: E402
from rocketq.spark.topic.sink import batch_to_messages, row_to_message  # noqa: E402

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
OPTIONAL = st.none() | TEXT


def reference(batch: Any, options: WriteOptions) -> list[Any]:
    names = batch.schema.names
    columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
    return [
        row_to_message(dict(zip(names, values, strict=True)), options)
        for values in zip(*columns, strict=True)
    ]


def same(batch: Any, options: WriteOptions) -> None:
    fast, ref = batch_to_messages(batch, options), reference(batch, options)
    assert [k for _m, k in fast] == [k for _m, k in ref]
    assert [m.topic for m, _k in fast] == [m.topic for m, _k in ref]
    assert [m.properties for m, _k in fast] == [m.properties for m, _k in ref]
    assert encode_batch_messages([m for m, _k in fast]) == encode_batch_messages(
        [m for m, _k in ref]
    )


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(TEXT, OPTIONAL, OPTIONAL), min_size=1, max_size=20),
    binary=st.booleans(),
)
def test_the_columnar_conversion_matches_the_row_reference(
    rows: list[tuple[str, str | None, str | None]], binary: bool
) -> None:
    values = [v.encode() if binary else v for v, _k, _t in rows]
    batch = pa.RecordBatch.from_pydict(
        {
            "value": pa.array(values, pa.binary() if binary else pa.string()),
            "key": pa.array([k for _v, k, _t in rows], pa.string()),
            "tags": pa.array([t for _v, _k, t in rows], pa.string()),
        }
    )
    same(batch, WriteOptions.parse({"nameServer": "127.0.0.1:1", "topic": "T"}))


def test_a_topic_column_and_the_slow_columns_convert_as_the_reference() -> None:
    options = WriteOptions.parse({"nameServer": "127.0.0.1:1"})
    by_column = pa.RecordBatch.from_pydict({"value": ["a", "b"], "topic": ["T1", "T2"]})
    same(by_column, options)
    slow = pa.RecordBatch.from_pydict(
        {
            "value": ["a", "b"],
            "topic": ["T1", "T2"],
            "keys": [["x", "y"], None],
            "shardingKey": ["s", None],
            "properties": pa.array([[("p", "1")], None], pa.map_(pa.string(), pa.string())),
        }
    )
    same(slow, options)


def test_a_null_value_or_a_missing_topic_fails_the_batch() -> None:
    options = WriteOptions.parse({"nameServer": "127.0.0.1:1"})
    null_value = pa.RecordBatch.from_pydict({"value": ["a", None], "topic": ["T", "T"]})
    with pytest.raises(ClientError, match="null value"):
        batch_to_messages(null_value, options)
    no_topic = pa.RecordBatch.from_pydict({"value": ["a", "b"], "topic": ["T", None]})
    with pytest.raises(ClientError, match="no topic"):
        batch_to_messages(no_topic, options)
