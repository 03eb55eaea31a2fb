"""``rebuild``: ConsumeQueue and IndexFile files from a store's commitlog, on Spark.

Theory of operation. The executors decode the commitlog splits into the reput thread's
``DispatchRequest`` rows (``output=dispatch``: the store's own ``check_message_and_return_size``,
so tags codes, keys and transaction flags are exactly what the store dispatched). Then:

* consume queues: rows are shuffled by (topic, queueId) and sorted by queue offset; each
  task writes its queues with the store's own ``ConsumeQueue`` (same code, same bytes:
  fillers before a queue's first surviving offset included) and reports each queue's count
  and gaps (a gap means commitlog data is missing; the writer fills it with blank units, as
  the store's dispatch would);
* index files: one task per file (``index_rebuild``): a key's file follows from its number
  in the store-wide key sequence, which the splits count first.

Everything is written under ``<out>/.rebuild-<id>`` first and renamed to ``<out>/consumequeue``
and ``<out>/index`` at the end, so a failed job leaves no half-written tree. Installing the
result into a store (broker stopped) is a copy; the commitlog is never touched.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rocketq.errors import ConfigError
from rocketq.spark.store.index_rebuild import write_index_files
from rocketq.spark.store.jobs import TRANSACTION_SKIPPED, Progress, StageProgress, read_store
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.config import StoreConfig
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.paths import fsync_dir

QUEUE_RESULT_DDL = "topic STRING, queueId INT, units BIGINT, gaps BIGINT"


@dataclass(slots=True)
class RebuildResult:
    queues: list[tuple[str, int, int, int]] = field(default_factory=list)  # topic, id, units, gaps
    index_files: list[str] = field(default_factory=list)
    index_keys: int = 0

    @property
    def units(self) -> int:
        return sum(q[2] for q in self.queues)


def rebuild(
    spark: Any,
    store: str,
    out: str,
    config: StoreConfig,
    *,
    progress: Progress | None = None,
    split_bytes: int | None = None,
) -> RebuildResult:
    """Write ``<out>/consumequeue`` and ``<out>/index`` for ``store``'s commitlog."""
    for name in ("consumequeue", "index"):
        if os.path.exists(os.path.join(out, name)):
            raise ConfigError(f"{os.path.join(out, name)} exists; rebuild writes a fresh tree")
    tmp = os.path.join(out, f".rebuild-{uuid.uuid4().hex[:12]}")
    os.makedirs(tmp)
    try:
        extra = {"messageDelayLevel": config.message_delay_level}
        df = read_store(spark, [store], split_bytes=split_bytes, output="dispatch", extra=extra)
        result = RebuildResult()
        with StageProgress(spark, progress, "rebuild consume queues"):
            result.queues = _write_consume_queues(df, tmp, config.mapped_file_size_consume_queue)
        if config.message_index_enable:
            with StageProgress(spark, progress, "rebuild index"):
                result.index_keys, result.index_files = write_index_files(
                    df,
                    os.path.join(tmp, "index"),
                    config.max_hash_slot_num,
                    config.max_index_num,
                )
        for name in ("consumequeue", "index"):
            if os.path.isdir(os.path.join(tmp, name)):
                os.rename(os.path.join(tmp, name), os.path.join(out, name))
        fsync_dir(out)
        result.index_files = [os.path.join(out, "index", f) for f in result.index_files]
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_consume_queues(df: Any, tmp: str, file_size: int) -> list[tuple[str, int, int, int]]:
    root = os.path.join(tmp, "consumequeue")

    def write_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        writer = _QueueWriter(root, file_size)
        for batch in batches:
            cols = batch.to_pydict()
            for row in zip(
                cols["topic"],
                cols["queueId"],
                cols["queueOffset"],
                cols["commitLogOffset"],
                cols["storeSize"],
                cols["tagsCode"],
                strict=True,
            ):
                writer.put(*row)
        writer.close()
        rows = writer.results
        yield pa.RecordBatch.from_pylist(
            [dict(zip(("topic", "queueId", "units", "gaps"), r, strict=True)) for r in rows],
            schema=pa.schema(
                [
                    ("topic", pa.string()),
                    ("queueId", pa.int32()),
                    ("units", pa.int64()),
                    ("gaps", pa.int64()),
                ]
            ),
        )

    queued = df.where(f"NOT {TRANSACTION_SKIPPED}").select(
        "topic", "queueId", "queueOffset", "commitLogOffset", "storeSize", "tagsCode"
    )
    shuffled = queued.repartition("topic", "queueId").sortWithinPartitions(
        "topic", "queueId", "queueOffset"
    )
    done = shuffled.mapInArrow(write_partition, QUEUE_RESULT_DDL).collect()
    return sorted((r.topic, r.queueId, r.units, r.gaps) for r in done)


class _QueueWriter:
    """Appends sorted units queue by queue through the store's ConsumeQueue."""

    def __init__(self, root: str, file_size: int) -> None:
        self.root = root
        self.file_size = file_size
        self.cq: ConsumeQueue | None = None
        self.last = -1
        self.units = 0
        self.gaps = 0
        self.results: list[tuple[str, int, int, int]] = []

    def put(self, topic: str, queue_id: int, offset: int, phy: int, size: int, tags: int) -> None:
        cq = self.cq
        if cq is None or cq.topic != topic or cq.queue_id != queue_id:
            self.close()
            cq = self.cq = ConsumeQueue(topic, queue_id, self.root, self.file_size)
        elif offset == self.last:
            return  # the same queue offset twice: the store keeps the first
        elif offset > self.last + 1:
            self.gaps += 1
        req = DispatchRequest(topic, queue_id, phy, size, tags, 0, offset, "", None, 0, 0, {})
        cq.put_message_position_info_wrapper(req)
        self.last = offset
        self.units += 1

    def close(self) -> None:
        cq = self.cq
        if cq is None:
            return
        cq.flush(0)
        cq.shutdown()
        self.results.append((cq.topic, cq.queue_id, self.units, self.gaps))
        self.cq, self.last, self.units, self.gaps = None, -1, 0, 0
