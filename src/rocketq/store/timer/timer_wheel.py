"""TimerWheel: the ``timerwheel`` file, one 32-byte slot per precision tick (TimerWheel.java).

Slot (``SLOT_STRUCT``, Slot.java), 32 bytes, big-endian::

    0  TIME        i8  the slot's time / precisionMs (5.x keeps the quotient, not the ms)
    8  FIRST_POS   i8  timerlog offset of the slot's first unit (-1: none)
    16 LAST_POS    i8  timerlog offset of its last unit; units chain backwards by PREV_POS
    24 NUM         i4  timers in the slot (a delete marker counts -1)
    28 MAGIC       i4  unused, kept 0
    = 32

The file holds ``slotsTotal * 2`` slots (``slotsTotal`` = 7 days of seconds = 604,800 whatever
the precision, TimerMessageStore.TIMER_WHEEL_TTL_DAY), 38,707,200 bytes. Slot index is
``timeMs / precisionMs % (slotsTotal * 2)``; a slot whose TIME is not the asked time is empty
(a previous lap's leftovers). The file is sparse where never written and mapped; Java reads
it into a heap copy and writes back the differing bytes at flush, we write the mapping in
place and msync at flush: the bytes are the same. Memory is the mapping's touched pages:
bounded by the wheel, never by the number of timers (those live in the timerlog).
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import NamedTuple

from rocketq.errors import CorruptionError
from rocketq.store.mapped_file import USE_FDATASYNC

SLOT_STRUCT = struct.Struct(
    ">"
    "q"  # TIME: timeMs / precisionMs
    "q"  # FIRST_POS
    "q"  # LAST_POS
    "i"  # NUM
    "i"  # MAGIC
)
SLOT_SIZE = 32
assert SLOT_STRUCT.size == SLOT_SIZE
_POS_STRUCT = struct.Struct(">qq")  # FIRST_POS, LAST_POS
_POS_AT = struct.calcsize(">q")
_LAST_POS_AT = struct.calcsize(">qq")

_PAGE = 4096
_ZERO_PAGE = bytes(_PAGE)
BLANK = -1
IGNORE = -2
TIMER_WHEEL_TTL_DAY = 7
DAY_SECS = 24 * 3600
SLOTS_TOTAL = TIMER_WHEEL_TTL_DAY * DAY_SECS


class Slot(NamedTuple):
    time_ms: int  # -1: empty
    first_pos: int
    last_pos: int
    num: int = 0
    magic: int = 0


EMPTY_SLOT = Slot(-1, -1, -1)


class TimerWheel:
    """The mapped ``timerwheel``; one writer (the timer's enqueue or recovery) at a time."""

    def __init__(self, file_name: str, slots_total: int, precision_ms: int) -> None:
        self.file_name = file_name
        self.slots_total = slots_total
        self.precision_ms = precision_ms
        self.wheel_length = slots_total * 2 * SLOT_SIZE
        os.makedirs(os.path.dirname(file_name) or ".", exist_ok=True)
        existed = os.path.exists(file_name) and os.path.getsize(file_name) != 0
        if existed and os.path.getsize(file_name) != self.wheel_length:
            raise CorruptionError(
                file_name,
                0,
                f"timer wheel length {os.path.getsize(file_name)} != expected {self.wheel_length}",
            )
        self.existed = existed
        fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, self.wheel_length)  # sparse, as RandomAccessFile.setLength
            self._mm = mmap.mmap(fd, self.wheel_length, access=mmap.ACCESS_WRITE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd  # kept for flush: fdatasync lets the other threads run, msync does not
        self._closed = False
        #: a slot was written since the last flush began (an idle timer's flush is skipped)
        self._dirty = True

    # ------------------------------------------------------------------ slots

    def get_slot_index(self, time_ms: int) -> int:
        return time_ms // self.precision_ms % (self.slots_total * 2)

    def get_raw_slot(self, time_ms: int) -> Slot:
        t, first, last, num, magic = SLOT_STRUCT.unpack_from(
            self._mm, self.get_slot_index(time_ms) * SLOT_SIZE
        )
        return Slot(t * self.precision_ms, first, last, num, magic)

    def get_slot(self, time_ms: int) -> Slot:
        slot = self.get_raw_slot(time_ms)
        if slot.time_ms != time_ms // self.precision_ms * self.precision_ms:
            return EMPTY_SLOT
        return slot

    def put_slot(
        self, time_ms: int, first_pos: int, last_pos: int, num: int = 0, magic: int = 0
    ) -> None:
        self._dirty = True
        SLOT_STRUCT.pack_into(
            self._mm,
            self.get_slot_index(time_ms) * SLOT_SIZE,
            time_ms // self.precision_ms,
            first_pos,
            last_pos,
            num,
            magic,
        )

    def revise_slot(self, time_ms: int, first_pos: int, last_pos: int, force: bool) -> None:
        """Recovery: point a slot at a unit found in the timerlog (TimerWheel.reviseSlot)."""
        at = self.get_slot_index(time_ms) * SLOT_SIZE
        self._dirty = True
        (t,) = struct.unpack_from(">q", self._mm, at)
        if t != time_ms // self.precision_ms:
            if force:
                slot_first = first_pos if first_pos != IGNORE else last_pos
                _POS_STRUCT.pack_into(self._mm, at + _POS_AT, slot_first, last_pos)
                struct.pack_into(">q", self._mm, at, time_ms // self.precision_ms)
                struct.pack_into(">ii", self._mm, at + 24, 0, 0)
            return
        if first_pos != IGNORE:
            struct.pack_into(">q", self._mm, at + _POS_AT, first_pos)
        if last_pos != IGNORE:
            struct.pack_into(">q", self._mm, at + _LAST_POS_AT, last_pos)

    def _live_slots(self, time_start_ms: int) -> list[Slot]:
        """Every slot of the two laps from ``time_start_ms`` that holds its own lap's time
        (the slots TimerWheel.checkPhyPos and getAllNum visit). Pages of zeros (never
        written: most of a sparse wheel) are skipped without decoding."""
        total = self.slots_total * 2
        start_tick = time_start_ms // self.precision_ms
        live: list[Slot] = []
        mm = self._mm
        for page in range(0, self.wheel_length, _PAGE):
            end = min(page + _PAGE, self.wheel_length)
            if mm[page:end] == _ZERO_PAGE[: end - page]:
                continue
            for at in range(page, end, SLOT_SIZE):
                t, first, last, num, magic = SLOT_STRUCT.unpack_from(mm, at)
                if start_tick <= t < start_tick + total and t % total == at // SLOT_SIZE:
                    live.append(Slot(t * self.precision_ms, first, last, num, magic))
        return live

    def check_phy_pos(self, time_start_ms: int, max_offset: int) -> int:
        """The least FIRST_POS of the live slots whose LAST_POS passes ``max_offset``."""
        firsts = [s.first_pos for s in self._live_slots(time_start_ms) if s.last_pos > max_offset]
        return min(firsts, default=2**63 - 1)

    def get_all_num(self, time_start_ms: int) -> int:
        """Timers pending from ``time_start_ms`` on (TimerWheel.getAllNum)."""
        return sum(s.num for s in self._live_slots(time_start_ms))

    # ------------------------------------------------------------------ lifecycle

    def flush(self) -> None:
        """Write the dirty slots back. The wheel maps up to hundreds of MB (three days of
        100 ms slots: 166 MB), and ``mmap.flush`` (msync) holds the GIL throughout, which
        stalled every thread of the broker, the dequeue's included, once a flush interval."""
        if self._closed or not self._dirty:
            return
        self._dirty = False  # before the sync: a slot written during it is synced next time
        if USE_FDATASYNC:
            os.fdatasync(self._fd)
        else:
            self._mm.flush()

    def shutdown(self, flush: bool = True) -> None:
        if self._closed:
            return
        if flush:
            self.flush()
        self._closed = True
        self._mm.close()
        os.close(self._fd)
