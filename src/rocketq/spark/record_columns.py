"""Arrow columns of the read schema from gathered record fields (both sources share them).

``record_arrays`` gives one array per column of ``TOPIC_COLUMNS + STORE_EXTRA_COLUMNS``
(``schema.store_row`` transposed): the topic source keeps the leading ``TOPIC_COLUMNS``, the
store-file source all of them. msgId is the UNIQ_KEY property where a record has one, else
the offset msgId (store host and physical offset), as ``schema.topic_row``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketq.common.message_const import KEY_SEPARATOR, PROPERTY_KEYS, PROPERTY_TAGS
from rocketq.common.message_const import (
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX as PROPERTY_UNIQ_KEY,
)
from rocketq.common.message_id import bytes_to_host, message_id_from_host_bytes
from rocketq.spark.fields import RecordFields
from rocketq.spark.schema import TIMESTAMP_TYPE_LOG_APPEND, host_text

TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")


def record_arrays(f: RecordFields, broker: str) -> list[Any]:
    """The arrays of ``STORE_COLUMNS`` (topic columns first) for the records of ``f``."""
    n = f.count
    props = f.properties
    keys = props.lookup(PROPERTY_KEYS)
    uniq = props.lookup(PROPERTY_UNIQ_KEY)
    if uniq.null_count:
        uniq = pc.coalesce(uniq, offset_msg_ids(uniq, f.store_host, f.phy))
    return [
        pc.list_element(pc.split_pattern(keys, KEY_SEPARATOR, max_splits=1), 0),
        f.body,
        f.topic,
        pa.repeat(pa.scalar(broker, pa.string()), n),
        pa.array(f.queue_id, pa.int32()),
        pa.array(f.queue_offset, pa.int64()),
        pa.array(f.phy, pa.int64()),
        uniq,
        keys,
        props.lookup(PROPERTY_TAGS),
        props.map,
        pa.array(f.born_ts * 1000, pa.int64()).view(TIMESTAMP_TYPE),
        pa.array(f.store_ts * 1000, pa.int64()).view(TIMESTAMP_TYPE),
        pa.array(np.full(n, TIMESTAMP_TYPE_LOG_APPEND, np.int32), pa.int32()),
        host_texts(f.born_host),
        host_texts(f.store_host),
        pa.array(f.reconsume, pa.int32()),
        pa.array(f.sys_flag, pa.int32()),
        pa.array(f.total, pa.int32()),
    ]


def host_texts(raw: Any) -> Any:
    """``ip:port`` of each host: formatted once per distinct address, then taken."""
    encoded = pc.dictionary_encode(raw)
    texts = [host_text(bytes_to_host(h)) for h in encoded.dictionary.to_pylist()]
    return pa.array(texts, pa.string()).take(encoded.indices)


def offset_msg_ids(uniq: Any, store_host: Any, phy: Any) -> Any:
    """The offset msgId (``store_host`` bytes and ``phy``) of each row where ``uniq`` is
    null, null where it is not."""
    missing = np.flatnonzero(np.asarray(uniq.is_null().to_numpy(zero_copy_only=False)))
    ids: list[str | None] = [None] * len(uniq)
    for i in missing.tolist():
        ids[i] = message_id_from_host_bytes(store_host[i].as_py(), int(phy[i]))
    return pa.array(ids, pa.string())
