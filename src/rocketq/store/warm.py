"""WarmMappedFileService: the commitlog's pages faulted in ahead of the writer, off the loop.

The first write into a page of a fresh mapped file costs a page fault in which the kernel
allocates and zeroes a page cache page: 0.6-3.8 us of system time a 1 KiB message, inside the
append on the broker's event loop (BENCHMARKS.md, issue 22). This thread keeps the
``commit_log_warm_ahead_bytes`` past the commitlog's write position populated
(:meth:`MappedFile.populate`, madvise POPULATE_WRITE with the GIL released): the writer finds
its pages mapped. RocketMQ does the job when it creates a file ahead
(``AllocateMappedFileService`` -> ``MappedFile.warmMappedFile``, a zero byte written into
every page, ``warmMapedFileEnable``); ours creates the next file when the writer needs it
(``MappedFileQueue.get_last_mapped_file_or_create``), so the thread is told of each new file
(``MappedFileQueue.on_create``) and warms its head at once.

``warmMapedFileEnable=true`` is honoured as RocketMQ's whole-file warm-up: every page of the
file from the write position to its end, with an fdatasync every
``flushLeastPagesWhenWarmMapedFile`` pages under SYNC_FLUSH (``warmMappedFile`` forces at that
step); RocketMQ's ``mlock`` of the warmed file is not done (the page cache keeps them).

Populate changes no byte, so it runs while the writer appends below the window (a zero store,
as ``warmMappedFile`` does, would race the append). The costs: the window's pages are dirty
page cache ahead of the data (the flush writes those zero pages once more; recovery still
reads zeros past the real end), and the window's memory. The writer is not told anything:
while it moves, the thread looks at the write position as often as its rate needs
(:meth:`moving_wait_ms`: from ``BUSY_WAIT_MS`` up to what the window lasts at the fastest
rate measured, at most doubling from one look to the next, so a burst is looked at often
until its rate is known); while it does not, the thread backs off, doubling, up to
``RESTING_WAIT_MS`` (a window of tens of MiB outlasts that wait at hundreds of MB/s), then
*rests* for ``IDLE_WAIT_MS``. The put path carries no hook, but the first dispatch run after
a rest wakes it (``MessageStore.dispatch_batch`` reads :attr:`resting`, one attribute a run):
an idle broker's thread wakes about once a second, not ten times, and a burst after a rest
finds it looking again within one dispatch.
"""

from __future__ import annotations

import logging
import time

from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.mapped_file import OS_PAGE_SIZE, MappedFile
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)

BUSY_WAIT_MS = 10.0
RESTING_WAIT_MS = 100.0  # a wait longer than this is a rest: a dispatch run ends it
IDLE_WAIT_MS = 1000.0
#: the fastest append rate measured here (the drain row, ~130 MB/s): a window of
#: ``commit_log_warm_ahead_bytes`` lasts ahead / this many ms (32 MiB: 250 ms)
FASTEST_BYTES_PER_MS = 128 * 1024 * 1024 / 1000
#: the most one madvise call populates: shutdown and close wait at most one chunk, and an
#: mmap or munmap of the loop (a large allocation) waits at most for one chunk's mmap_lock hold
CHUNK = 1024 * 1024


class WarmMappedFileService(ServiceThread):
    def __init__(self, config: StoreConfig, queue: MappedFileQueue) -> None:
        super().__init__("WarmMappedFileService")
        self.queue = queue
        self.whole_file = config.warm_mapped_file_enable
        self.ahead = config.commit_log_warm_ahead_bytes
        self.write = config.commit_log_warm_populate_write or self.whole_file
        sync = config.flush_disk_type is FlushDiskType.SYNC_FLUSH
        #: bytes between fdatasyncs of a whole-file warm-up under SYNC_FLUSH (0: none)
        self.sync_every = (
            config.flush_least_pages_when_warm_mapped_file * OS_PAGE_SIZE
            if self.whole_file and sync
            else 0
        )
        #: refill once the window ahead is down by this much
        self.step = max(OS_PAGE_SIZE, self.ahead // 4)
        self._file: MappedFile | None = None
        self._warmed = 0  # the position in ``_file`` up to which its pages are populated
        self._last_seen = -1
        self._moved_bytes = 0  # how far the writer went between the last two looks
        self.populated_bytes = 0  # tests and the runtime info read it
        #: in a wait past RESTING_WAIT_MS: the store's next dispatch run wakes the thread
        self.resting = False
        self.unsupported = False

    @property
    def warmed_offset(self) -> int:
        """The commitlog offset up to which the last file's pages are populated (-1: none)."""
        mf = self._file
        return -1 if mf is None else mf.file_from_offset + self._warmed

    @property
    def enabled(self) -> bool:
        return self.whole_file or self.ahead > 0

    def start(self) -> None:
        if not self.enabled:
            return
        self.queue.on_create = self._file_created
        super().start()

    def shutdown(self) -> None:
        self.queue.on_create = None
        super().shutdown()

    def _file_created(self, mf: MappedFile) -> None:
        self.wakeup()  # on the writer's thread: the new file's head is warmed at once

    def run(self) -> None:
        wait_ms = moving_ms = BUSY_WAIT_MS
        looked = time.monotonic()
        while not self.is_stopped():
            moved = self.warm_once()
            if self.unsupported:
                return
            now = time.monotonic()
            if moved:  # at most twice the last wait: a burst's rate is known one look late
                rate_ms = self.moving_wait_ms(self._moved_bytes, (now - looked) * 1000)
                wait_ms = moving_ms = min(rate_ms, moving_ms * 2)
            else:  # doubling up to a rest, which lasts until a dispatch run or IDLE_WAIT_MS
                moving_ms = BUSY_WAIT_MS  # the writer's next start ramps up from the busy wait
                wait_ms = wait_ms * 2 if wait_ms * 2 <= RESTING_WAIT_MS else IDLE_WAIT_MS
            looked = now
            self.resting = not moved and wait_ms > RESTING_WAIT_MS
            self.wait_for_running(wait_ms)

    def moving_wait_ms(self, moved_bytes: int, elapsed_ms: float) -> float:
        """The next look while the writer moves: when it has used half of what is warmed
        ahead of it at its last rate, and no later than the window lasts at the fastest
        append rate measured (``FASTEST_BYTES_PER_MS``: a burst after a slow stretch). At
        1,000 1 KiB messages a second: every 250 ms, not every 10 ms (116 wake-ups and 8 ms
        of CPU a second)."""
        mf = self._file
        if mf is None or moved_bytes <= 0 or elapsed_ms <= 0:
            return BUSY_WAIT_MS
        ahead = self._warmed - mf.wrote_position
        longest = min(IDLE_WAIT_MS, max(BUSY_WAIT_MS, self.ahead / FASTEST_BYTES_PER_MS))
        return min(longest, max(BUSY_WAIT_MS, ahead * elapsed_ms / moved_bytes / 2))

    def end_rest(self) -> None:
        """The writer appended after a rest (called once a dispatch run while resting)."""
        self.resting = False
        self.wakeup()

    def warm_once(self) -> bool:
        """Populate what the window lacks; True when the write position moved since the last
        look (or a new file came)."""
        mf = self.queue.get_last_mapped_file()
        if mf is None:
            return False
        if mf is not self._file:
            self._file, self._warmed, self._last_seen = mf, 0, -1
        pos = mf.wrote_position
        moved = pos != self._last_seen
        self._moved_bytes = pos - max(0, self._last_seen)
        self._last_seen = pos
        start = max(self._warmed, pos)
        end = mf.file_size if self.whole_file else min(mf.file_size, pos + self.ahead)
        if end - start < self.step and end < mf.file_size:
            return moved
        synced = start
        while start < end and not self.is_stopped():
            stop = min(end, start + CHUNK)
            done = mf.populate(start, stop, write=self.write)
            if done is None:  # closed (truncated, shut down) or ROCKETQ_NATIVE=0
                return moved
            if not done:
                log.warning("the kernel lacks MADV_POPULATE_WRITE: commitlog warm-ahead off")
                self.unsupported = True
                return moved
            self.populated_bytes += stop - start
            self._warmed = start = stop
            if self.sync_every and start - synced >= self.sync_every:
                mf.sync()  # warmMappedFile's force every flushLeastPagesWhenWarmMapedFile
                synced = start
        if self.sync_every and synced < start:
            mf.sync()  # and once the warm-up is done
        return moved
