"""SyncBatch: a checkpoint's fdatasyncs and its commit record in one call without the GIL.

The dispatch checkpoint (``dispatch_checkpoint.py``) flushes every consume queue with dirty
units and the index file being written, then writes its point P: about ten fdatasyncs a
second, each a GIL release and re-acquire; a thread that wants the GIL back while the event
loop runs makes the loop hand it over, so the messages sent during the round waited (85 of
120 slower than 1 ms, BENCHMARKS.md, issue 22). Here the round collects the files first and
``_native/populate.c``'s ``sync_files`` syncs them all and then writes and syncs the commit
record (P) in one stretch with the GIL released: one re-acquire a round. The promise is the
same: P is written only once every file before it is synced, and a failed sync writes no P.

Each file is held open while the batch runs (:meth:`MappedFile.hold_open`: a close waits), so
a descriptor is never synced after its file was closed and its number reused. Positions move
(``flushed_position``, the queue's ``flushed_where``) only after the syncs succeeded. Without
the C module (``ROCKETQ_NATIVE=0``) the same calls run one by one in Python.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from rocketq.common import native_record
from rocketq.store.mapped_file import MappedFile


class SyncBatch:
    def __init__(self) -> None:
        self._held: dict[int, MappedFile] = {}  # by id: a file is synced once
        self._done: list[Callable[[], None]] = []

    def __len__(self) -> int:
        return len(self._held)

    def flush(self, mf: MappedFile, least_pages: int) -> int | None:
        """Take ``mf``'s dirty range as :meth:`MappedFile.flush` would: the position it will be
        flushed to (its ``flushed_position`` set after the run), or None when there is
        nothing to flush or it is closed."""
        target = mf.flush_target(least_pages)
        if target is None or not self._hold(mf):
            return None
        self._done.append(functools.partial(mf.flushed_to, target))
        return target

    def sync(self, mf: MappedFile) -> None:
        """Sync every page dirtied through ``mf``'s mapping (:meth:`MappedFile.sync`)."""
        self._hold(mf)

    def after(self, step: Callable[[], None]) -> None:
        """Run ``step`` once the syncs succeeded (a queue's ``flushed_where``)."""
        self._done.append(step)

    def run(self, last_fd: int = -1, last_data: bytes = b"") -> None:
        """Sync the files, then write ``last_data`` at offset 0 of ``last_fd`` and sync it
        (when ``last_fd`` >= 0); raises OSError at the first failure (nothing after it runs,
        no position moves). The files are released either way."""
        try:
            fds = [mf.fd for mf in self._held.values()]
            compiled = native_record.RECORD
            if compiled is not None:
                compiled.sync_files(fds, last_fd, last_data)
            else:
                for fd in fds:
                    os.fdatasync(fd)
                if last_fd >= 0:
                    os.pwrite(last_fd, last_data, 0)
                    os.fdatasync(last_fd)
            for step in self._done:
                step()
        finally:
            self.release()

    def release(self) -> None:
        """Let the files close again, syncing nothing (after :meth:`run`, or instead of it
        when the round fails before it)."""
        held, self._held, self._done = self._held, {}, []
        for mf in held.values():
            mf.release_hold()

    def _hold(self, mf: MappedFile) -> bool:
        if id(mf) in self._held:
            return True
        if not mf.hold_open():
            return False
        self._held[id(mf)] = mf
        return True
