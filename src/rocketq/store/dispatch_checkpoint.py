"""The dispatch checkpoint: where an abnormal recovery may start scanning the commitlog.

RocketMQ's abnormal recovery (CommitLog#recoverAbnormally) starts at the last commitlog *file*
stored before the checkpoint's timestamps, so after a kill -9 it re-scans and re-dispatches up
to a whole 1 GiB file (and more when the consume-queue checkpoint is 60 s old): the restart
grows with the store. rocketq adds one small file of its own, ``<root>/dispatchcheck``
(RocketMQ ignores it), holding an offset P such that

- every record below P is in the commitlog and flushed,
- its consume-queue units and index entries are written and flushed,

so recovery scans and re-dispatches only from P. The store writes it about once a second
(:meth:`MessageStore.checkpoint_dispatch`): P is taken from the dispatch position first, then
the consume queues and the index file being written are flushed, then P is written.

Layout, 32 bytes, written in place with ``pwrite`` and ``fdatasync``::

    0 magic b"RQDISP01" | 8 P i8 | 16 tail_crc u4 | 20 tail_len u4 | 24 pad u4 | 28 crc u4

``tail_crc`` is the CRC32 of the ``tail_len`` (at most 64) commitlog bytes that end at P,
within P's file: recovery trusts P only if those bytes still match, so a commitlog that was
truncated and rewritten since (a replica cut back to a consistent point) is never scanned from
a stale P. ``crc`` covers bytes 0-27: a torn write reads as no checkpoint, and recovery falls
back to RocketMQ's rule.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import threading
import zlib
from dataclasses import dataclass

from rocketq.store.paths import fsync_dir
from rocketq.store.sync_batch import SyncBatch

log = logging.getLogger(__name__)

FILE_NAME = "dispatchcheck"
MAGIC = b"RQDISP01"
LAYOUT = struct.Struct(">8sqIII")
CRC = struct.Struct(">I")
TAIL_BYTES = 64


@dataclass(frozen=True)
class DispatchPoint:
    offset: int
    tail_crc: int
    tail_len: int


def tail_of(view: memoryview, file_from_offset: int, offset: int) -> tuple[int, int]:
    """(CRC32, length) of the bytes of one commitlog file that end at ``offset``."""
    end = offset - file_from_offset
    begin = max(0, end - TAIL_BYTES)
    return zlib.crc32(view[begin:end]), end - begin


def encode(point: DispatchPoint) -> bytes:
    body = LAYOUT.pack(MAGIC, point.offset, point.tail_crc, point.tail_len, 0)
    return body + CRC.pack(zlib.crc32(body))


def decode(data: bytes) -> DispatchPoint | None:
    if len(data) < LAYOUT.size + CRC.size:
        return None
    body = data[: LAYOUT.size]
    (crc,) = CRC.unpack_from(data, LAYOUT.size)
    magic, offset, tail_crc, tail_len, _ = LAYOUT.unpack(body)
    if magic != MAGIC or zlib.crc32(body) != crc or offset < 0 or tail_len > TAIL_BYTES:
        return None
    return DispatchPoint(offset, tail_crc, tail_len)


class DispatchCheckpoint:
    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, FILE_NAME)
        self.written = self.read()
        self._fd: int | None = None
        self._lock = threading.Lock()

    def read(self) -> DispatchPoint | None:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        point = decode(data)
        if point is None:
            log.warning("%s: unreadable (torn or foreign); recovery ignores it", self.path)
        return point

    def write(self, point: DispatchPoint, batch: SyncBatch | None = None) -> None:
        """Write P durably; with ``batch``, only after the batch's files are synced, all in
        one call (``sync_batch.py``). A failed sync writes no P (OSError)."""
        with self._lock:
            if self._fd is None:
                created = not os.path.exists(self.path)
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                if created:
                    fsync_dir(os.path.dirname(self.path))
            if batch is not None:
                batch.run(self._fd, encode(point))
            else:
                os.pwrite(self._fd, encode(point), 0)
                os.fdatasync(self._fd)
            self.written = point

    def discard_above(self, offset: int) -> None:
        """Forget a point past ``offset`` (the commitlog was cut back there)."""
        with self._lock:
            if self.written is None or self.written.offset <= offset:
                return
            self.written = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
