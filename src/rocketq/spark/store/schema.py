"""Column lists of the ``rocketq-store`` source: the shared read schema (``schema.py``) plus
the store's own fields, and the ``dispatch`` output (what the ConsumeQueue and IndexFile
writers need). Kept apart from the readers so that resolving a schema imports nothing heavy.
"""

from __future__ import annotations

from rocketq.spark.schema import STORE_EXTRA_COLUMNS, STORE_SCHEMA_DDL, TOPIC_COLUMNS, ddl

STORE_COLUMNS = TOPIC_COLUMNS + STORE_EXTRA_COLUMNS
__all__ = ["DISPATCH_COLUMNS", "DISPATCH_SCHEMA_DDL", "STORE_COLUMNS", "STORE_SCHEMA_DDL"]

#: One row per committed record as the dispatchers see it (``DispatchRequest``).
DISPATCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("broker", "STRING"),
    ("topic", "STRING"),
    ("queueId", "INT"),
    ("queueOffset", "BIGINT"),
    ("commitLogOffset", "BIGINT"),
    ("storeSize", "INT"),
    ("tagsCode", "BIGINT"),
    ("storeTimestampMs", "BIGINT"),
    ("keys", "STRING"),
    ("uniqKey", "STRING"),
    ("sysFlag", "INT"),
)
DISPATCH_SCHEMA_DDL = ddl(DISPATCH_COLUMNS)
