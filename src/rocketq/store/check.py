"""``rocketq store check``: an offline consistency check of a store directory.

Theory of operation: check that the commitlog files share one size and follow each other
without gaps, then walk the commitlog once (read-only maps), recomputing every body CRC and
remembering only where each record starts (``RecordTable``: 10 bytes a record, so a store of
any size fits in memory); the later checks re-read a record from the maps when they need its
fields. Then every consume-queue unit must point at a record start with the same topic,
queue id and queue offset, size and tags code (for SCHEDULE_TOPIC_XXXX the code is a
delivery time, so only "not before the store time" is checked; a code at or below
Integer.MIN_VALUE - 1 is a ConsumeQueueExt address and is not compared); queue offsets must
run without gaps; every record that belongs in a consume queue must have its unit; every
index entry must point at a record whose ``topic#key`` or ``topic#UNIQ_KEY`` has the entry's
key hash, and no slot may point past the file's index count. Units and entries below the
commitlog's first offset are counted as expired, not reported; a torn tail of the last
written commitlog file (RocketMQ's recovery truncates it) is a note, not a problem. Works on
stores written by Apache RocketMQ.

A live store (a process holds its ``lock``, see ``store_lock``) is checked up to a snapshot:
the commitlog end the walk read. Units and index entries written after it point past that
end and are counted, not checked; a record past the highest unit any queue has is not
dispatched yet (the reput runs behind the writer), and the record being written at the end
may fail its CRC half-copied: both are notes on a live store, problems on a stopped one.
A folder with none of a store's files is refused (``NotAStoreError``), not reported "OK".
"""

from __future__ import annotations

import array
import bisect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from rocketq.common.hashing import index_key_hash
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.errors import ConfigError
from rocketq.store import paths as store_files
from rocketq.store.config import StoreConfig
from rocketq.store.dump import (
    CommitLogReader,
    CqUnit,
    DataEnd,
    IndexLayout,
    RecordInfo,
    consume_queue_ids,
    data_files,
    index_files,
    iter_commitlog,
    iter_consume_queue,
    iter_index_file,
    read_index_header,
    store_paths,
)
from rocketq.store.format import index_slot_position
from rocketq.store.store_lock import lock_holder

__all__ = [
    "CheckReport",
    "NotAStoreError",
    "Problem",
    "check_store",
    "require_store",
    "store_paths",
]
MAX_SHOWN = 200
#: With enableConsumeQueueExt a tags code at or below this is a ConsumeQueueExt address.
CQ_EXT_MAX_ADDRESS = -(1 << 31) - 1


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path} @ {self.offset}: {self.reason}"


@dataclass
class CheckReport:
    root: str
    records: int = 0
    crc_checked: int = 0
    consume_queue_units: int = 0
    index_entries: int = 0
    expired: int = 0
    data_end: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    #: the PID holding the store's lock while it was checked (None: the store was stopped)
    in_use_by: int | None = None
    #: units and index entries past the snapshot of a live store, not checked
    after_snapshot: int = 0
    #: records of a live store past the highest dispatched unit (the reput is behind)
    not_dispatched: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, path: str, offset: int, reason: str) -> None:
        self.problems.append(Problem(path, offset, reason))

    def __str__(self) -> str:
        head = (
            f"store {self.root}: {self.records} records ({self.crc_checked} CRCs checked), "
            f"valid data ends at {self.data_end}, {self.consume_queue_units} consume queue "
            f"units, {self.index_entries} index entries, {self.expired} expired"
        )
        lines = [head] + [f"note: {n}" for n in self.notes]
        if self.in_use_by is not None:
            lines.append(
                f"note: the store is in use by process {self.in_use_by}: checked up to "
                f"commitlog offset {self.data_end}, the end when the check read it; "
                f"{self.after_snapshot} units and index entries written after that and "
                f"{self.not_dispatched} records not dispatched yet were not checked "
                "(stop the broker for a complete check)"
            )
        if self.ok:
            return "\n".join([*lines, "OK"])
        lines.append(f"{len(self.problems)} problem(s):")
        lines += [f"  {p}" for p in self.problems[:MAX_SHOWN]]
        if len(self.problems) > MAX_SHOWN:
            lines.append(f"  ... {len(self.problems) - MAX_SHOWN} more")
        return "\n".join(lines)


def check_store(
    root: str,
    *,
    config: StoreConfig | None = None,
    require_consume_queues: bool = True,
    index_layout: IndexLayout | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CheckReport:
    """Check ``root`` read-only; ``require_consume_queues=False`` lets a topic lack its CQ dir.
    ``progress(done_bytes, total_bytes)`` is told how far the commit log scan got (the long
    part), every ``PROGRESS_EVERY_RECORDS`` records and at its end."""
    report = CheckReport(root)
    paths = store_paths(root, config)
    require_store(root, paths.commit_log)
    report.in_use_by = lock_holder(store_files.lock_path(root))
    if not os.path.isdir(paths.commit_log):
        note = "no commitlog directory: nothing was ever stored, or see storePathCommitLog"
        report.notes.append(Problem(paths.commit_log, 0, note))
    files = data_files(paths.commit_log)
    _check_file_sizes(files, report)
    min_phy = int(os.path.basename(files[0])) if files else 0
    with CommitLogReader(paths.commit_log) as reader:
        records = RecordTable(reader)
        total = sum(os.path.getsize(f) for f in files)
        _check_commitlog(paths.commit_log, records, report, _progress_of(progress, min_phy, total))
        _check_consume_queues(root, records, min_phy, report)
        _check_coverage(root, records, require_consume_queues, report)
        _check_index(root, index_layout or IndexLayout.of(config), records, min_phy, report)
    return report


class NotAStoreError(ConfigError):
    """The folder holds none of a store's files (commitlog, consumequeue, index, checkpoint,
    lock, abort)."""


def require_store(root: str, commit_log: str) -> None:
    """Raise NotAStoreError unless ``root`` holds one of a store's files."""
    marks = [commit_log] + [
        os.path.join(root, name)
        for name in ("commitlog", "consumequeue", "index", "checkpoint", "lock", "abort")
    ]
    if not any(os.path.exists(mark) for mark in marks):
        raise NotAStoreError(
            f"{root} is not a store: it has no commitlog, consumequeue, index or checkpoint "
            "(give the broker's storePathRootDir, e.g. ~/store)"
        )


class RecordTable:
    """Where the walk found records: 8 bytes and 2 flags a record, not a RecordInfo each.

    A store can hold hundreds of millions of records; their fields are re-read on demand.
    """

    def __init__(self, reader: CommitLogReader) -> None:
        self.reader = reader
        self.starts = array.array("q")
        self.needs_unit = bytearray()
        self.covered = bytearray()
        #: (topic, queue id) -> the queue offset after its last unit (what is dispatched)
        self.next_queue_offset: dict[tuple[str, int], int] = {}
        self._last: RecordInfo | None = None

    def add(self, rec: RecordInfo) -> None:
        self.starts.append(rec.offset)
        self.needs_unit.append(rec.in_consume_queue)
        self.covered.append(0)

    def index_of(self, phy: int) -> int:
        i = bisect.bisect_left(self.starts, phy)
        return i if i < len(self.starts) and self.starts[i] == phy else -1

    def get(self, phy: int) -> RecordInfo | None:
        """The record starting at ``phy`` (None if the walk found no record start there)."""
        if self._last is not None and self._last.offset == phy:
            return self._last
        if self.index_of(phy) < 0:
            return None
        self._last = self.reader.record_at(phy)
        return self._last

    def uncovered(self) -> Iterator[RecordInfo]:
        """Records that belong in a consume queue and no unit matched."""
        for i, start in enumerate(self.starts):
            if self.needs_unit[i] and not self.covered[i]:
                rec = self.reader.record_at(start)
                if rec is not None:
                    yield rec


def _check_coverage(
    root: str, records: RecordTable, require_consume_queues: bool, report: CheckReport
) -> None:
    """Every record that belongs in a consume queue has a matching unit there."""
    present = {topic for topic, _ in consume_queue_ids(root)}
    live = report.in_use_by is not None
    for rec in records.uncovered():
        dispatched = records.next_queue_offset.get((rec.topic, rec.queue_id), 0)
        if live and rec.queue_offset >= dispatched:
            report.not_dispatched += 1
        elif require_consume_queues or rec.topic in present:
            report.add(rec.path, rec.offset, f"record {_where(rec)} has no consume queue unit")


def _where(rec: RecordInfo) -> str:
    return f"{rec.topic}/{rec.queue_id} offset {rec.queue_offset}"


def _check_file_sizes(files: list[str], report: CheckReport) -> None:
    """Every file has the size of the first and starts where the one before ended.

    The size comes from the files, not from a config: a StoreConfig cannot tell a default
    from a value that broker.conf set.
    """
    if not files:
        return
    size = os.path.getsize(files[0])
    for i, path in enumerate(files):
        actual = os.path.getsize(path)
        if actual != size:
            report.add(path, 0, f"file size {actual}, expected {size}")
        if i and int(os.path.basename(path)) != int(os.path.basename(files[i - 1])) + size:
            start = int(os.path.basename(files[i - 1])) + size
            report.add(path, 0, f"the previous file ends at {start}: files are missing or overlap")


PROGRESS_EVERY_RECORDS = 4096


def _progress_of(
    progress: Callable[[int, int], None] | None, min_phy: int, total: int
) -> Callable[[int], None]:
    def tell(offset: int) -> None:
        if progress is not None:
            progress(min(max(0, offset - min_phy), total), total)

    return tell


def _check_commitlog(
    commit_log: str,
    records: RecordTable,
    report: CheckReport,
    progress: Callable[[int], None] = lambda offset: None,
) -> None:
    for item in iter_commitlog(commit_log):
        if report.records % PROGRESS_EVERY_RECORDS == 0:
            progress(item.offset)
        if isinstance(item, DataEnd):
            if not item.clean:
                report.add(item.path, item.offset, item.reason)
            if item.final:
                report.data_end = item.offset
            if item.torn:
                report.notes.append(Problem(item.path, item.offset, item.reason))
            continue
        report.records += 1
        report.crc_checked += 1
        if not item.crc_ok:
            report.add(item.path, item.offset, "body CRC mismatch")
        if item.stored_offset != item.offset:
            report.add(item.path, item.offset, f"PHYSICALOFFSET is {item.stored_offset}")
        records.add(item)
    progress(2**62)  # the scan is done: all of it
    if report.in_use_by is not None and len(records.starts):
        _half_written_tail_is_a_note(records.starts[-1], report)


def _half_written_tail_is_a_note(last: int, report: CheckReport) -> None:
    """On a live store the last record may be read while it is being copied in."""
    for problem in [p for p in report.problems if p.offset == last]:
        report.problems.remove(problem)
        reason = f"{problem.reason}: the record being written when the check read it"
        report.notes.append(Problem(problem.path, problem.offset, reason))


def _check_consume_queues(
    root: str, records: RecordTable, min_phy: int, report: CheckReport
) -> None:
    for topic, qid in consume_queue_ids(root):
        expect_next: int | None = None
        for unit in iter_consume_queue(root, topic, qid):
            if unit.is_filler:
                continue
            if expect_next is not None and unit.queue_offset != expect_next:
                report.add(
                    unit.path,
                    unit.position,
                    f"{topic}/{qid} queue offset jumps from {expect_next} to {unit.queue_offset}",
                )
            expect_next = unit.queue_offset + 1
            records.next_queue_offset[topic, qid] = expect_next
            report.consume_queue_units += 1
            if unit.commit_log_offset < min_phy:
                report.expired += 1
                continue
            if _after_snapshot(unit.commit_log_offset, report):
                continue
            reason = _unit_mismatch(topic, qid, unit, records.get(unit.commit_log_offset))
            if reason:
                report.add(
                    unit.path, unit.position, f"{topic}/{qid} unit {unit.queue_offset}: {reason}"
                )
            else:
                records.covered[records.index_of(unit.commit_log_offset)] = 1


def _after_snapshot(phy: int, report: CheckReport) -> bool:
    """A live store's unit or entry for a record written after the walk read the end."""
    if report.in_use_by is None or phy < report.data_end:
        return False
    report.after_snapshot += 1
    return True


def _unit_mismatch(topic: str, qid: int, unit: CqUnit, rec: RecordInfo | None) -> str:
    if rec is None:
        return f"commitlog offset {unit.commit_log_offset} is not a record start"
    if (rec.topic, rec.queue_id, rec.queue_offset) != (topic, qid, unit.queue_offset):
        return f"points at {_where(rec)}"
    if rec.size != unit.size:
        return f"size {unit.size}, record has {rec.size}"
    if topic == SCHEDULE_TOPIC and rec.delay_level > 0:
        if unit.tags_code < rec.store_timestamp:
            return f"delivery time {unit.tags_code} before the store time {rec.store_timestamp}"
    elif unit.tags_code != rec.tags_code and unit.tags_code > CQ_EXT_MAX_ADDRESS:
        return f"tags code {unit.tags_code}, hash of {rec.tags!r} is {rec.tags_code}"
    return ""


def _check_index(
    root: str,
    layout: IndexLayout,
    records: RecordTable,
    min_phy: int,
    report: CheckReport,
) -> None:
    for path in index_files(root):
        info = read_index_header(path, layout)
        if info is None:
            report.add(path, 0, f"size {os.path.getsize(path)} fits no index layout")
            continue
        for slot, value in info.bad_slots:
            if report.in_use_by is not None:  # the slot was written after the header was read
                report.after_snapshot += 1
                continue
            reason = f"slot {slot} holds {value}, index count is {info.index_count}"
            report.add(path, index_slot_position(slot), reason)
        for entry in iter_index_file(info):
            report.index_entries += 1
            if entry.phy_offset < min_phy:
                report.expired += 1
                continue
            if _after_snapshot(entry.phy_offset, report):
                continue
            reason = _entry_mismatch(
                entry.key_hash, entry.phy_offset, records.get(entry.phy_offset)
            )
            if not reason and not 0 <= entry.prev_index < info.index_count:
                reason = f"previous index {entry.prev_index} outside 0..{info.index_count - 1}"
            if reason:
                report.add(path, entry.position, f"entry {entry.index_no}: {reason}")


def _entry_mismatch(key_hash: int, phy: int, rec: RecordInfo | None) -> str:
    if rec is None:
        return f"commitlog offset {phy} is not a record start"
    keys = [k for k in rec.keys.split(" ") if k]
    if rec.uniq_key:
        keys.append(rec.uniq_key)
    if key_hash not in {index_key_hash(f"{rec.topic}#{k}") for k in keys}:
        return f"key hash {key_hash} matches no key of the record at {phy}"
    return ""
