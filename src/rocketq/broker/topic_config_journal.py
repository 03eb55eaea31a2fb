"""TopicConfigJournal: the append-only log of topic changes beside ``topics.json``.

RocketMQ's TopicConfigManager rewrites the whole ``topics.json`` on every change, so a create
costs in proportion to the table (17 ms at 1,000 topics, 142 ms at 5,000 here). rocketq keeps
the file's format (RocketMQ reads it after a clean shutdown) and writes each change as one
line of ``config/topics.json.journal`` instead::

    line = crc32 (8 lowercase hex digits of the JSON's bytes) | " " | JSON | "\\n"
    JSON = {"op": "put", "topicConfig": {...TopicConfig...}, "dataVersion": {...}}
         | {"op": "delete", "topic": "<name>", "dataVersion": {...}}

Durability, by the store's ``flushDiskType`` (docs/operating.md "Topics at scale"): a line
is written (``write``: in the page cache, so it survives kill -9 of the broker) before its
change is answered. The fsync is group-committed (``sync``: one fsync covers every line
written before it began, whoever waits): with SYNC_FLUSH the change is answered after the
fsync that covers it, as a message is; with ASYNC_FLUSH (the default) a flusher thread
fsyncs right after the write, off the answer's path, so a power loss can take the changes of
one fsync's span, as it can the messages. RocketMQ itself never fsyncs ``topics.json``
(``MixAll.string2File``). The fsync is what an answer waited for when it was on the path:
on a shared disk it takes 0.3 ms at its median and 15-90 ms at its p99 (ext4 commits every
file's ordered data with it).

Compaction (``TopicConfigManager.persist``): under the table's lock the snapshot is taken and
the journal renamed to ``topics.json.journal.1`` (appended to it when one is already there);
the snapshot is written to ``topics.json`` (with ``.bak``, fsynced) outside the lock; then
``.journal.1`` is removed. Load reads ``topics.json`` (or ``.bak``) and replays
``.journal.1`` then ``.journal``: replaying a put or delete twice gives the same table, so a
crash anywhere in compaction loses nothing. A line that is torn (no newline) or whose CRC
does not match ends the replay of its file (a crash cut the last append, which was never
answered). docs/operating.md describes the files for operators.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".journal"
ROTATED_SUFFIX = ".journal.1"
CRC_HEX_SIZE = 8


def encode_entry(record: dict[str, Any]) -> bytes:
    payload = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"%08x %s\n" % (zlib.crc32(payload), payload)


def decode_entries(data: bytes, source: str) -> list[dict[str, Any]]:
    """The records of one journal file, up to its first torn or corrupt line."""
    records: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            log.warning(
                "%s: torn last entry at %d (%d bytes) dropped", source, pos, len(data) - pos
            )
            break
        line = data[pos:end]
        record = _decode_line(line)
        if record is None:
            log.warning("%s: corrupt entry at %d; replay of this file stops there", source, pos)
            break
        records.append(record)
        pos = end + 1
    return records


def _decode_line(line: bytes) -> dict[str, Any] | None:
    if len(line) <= CRC_HEX_SIZE + 1 or line[CRC_HEX_SIZE : CRC_HEX_SIZE + 1] != b" ":
        return None
    payload = line[CRC_HEX_SIZE + 1 :]
    try:
        crc = int(line[:CRC_HEX_SIZE], 16)
    except ValueError:
        return None
    if crc != zlib.crc32(payload):
        return None
    try:
        record = json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


class BackgroundWorker:
    """One daemon thread per process running the calls submitted to it, in order. Started by
    the first submit and kept: ``Thread.start`` waits until the new thread runs, which took
    up to 75 ms on a loaded machine, so no create pays it per fsync or per compaction."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, task: Callable[[], None]) -> None:
        self._queue.put(task)
        self.start()

    def start(self) -> None:
        """Start the thread if not yet (``Thread.start`` waits for it to run)."""
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                    thread.start()
                    self._thread = thread

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            try:
                task()
            except Exception:  # the worker serves every journal: one failed task must not end it
                log.exception("%s: a background task failed", self.name)


#: fsyncs after ASYNC_FLUSH writes, and compactions (``TopicConfigManager.persist``): one
#: thread each, so a compaction's file never delays the fsyncs
FLUSHER = BackgroundWorker("TopicConfigJournalFlush")
COMPACTOR = BackgroundWorker("TopicConfigCompaction")


class TopicConfigJournal:
    """The journal files of one ``topics.json``. Callers serialize appends and rotations (the
    table's lock); ``sync`` may be called from any thread."""

    def __init__(self, config_path: Path) -> None:
        self.path = config_path.with_name(config_path.name + JOURNAL_SUFFIX)
        self.rotated_path = config_path.with_name(config_path.name + ROTATED_SUFFIX)
        #: entries in the live journal (since the last rotation), and bytes ever appended
        self.entry_count = 0
        self.bytes_written = 0
        self._fd: int | None = None  # the live journal, open for appends
        self._retired: list[int] = []  # descriptors of journals rotated since the last sync
        self._state = threading.Condition()
        self._synced = 0  # bytes_written covered by a completed fsync or snapshot
        self._rotated = 0  # bytes_written when the journal was last set aside
        self._syncing = False
        self._dir_dirty = False  # the journal's creation or rotation is not yet on disk
        self._flush_queued = False

    def append(self, records: list[dict[str, Any]]) -> int:
        """Write ``records`` as one group (in the page cache on return: they survive the
        process's death); returns the position to pass to ``sync`` for them to be on disk."""
        data = memoryview(b"".join(encode_entry(r) for r in records))
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            with self._state:
                self._fd = fd
                self._dir_dirty = self._dir_dirty or created  # the next sync fsyncs the dir
        pos = 0
        while pos < len(data):
            pos += os.write(self._fd, data[pos:])
        with self._state:
            self.entry_count += len(records)
            self.bytes_written += len(data)
            return self.bytes_written

    def sync(self, position: int) -> None:
        """Return once the bytes up to ``position`` are on disk. Group commit: the first
        caller fsyncs everything written so far; callers arriving meanwhile wait for it, and
        the next fsync covers all of them."""
        with self._state:
            while self._synced < position:
                if not self._syncing:
                    break
                self._state.wait()
            else:
                return
            self._syncing = True
            target = self.bytes_written
            fds = [os.dup(fd) for fd in self._retired]
            if self._fd is not None:
                fds.append(os.dup(self._fd))
            sync_dir, self._dir_dirty = self._dir_dirty, False
        done = False
        try:
            for fd in fds:
                os.fsync(fd)
            if sync_dir:
                _fsync_dir(self.path.parent)
            done = True
        finally:
            for fd in fds:
                os.close(fd)
            with self._state:
                self._syncing = False
                if done:
                    self._synced = max(self._synced, target)
                else:
                    self._dir_dirty = self._dir_dirty or sync_dir
                self._state.notify_all()

    def sync_soon(self) -> None:
        """Have the flusher thread fsync what was written (ASYNC_FLUSH: nobody waits)."""
        with self._state:
            if self._flush_queued:
                return
            self._flush_queued = True
        FLUSHER.submit(self._flush_pending)

    def _flush_pending(self) -> None:
        with self._state:
            self._flush_queued = False
            position = self.bytes_written
        try:
            self.sync(position)
        except OSError:
            log.exception("fsync of %s failed; the next change retries it", self.path)

    def rotate(self, reopen: bool = False) -> None:
        """Set the live journal aside as ``.journal.1`` (before a snapshot is written); with
        ``reopen`` (a compaction while changes go on) the next journal is created now, by
        the compactor, not by the next change's append (a file created in the directory the
        compaction renames and fsyncs in: 0.3-1.2 ms for that create, in-process)."""
        with self._state:
            self.entry_count = 0
            self._rotated = self.bytes_written
            if self._fd is not None:  # kept until the snapshot holding its lines is durable
                self._retired.append(self._fd)
                self._fd = None
        if not self.path.exists():
            return
        if self.rotated_path.exists():  # an earlier snapshot failed: keep both, in order
            with open(self.rotated_path, "ab") as out:
                out.write(self.path.read_bytes())
                out.flush()
                os.fsync(out.fileno())
            self.path.unlink()
        else:
            os.replace(self.path, self.rotated_path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if reopen else None
        with self._state:  # on disk with the next sync or the snapshot's directory fsync
            self._dir_dirty = True
            if fd is not None:
                self._fd = fd

    def drop_rotated(self) -> None:
        """The snapshot holding ``.journal.1``'s changes is durable: remove it (its lines
        count as synced: the snapshot has them)."""
        if self.rotated_path.exists():
            self.rotated_path.unlink()
            _fsync_dir(self.path.parent)
        with self._state:
            retired, self._retired = self._retired, []
            self._synced = max(self._synced, self._rotated)
            self._state.notify_all()
        for fd in retired:
            os.close(fd)

    def replay(self) -> list[dict[str, Any]]:
        """The records of ``.journal.1`` then ``.journal``, oldest first."""
        records: list[dict[str, Any]] = []
        for path in (self.rotated_path, self.path):
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            records.extend(decode_entries(data, str(path.name)))
        return records


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
