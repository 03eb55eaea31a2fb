"""StoreCheckpoint: the 4096-byte ``checkpoint`` page (RocketMQ's StoreCheckpoint.java).

Layout (``format.CHECKPOINT_STRUCT``)::

    0 physicMsgTimestamp i8 | 8 logicsMsgTimestamp i8 | 16 indexMsgTimestamp i8
    24 masterFlushedOffset i8 | 32 confirmPhyOffset i8 | zeros to 4096

RocketMQ maps the page; the bytes on disk are the same when we ``pwrite`` the whole page and
``fdatasync`` it, which also avoids a sparse mapping (SIGBUS on a full disk, see mapped_file).
A missing file reads as zeros and is created on the first flush.
"""

from __future__ import annotations

import logging
import os
import threading

from rocketq.store.format import CHECKPOINT_FIELDS_SIZE, CHECKPOINT_FILE_SIZE, CHECKPOINT_STRUCT

log = logging.getLogger(__name__)

MIN_TIMESTAMP_MARGIN_MS = 3000


class StoreCheckpoint:
    def __init__(self, path: str) -> None:
        self.path = path
        self.physic_msg_timestamp = 0
        self.logics_msg_timestamp = 0
        self.index_msg_timestamp = 0
        self.master_flushed_offset = 0
        self.confirm_phy_offset = 0
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._read()

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = f.read(CHECKPOINT_FIELDS_SIZE)
        except FileNotFoundError:
            return
        data = data.ljust(CHECKPOINT_FIELDS_SIZE, b"\0")
        (
            self.physic_msg_timestamp,
            self.logics_msg_timestamp,
            self.index_msg_timestamp,
            self.master_flushed_offset,
            self.confirm_phy_offset,
        ) = CHECKPOINT_STRUCT.unpack_from(data)
        log.info(
            "checkpoint %s: physic %d logics %d index %d",
            self.path,
            self.physic_msg_timestamp,
            self.logics_msg_timestamp,
            self.index_msg_timestamp,
        )

    def encode(self) -> bytes:
        fields = CHECKPOINT_STRUCT.pack(
            self.physic_msg_timestamp,
            self.logics_msg_timestamp,
            self.index_msg_timestamp,
            self.master_flushed_offset,
            self.confirm_phy_offset,
        )
        return fields.ljust(CHECKPOINT_FILE_SIZE, b"\0")

    def flush(self) -> None:
        """Write the page and make it durable."""
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            os.pwrite(self._fd, self.encode(), 0)
            os.fdatasync(self._fd)

    def shutdown(self) -> None:
        self.flush()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def get_min_timestamp(self) -> int:
        """min(physic, logics) - 3 s, at least 0."""
        low = min(self.physic_msg_timestamp, self.logics_msg_timestamp)
        return max(0, low - MIN_TIMESTAMP_MARGIN_MS)

    def get_min_timestamp_index(self) -> int:
        return min(self.get_min_timestamp(), self.index_msg_timestamp)
