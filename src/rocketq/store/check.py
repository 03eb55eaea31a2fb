"""``rocketq store check``: an offline consistency check of a store directory.

Theory of operation: walk the commitlog once (read-only maps), recomputing every body CRC
and remembering each record's topic, queue, queue offset, tags code and keys by physical
offset. Then every consume-queue unit must point at a record start with the same topic,
queue id and queue offset, size and tags code (for SCHEDULE_TOPIC_XXXX the code is a delivery
time, so only "not before the store time" is checked); queue offsets must run without gaps;
every record that belongs in a consume queue must have its unit; every index entry must
point at a record whose ``topic#key`` or ``topic#UNIQ_KEY`` has the entry's key hash, and no
slot may point past the file's index count. Units and entries below the commitlog's first
offset are counted as expired, not reported. Works on stores written by Apache RocketMQ.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rocketq.common.hashing import index_key_hash
from rocketq.store.config import StoreConfig
from rocketq.store.dump import (
    FILLER_SIZE,
    SCHEDULE_TOPIC,
    CqUnit,
    DataEnd,
    IndexLayout,
    RecordInfo,
    consume_queue_ids,
    data_files,
    index_files,
    iter_commitlog,
    iter_consume_queue,
    read_index_file,
)


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

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        head = (
            f"store {self.root}: {self.records} records (CRC checked), valid data ends at "
            f"{self.data_end}, {self.consume_queue_units} consume queue units, "
            f"{self.index_entries} index entries, {self.expired} expired"
        )
        if self.ok:
            return head + "\nOK"
        lines = [head, f"{len(self.problems)} problem(s):"]
        lines += [f"  {p}" for p in self.problems[:200]]
        if len(self.problems) > 200:
            lines.append(f"  ... {len(self.problems) - 200} more")
        return "\n".join(lines)


def store_paths(root: str, config: StoreConfig | None) -> tuple[str, str, str]:
    commit_log = config.commit_log_dir if config is not None else os.path.join(root, "commitlog")
    return commit_log, os.path.join(root, "consumequeue"), os.path.join(root, "index")


def check_store(
    root: str, *, config: StoreConfig | None = None, require_consume_queues: bool = True
) -> CheckReport:
    report = CheckReport(root)
    commit_log, cq_root, index_dir = store_paths(root, config)
    records = _check_commitlog(commit_log, report)
    files = data_files(commit_log)
    min_phy = int(os.path.basename(files[0])) if files else 0
    covered = _check_consume_queues(cq_root, records, min_phy, report)
    if require_consume_queues or os.path.isdir(cq_root):
        _check_coverage(commit_log, records, covered, report)
    layout = IndexLayout()
    if config is not None:
        layout = IndexLayout(config.max_hash_slot_num, config.max_index_num)
    _check_index(index_dir, layout, records, min_phy, report)
    return report


def _check_commitlog(commit_log: str, report: CheckReport) -> dict[int, RecordInfo]:
    records: dict[int, RecordInfo] = {}
    for item in iter_commitlog(commit_log):
        if isinstance(item, DataEnd):
            report.data_end = item.offset
            if not item.clean:
                report.problems.append(Problem(item.path, item.offset, item.reason))
            break
        report.records += 1
        report.crc_checked += 1
        if not item.crc_ok:
            report.problems.append(
                Problem(_file_of(commit_log, item.offset), item.offset, "body CRC mismatch")
            )
        records[item.offset] = item
    return records


def _file_of(directory: str, offset: int) -> str:
    found = directory
    for path in data_files(directory):
        if int(os.path.basename(path)) <= offset:
            found = path
    return found


def _check_consume_queues(
    cq_root: str, records: dict[int, RecordInfo], min_phy: int, report: CheckReport
) -> set[tuple[str, int, int]]:
    covered: set[tuple[str, int, int]] = set()
    for topic, qid in consume_queue_ids(cq_root):
        expect_next: int | None = None
        for unit in iter_consume_queue(cq_root, topic, qid):
            where = unit.path, unit.position
            if expect_next is not None and unit.queue_offset != expect_next:
                _problem(
                    report, where, f"queue offset jumps from {expect_next} to {unit.queue_offset}"
                )
            expect_next = unit.queue_offset + 1
            if unit.size == FILLER_SIZE and unit.commit_log_offset == 0:
                continue
            report.consume_queue_units += 1
            if unit.commit_log_offset < min_phy:
                report.expired += 1
                continue
            reason = _unit_mismatch(
                topic, qid, unit.queue_offset, unit, records.get(unit.commit_log_offset)
            )
            if reason:
                _problem(report, where, f"{topic}/{qid} unit {unit.queue_offset}: {reason}")
            else:
                covered.add((topic, qid, unit.queue_offset))
    return covered


def _unit_mismatch(topic: str, qid: int, qoff: int, unit: CqUnit, rec: RecordInfo | None) -> str:
    if rec is None:
        return f"commitlog offset {unit.commit_log_offset} is not a record start"
    if (rec.topic, rec.queue_id, rec.queue_offset) != (topic, qid, qoff):
        return f"points at {rec.topic}/{rec.queue_id} offset {rec.queue_offset}"
    if rec.size != unit.size:
        return f"size {unit.size}, record has {rec.size}"
    if topic == SCHEDULE_TOPIC and rec.delay_level > 0:
        if unit.tags_code < rec.store_timestamp:
            return f"delivery time {unit.tags_code} before the store time {rec.store_timestamp}"
    elif unit.tags_code != rec.tags_code:
        return f"tags code {unit.tags_code}, hash of {rec.tags!r} is {rec.tags_code}"
    return ""


def _check_coverage(
    commit_log: str,
    records: dict[int, RecordInfo],
    covered: set[tuple[str, int, int]],
    report: CheckReport,
) -> None:
    for rec in records.values():
        if rec.in_consume_queue and (rec.topic, rec.queue_id, rec.queue_offset) not in covered:
            report.problems.append(
                Problem(
                    _file_of(commit_log, rec.offset),
                    rec.offset,
                    f"record {rec.topic}/{rec.queue_id} offset {rec.queue_offset}"
                    " has no consume queue unit",
                )
            )


def _check_index(
    index_dir: str,
    layout: IndexLayout,
    records: dict[int, RecordInfo],
    min_phy: int,
    report: CheckReport,
) -> None:
    for path in index_files(index_dir):
        info = read_index_file(path, layout)
        if info is None:
            report.problems.append(
                Problem(path, 0, f"size {os.path.getsize(path)} fits no index layout")
            )
            continue
        for slot, value in info.bad_slots:
            report.problems.append(
                Problem(
                    path, 40 + 4 * slot, f"slot holds {value}, index count is {info.index_count}"
                )
            )
        for entry in info.entries:
            report.index_entries += 1
            if entry.phy_offset < min_phy:
                report.expired += 1
                continue
            rec = records.get(entry.phy_offset)
            reason = ""
            if rec is None:
                reason = f"commitlog offset {entry.phy_offset} is not a record start"
            elif entry.key_hash not in _key_hashes(rec):
                reason = (
                    f"key hash {entry.key_hash} matches no key of the record at {entry.phy_offset}"
                )
            elif not 0 <= entry.prev_index < info.index_count:
                reason = f"previous index {entry.prev_index} outside 0..{info.index_count - 1}"
            if reason:
                pos = 40 + 4 * info.layout.hash_slot_num + 20 * entry.index_no
                report.problems.append(Problem(path, pos, f"entry {entry.index_no}: {reason}"))


def _key_hashes(rec: RecordInfo) -> set[int]:
    keys = [k for k in rec.keys.split(" ") if k]
    if rec.uniq_key:
        keys.append(rec.uniq_key)
    return {index_key_hash(f"{rec.topic}#{k}") for k in keys}


def _problem(report: CheckReport, where: tuple[str, int], reason: str) -> None:
    report.problems.append(Problem(where[0], where[1], reason))
