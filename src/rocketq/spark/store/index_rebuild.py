"""IndexFile rebuild on Spark: one task per index file, the bytes of the store's own.

Theory of operation. The store's ``IndexService`` puts the keys of each record (``topic#UNIQ_KEY``
then ``topic#key`` for each KEYS entry) in commitlog order, and a file holds exactly
``index_num - 1`` keys: a full file hands the rest of a record's keys to the next one, which
starts from the full file's end offset and end time. So the file and the slot of every key
follow from its position in the global key sequence, and each file can be built on its own:

1. every split counts its keys (the store's own ``build_index`` enumerates them, through a
   recorder that keeps the keys instead of writing them); the driver turns the counts into
   the first global key number of each split (splits are planned in offset order and keep
   their records in order, and the source is read without a shuffle);
2. every split emits ``(file, key number, key, offset, store time)``; the last key of a file
   is also sent to the next file as its starting point (key number -1);
3. rows are shuffled by file and sorted by key number; one task writes each file with the
   store's ``IndexFile`` under a provisional (9-digit) name and returns the store time that
   opened it;
4. the driver names the files as ``IndexService`` would have (the opening store time, moved
   on by a millisecond while it does not sort after the previous name) and renames them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from rocketq.errors import IllegalStateError
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.index_file import IndexFile
from rocketq.store.index_service import IndexService, index_file_name

KEYED_COLUMNS = (
    "commitLogOffset",
    "storeSize",
    "storeTimestampMs",
    "topic",
    "keys",
    "uniqKey",
    "sysFlag",
)
COUNT_DDL = "firstOffset BIGINT, keyCount BIGINT"
KEY_DDL = "fileNo BIGINT, keyNo BIGINT, key STRING, phyOffset BIGINT, storeTimestampMs BIGINT"
FILE_DDL = "fileNo BIGINT, openedMs BIGINT, keyCount BIGINT"


class _KeyRecorder(IndexService):
    """``IndexService.build_index`` with the key puts recorded instead of written."""

    class _NoFile:
        end_phy_offset = -1

    def __init__(self) -> None:
        super().__init__("", 1, 2, None)
        self.keys: list[str] = []

    def _last_file_or_create(self) -> Any:
        return self._NoFile()

    def _put_key(self, f: Any, key: str, req: DispatchRequest) -> Any:
        self.keys.append(key)
        return f

    def keys_of(self, row: tuple[Any, ...]) -> list[str]:
        phy, size, ts, topic, keys, uniq, sys_flag = row
        req = DispatchRequest(topic, 0, phy, size, 0, ts, 0, keys or "", uniq, sys_flag, 0, {})
        self.keys = []
        self.build_index(req)
        return self.keys


def _rows(batches: Iterator[Any]) -> Iterator[tuple[Any, ...]]:
    for batch in batches:
        cols = batch.to_pydict()
        yield from zip(*(cols[c] for c in KEYED_COLUMNS), strict=True)


def write_index_files(
    df: Any, index_dir: str, slot_num: int, index_num: int
) -> tuple[int, list[str]]:
    """Build the index files of the dispatch rows ``df``; returns (keys, file names)."""
    keyed = df.where("uniqKey IS NOT NULL OR keys IS NOT NULL").select(*KEYED_COLUMNS)
    per_file = index_num - 1

    def count(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        recorder, first, total = _KeyRecorder(), None, 0
        for row in _rows(batches):
            first = row[0] if first is None else first
            total += len(recorder.keys_of(row))
        if first is not None:
            yield pa.RecordBatch.from_pylist([{"firstOffset": first, "keyCount": total}])

    counts = sorted(
        (r.firstOffset, r.keyCount) for r in keyed.mapInArrow(count, COUNT_DDL).collect()
    )
    starts: dict[int, int] = {}
    total = 0
    for first, n in counts:
        starts[first] = total
        total += n
    if total == 0:
        return 0, []
    files = -(-total // per_file)

    def emit(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = pa.schema(
            [
                ("fileNo", pa.int64()),
                ("keyNo", pa.int64()),
                ("key", pa.string()),
                ("phyOffset", pa.int64()),
                ("storeTimestampMs", pa.int64()),
            ]
        )
        recorder, out, number = _KeyRecorder(), [], None
        for row in _rows(batches):
            phy, ts = row[0], row[2]
            number = starts[phy] if number is None else number
            for key in recorder.keys_of(row):
                file_no = number // per_file
                out.append((file_no, number, key, phy, ts))
                if number % per_file == per_file - 1 and file_no + 1 < files:
                    out.append((file_no + 1, -1, key, phy, ts))  # the next file's start
                number += 1
            if len(out) >= 8192:
                yield _batch(pa, schema, out)
                out = []
        if out:
            yield _batch(pa, schema, out)

    def build(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        built: list[list[int]] = []
        index_file: IndexFile | None = None
        prev = (0, 0)
        for batch in batches:
            cols = batch.to_pydict()
            for file_no, key_no, key, phy, ts in zip(
                cols["fileNo"],
                cols["keyNo"],
                cols["key"],
                cols["phyOffset"],
                cols["storeTimestampMs"],
                strict=True,
            ):
                if key_no < 0:
                    prev = (phy, ts)
                    continue
                if index_file is None or built[-1][0] != file_no:
                    if index_file is not None:
                        index_file.shutdown()
                    path = os.path.join(index_dir, _part_name(file_no))
                    index_file = IndexFile(path, slot_num, index_num, prev[0], prev[1])
                    built.append([file_no, ts, 0])
                    prev = (0, 0)
                if not index_file.put_key(key, phy, ts):
                    raise IllegalStateError(f"index file {file_no} full at key {key_no}")
                built[-1][2] += 1
        if index_file is None:
            return  # a partition that got no file
        index_file.shutdown()
        schema = pa.schema(
            [("fileNo", pa.int64()), ("openedMs", pa.int64()), ("keyCount", pa.int64())]
        )
        yield _batch(pa, schema, [tuple(b) for b in built])

    os.makedirs(index_dir, exist_ok=True)
    keys = keyed.mapInArrow(emit, KEY_DDL)
    shuffled = keys.repartition(min(files, 200), "fileNo").sortWithinPartitions("fileNo", "keyNo")
    opened = sorted(
        (r.fileNo, r.openedMs, r.keyCount) for r in shuffled.mapInArrow(build, FILE_DDL).collect()
    )
    if [f for f, _, _ in opened] != list(range(files)) or sum(n for *_, n in opened) != total:
        raise IllegalStateError(f"index rebuild built {opened} for {total} keys in {files} files")
    return total, _name_files(index_dir, [ms for _, ms, _ in opened])


def _part_name(file_no: int) -> str:
    """A provisional name: digits (MappedFile reads its name as a number), shorter than the
    17-digit names index files end with, so the two never meet."""
    return f"{file_no:09d}"


def _batch(pa: Any, schema: Any, rows: list[tuple[Any, ...]]) -> Any:
    columns = zip(*rows, strict=True)
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _name_files(index_dir: str, opened_ms: list[int]) -> list[str]:
    """Rename part files to the names IndexService gives (``_new_file_path``'s rule)."""
    names: list[str] = []
    for file_no, ms in enumerate(opened_ms):
        name = index_file_name(ms)
        while names and name <= names[-1]:
            ms += 1
            name = index_file_name(ms)
        os.rename(os.path.join(index_dir, _part_name(file_no)), os.path.join(index_dir, name))
        names.append(name)
    return names
