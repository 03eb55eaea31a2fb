"""The read schema shared by the topic reader (``rocketq``) and the store reader.

One column list, in the issue's order; the store reader appends ``STORE_EXTRA_COLUMNS``.
Spark sees it as a DDL string; rows cross to the JVM as Arrow record batches built against
``arrow_schema`` (pyarrow is imported only when that is called).
"""

from __future__ import annotations

from typing import Any

#: (column, Spark SQL type) of every row the topic reader returns.
READ_COLUMNS: tuple[tuple[str, str], ...] = (
    ("topic", "STRING"),
    ("broker", "STRING"),
    ("queueId", "INT"),
    ("queueOffset", "BIGINT"),
    ("commitLogOffset", "BIGINT"),
    ("msgId", "STRING"),
    ("key", "STRING"),
    ("keys", "STRING"),
    ("tags", "STRING"),
    ("value", "BINARY"),
    ("properties", "MAP<STRING, STRING>"),
    ("bornTimestamp", "TIMESTAMP"),
    ("timestamp", "TIMESTAMP"),
    ("bornHost", "STRING"),
    ("storeHost", "STRING"),
    ("reconsumeTimes", "INT"),
)

#: What the store reader adds: the record's sysFlag and TOTALSIZE.
STORE_EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sysFlag", "INT"),
    ("storeSize", "INT"),
)


def ddl(columns: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)


READ_SCHEMA_DDL = ddl(READ_COLUMNS)
STORE_SCHEMA_DDL = ddl(READ_COLUMNS + STORE_EXTRA_COLUMNS)


def arrow_type(kind: str) -> Any:
    """The pyarrow type of a Spark SQL type used above."""
    import pyarrow as pa

    simple = {
        "STRING": pa.string(),
        "INT": pa.int32(),
        "BIGINT": pa.int64(),
        "BINARY": pa.binary(),
        "BOOLEAN": pa.bool_(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "MAP<STRING, STRING>": pa.map_(pa.string(), pa.string()),
    }
    return simple[kind]


def arrow_schema(columns: tuple[tuple[str, str], ...]) -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(name, arrow_type(kind)) for name, kind in columns])
