"""TimerCheckpoint: the ``config/timercheck`` file (TimerCheckpoint.java).

Layout (``TIMER_CHECKPOINT_STRUCT``), big-endian, at the head of a 4096-byte mapped file::

    0  LAST_READ_TIME_MS           i8  slots before it are delivered (commitReadTimeMs)
    8  LAST_TIMER_LOG_FLUSH_POS    i8  the timerlog is durable up to here
    16 LAST_TIMER_QUEUE_OFFSET     i8  rmq_sys_wheel_timer queue 0 is enqueued up to here
    24 MASTER_TIMER_QUEUE_OFFSET   i8  the master's enqueue offset (a slave reads it)
    32 DATA_VERSION_STATE_VERSION  i8  DataVersion: stateVersion
    40 DATA_VERSION_TIMESTAMP      i8  DataVersion: timestamp
    48 DATA_VERSION_COUNTER        i8  DataVersion: counter
    = 56 (the rest of the page stays zero)
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass

from rocketq.store.mapped_file import USE_FDATASYNC

TIMER_CHECKPOINT_STRUCT = struct.Struct(
    ">"
    "q"  # LAST_READ_TIME_MS
    "q"  # LAST_TIMER_LOG_FLUSH_POS
    "q"  # LAST_TIMER_QUEUE_OFFSET
    "q"  # MASTER_TIMER_QUEUE_OFFSET
    "q"  # DATA_VERSION_STATE_VERSION
    "q"  # DATA_VERSION_TIMESTAMP
    "q"  # DATA_VERSION_COUNTER
)
TIMER_CHECKPOINT_SIZE = 56
assert TIMER_CHECKPOINT_STRUCT.size == TIMER_CHECKPOINT_SIZE
FILE_SIZE = 4096  # DefaultMappedFile.OS_PAGE_SIZE


@dataclass(slots=True)
class TimerCheckpointState:
    last_read_time_ms: int = 0
    last_timer_log_flush_pos: int = 0
    last_timer_queue_offset: int = 0
    master_timer_queue_offset: int = 0
    state_version: int = 0
    timestamp: int = 0
    counter: int = 0

    def encode(self) -> bytes:
        return TIMER_CHECKPOINT_STRUCT.pack(
            self.last_read_time_ms,
            self.last_timer_log_flush_pos,
            self.last_timer_queue_offset,
            self.master_timer_queue_offset,
            self.state_version,
            self.timestamp,
            self.counter,
        )

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> TimerCheckpointState:
        return cls(*TIMER_CHECKPOINT_STRUCT.unpack_from(data, 0))

    def next_version(self, state_version: int) -> None:
        """DataVersion.nextVersion: a new timestamp, the state version, counter + 1."""
        self.timestamp = int(time.time() * 1000)
        self.state_version = state_version
        self.counter += 1


class TimerCheckpoint(TimerCheckpointState):
    """The state, mapped onto its file; :meth:`flush` writes and msyncs it."""

    __slots__ = ("_fd", "_mm", "existed", "path")

    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        existed = os.path.exists(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size < FILE_SIZE:
                os.ftruncate(fd, FILE_SIZE)
            self._mm: mmap.mmap | None = mmap.mmap(fd, FILE_SIZE, access=mmap.ACCESS_WRITE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd  # flushed by fdatasync, which (unlike msync) lets other threads run
        self.path = path
        self.existed = existed
        state = TimerCheckpointState()
        if existed:
            state = TimerCheckpointState.decode(self._mm[:TIMER_CHECKPOINT_SIZE])
        super().__init__(*TIMER_CHECKPOINT_STRUCT.unpack(state.encode()))

    def flush(self) -> None:
        if self._mm is None:
            return
        self._mm[:TIMER_CHECKPOINT_SIZE] = self.encode()
        if USE_FDATASYNC:
            os.fdatasync(self._fd)
        else:
            self._mm.flush()

    def shutdown(self) -> None:
        if self._mm is None:
            return
        self.flush()
        self._mm.close()
        self._mm = None
        os.close(self._fd)
