"""MappedFile: one full-size, preallocated, memory-mapped store file.

Theory of operation
-------------------
A file is created at its full configured size (as MappedFile#init) and *preallocated* with
``os.posix_fallocate``: a sparse mapping (RocketMQ's) on a full disk turns a store into SIGBUS,
which kills the process (tests/e2e/test_disk_full.py), while fallocate reports ENOSPC at
creation, where it can become ``CREATE_MAPPED_FILE_FAILED``. It is preallocated under
``<name>.tmp`` and linked to its name only when full-size, so a crash inside the creation leaves
a ``.tmp`` file that the next load removes, never a short file under a store name. Writers
copy into the mapping and move ``wrote_position``; :meth:`flush` makes
``[flushed_position, wrote_position)`` durable and moves ``flushed_position``: on Linux with
``fdatasync`` on the descriptor (it covers pages dirtied through a shared mapping and, unlike
``mmap.flush``, releases the GIL), elsewhere with msync. Only one thread writes a file (the
CommitLog put lock or the single dispatch thread);
readers only look below ``wrote_position``. Memoryviews handed out by :meth:`select_view` must
be released before :meth:`close`, otherwise ``mmap.close`` raises ``BufferError``; :meth:`close`
therefore releases its own views first.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import sys
import threading

from rocketq.common import failpoint, native_record
from rocketq.errors import StoreError

OS_PAGE_SIZE = 4096
# On Linux a MAP_SHARED mapping shares the page cache with the file, so fdatasync on the
# descriptor writes back pages dirtied through the mapping, and it lets other threads run.
USE_FDATASYNC = sys.platform.startswith("linux")
#: the name a file has while it is created (see _open_preallocated)
CREATING_SUFFIX = ".tmp"
ZERO_CHUNK = bytes(1 << 20)


class MappedFileCreateError(StoreError):
    """A mapped file could not be created (disk full, permission): CREATE_MAPPED_FILE_FAILED."""


class MappedFile:
    __slots__ = (
        "_closed",
        "_fd",
        "_use_lock",
        "_view",
        "file_from_offset",
        "file_name",
        "file_size",
        "first_create_in_queue",
        "flushed_position",
        "mm",
        "wrote_position",
    )

    def __init__(self, file_name: str, file_size: int) -> None:
        self.file_name = file_name
        self.file_size = file_size
        self.file_from_offset = int(os.path.basename(file_name))
        self.wrote_position = 0
        self.flushed_position = 0
        self._closed = False
        self.first_create_in_queue = False
        # populate (store/warm.py) and a batched sync (sync_batch.py) against close
        self._use_lock = threading.Lock()
        exists = os.path.exists(file_name)
        self._fd = _open_preallocated(file_name, file_size, create=not exists)
        try:
            self.mm = mmap.mmap(self._fd, file_size, access=mmap.ACCESS_WRITE)
        except BaseException:
            os.close(self._fd)
            raise
        self._view = memoryview(self.mm)

    # ------------------------------------------------------------------ writing

    def append_message(self, data: bytes | bytearray | memoryview) -> bool:
        """Copy ``data`` at the write position; False if it does not fit."""
        pos = self.wrote_position
        end = pos + len(data)
        if end > self.file_size:
            return False
        self._view[pos:end] = data
        self.wrote_position = end
        return True

    def write_at(self, position: int, data: bytes | bytearray | memoryview) -> None:
        self._view[position : position + len(data)] = data

    @property
    def view(self) -> memoryview:
        return self._view

    def is_full(self) -> bool:
        return self.wrote_position >= self.file_size

    def remaining(self) -> int:
        return self.file_size - self.wrote_position

    def set_positions(self, position: int) -> None:
        self.wrote_position = position
        self.flushed_position = position

    # ------------------------------------------------------------------ flushing

    def dirty_pages(self) -> int:
        return self.wrote_position // OS_PAGE_SIZE - self.flushed_position // OS_PAGE_SIZE

    def is_able_to_flush(self, least_pages: int) -> bool:
        if self.is_full() and self.flushed_position < self.wrote_position:
            return True
        if least_pages > 0:
            return self.dirty_pages() >= least_pages
        return self.wrote_position > self.flushed_position

    def flush(self, least_pages: int = 0) -> int:
        """msync the dirty range if ``least_pages`` pages are dirty; return the flushed position."""
        if self._closed or not self.is_able_to_flush(least_pages):
            return self.flushed_position
        target = self.wrote_position
        if USE_FDATASYNC:
            os.fdatasync(self._fd)  # releases the GIL; mmap.flush (msync) does not
        else:
            start = self.flushed_position - self.flushed_position % OS_PAGE_SIZE
            self.mm.flush(start, target - start)
        self.flushed_position = target
        return target

    def flush_target(self, least_pages: int) -> int | None:
        """Where :meth:`flush` would flush to now, None when it would not (a batched flush,
        ``sync_batch.py``: the sync runs later, then :meth:`flushed_to`)."""
        if self._closed or not self.is_able_to_flush(least_pages):
            return None
        return self.wrote_position

    def flushed_to(self, target: int) -> None:
        self.flushed_position = max(self.flushed_position, target)

    @property
    def fd(self) -> int:
        return self._fd

    def hold_open(self) -> bool:
        """Keep the file open (a close waits) until :meth:`release_hold`; False when it is
        closed already (nothing held)."""
        self._use_lock.acquire()
        if self._closed:
            self._use_lock.release()
            return False
        return True

    def release_hold(self) -> None:
        self._use_lock.release()

    def sync(self) -> None:
        """Write back every page dirtied through the mapping, positions untouched (a file
        written in place at any offset: the index file's slots). fdatasync on Linux: an msync
        of a 400 MB index mapping held the GIL, and so stalled the broker's loop, for 6-9 ms
        once a second (BENCHMARKS.md, issue 22)."""
        if self._closed:
            return
        if USE_FDATASYNC:
            os.fdatasync(self._fd)
        else:
            self.mm.flush()

    def populate(self, start: int, end: int, *, write: bool = True) -> bool | None:
        """Fault in the whole pages of ``[start, end)`` without changing a byte
        (``_native/populate.c``, madvise POPULATE_WRITE or _READ, the GIL released), so the
        writer finds them mapped. True when done, False when the kernel lacks the advice,
        None when the file is closed or the C module is off (``ROCKETQ_NATIVE=0``)."""
        compiled = native_record.RECORD
        end = min(end, self.file_size)
        if compiled is None or end <= start:
            return None
        with self._use_lock:  # close waits: the mapping stays while the kernel walks it
            if self._closed:
                return None
            return compiled.populate(self.mm, start, end - start, write)

    # ------------------------------------------------------------------ reading

    def select_view(self, position: int, size: int) -> memoryview:
        """A zero-copy view of ``[position, position+size)``; release it before close."""
        return self._view[position : position + size]

    def read(self, position: int, size: int) -> bytes:
        return bytes(self._view[position : position + size])

    def last_modified_ms(self) -> int:
        return int(os.stat(self.file_name).st_mtime * 1000)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._use_lock:
            if self._closed:
                return
            self._closed = True
        self._view.release()
        try:
            self.mm.close()
        finally:
            os.close(self._fd)

    def destroy(self) -> None:
        self.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.file_name)

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        return (
            f"MappedFile({os.path.basename(self.file_name)}, wrote={self.wrote_position},"
            f" flushed={self.flushed_position})"
        )


def _open_preallocated(path: str, size: int, *, create: bool) -> int:
    if not create:
        return _open_existing(path, size)
    # Created under a temporary name and linked into place only once full-size: a crash inside
    # the creation leaves ``<name>.tmp`` (removed at the next load), never a short file under
    # the store's own name (an index file of 0 bytes, a consume queue file of the wrong size).
    tmp = path + CREATING_SUFFIX
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as exc:
        raise MappedFileCreateError(exc.errno, f"cannot open mapped file {tmp}: {exc}") from exc
    try:
        failpoint.hit("mapped_file.create." + _kind(path))
        os.posix_fallocate(fd, 0, size)
        os.fdatasync(fd)
        os.link(tmp, path)  # fails on an existing file, as O_EXCL did
        failpoint.hit("mapped_file.linked." + _kind(path))
        os.unlink(tmp)
    except OSError as exc:
        os.close(fd)
        _unlink_quietly(tmp)
        raise MappedFileCreateError(exc.errno, f"cannot create {path}: {exc}") from exc
    return fd


def _kind(path: str) -> str:
    """Which store file ``path`` is, for a failpoint's name: index, consumequeue, commitlog..."""
    parts = path.split(os.sep)
    return "consumequeue" if "consumequeue" in parts else parts[-2]


def _open_existing(path: str, size: int) -> int:
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as exc:
        raise MappedFileCreateError(exc.errno, f"cannot open mapped file {path}: {exc}") from exc
    actual = os.fstat(fd).st_size
    if actual != size:
        os.close(fd)
        raise StoreError(errno.EINVAL, f"{path}: size {actual} != {size}")
    return fd


def remove_cut_creations(directory: str) -> list[str]:
    """Delete the ``*.tmp`` files a crash inside :func:`_open_preallocated` left in
    ``directory``; return their paths (each is logged by the caller)."""
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(directory)):
            if name.endswith(CREATING_SUFFIX):
                path = os.path.join(directory, name)
                _unlink_quietly(path)
                removed.append(path)
    return removed


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def last_nonzero(view: memoryview, start: int, size: int, zero_run: int) -> int:
    """One past the last non-zero byte of ``view[start:size]`` (``start`` when none), looking
    forward until ``zero_run`` zero bytes follow it (store files are written in order)."""
    chunk = len(ZERO_CHUNK)
    last = pos = start
    while pos < size and pos - last < zero_run:
        end = min(size, pos + chunk)
        data = view[pos:end].tobytes()
        if data != ZERO_CHUNK[: end - pos]:
            last = pos + len(data.rstrip(b"\0"))
        pos = end
    return last
