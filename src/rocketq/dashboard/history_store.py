"""HistoryStore: the dashboard's TPS and lag history, kept by the server and shared by every
viewer, persisted under the dashboard's data path so it survives a restart.

Two tiers, each a ring of time slots (rocketmq-dashboard keeps its collected TPS in daily
files under ``rocketmq.config.dataPath``; we keep a bounded ring instead):

    fine    10 s resolution, 360 slots  = the last hour
    coarse  60 s resolution, 10080 slots = the last 7 days (each slot: the mean of its fine points)

A slot's index is ``(t // step) % slots``; each tier keeps the time of every slot, so a slot
left from before a restart (or a gap) is told apart from a fresh one and never shown as new.
Every series (``topic:<name>:put``, ``group:<name>:lag`` ...) holds one float32 per slot of
each tier (NaN: no sample), so a series costs ``(360 + 10080) * 4 = 41,760`` bytes on disk and
in memory; ``max_bytes`` (default 16 MiB) bounds the number of series (401 at the default).
A new series past the bound takes the place of the one not sampled for the longest time, or is
dropped (counted in ``dropped``) when every series was sampled in the last tick.

File layout (one file per tier, ``<dataPath>/history/fine.bin`` and ``coarse.bin``, each
written to a temporary file, fsynced and renamed over the old one):

    b"RQHIST1\\n" | u32 header length | header JSON {"step_s", "slots", "keys"} |
    int64 slot times * slots | float32 values * slots for each key, in the header's order
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import threading
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

MAGIC = b"RQHIST1\n"
HEADER_LEN_STRUCT = struct.Struct("<I")
FINE_STEP_S = 10.0
FINE_SLOTS = 360
COARSE_STEP_S = 60.0
COARSE_SLOTS = 7 * 24 * 60
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
NAN = float("nan")


class Points(TypedDict):
    """What ``HistoryStore.query`` answers (and ``/api/history/...`` sends)."""

    times: list[int]
    step_s: float
    series: dict[str, list[float | None]]


@dataclass
class Tier:
    """One ring: slot times (epoch s of the slot's start, -1 unused) and a row per series."""

    step_s: float
    slots: int
    times: array[int] = field(init=False)
    rows: dict[str, array[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.times = array("q", [-1]) * self.slots

    def slot_of(self, t_s: float) -> tuple[int, int]:
        """(index, slot start time) of time ``t_s``."""
        start = int(t_s // self.step_s)
        return start % self.slots, int(start * self.step_s)

    def claim(self, t_s: float) -> int:
        """The slot of ``t_s``, emptied first when it last held an older time."""
        index, start = self.slot_of(t_s)
        if self.times[index] != start:
            self.times[index] = start
            for row in self.rows.values():
                row[index] = NAN
        return index

    def row(self, key: str) -> array[float]:
        found = self.rows.get(key)
        if found is None:
            found = self.rows[key] = array("f", [NAN]) * self.slots
        return found

    def window(self, now_s: float, span_s: float) -> list[int]:
        """The slot indexes holding times in (now - span, now], oldest first."""
        return self.since(int((now_s - span_s) // self.step_s) + 1, now_s)

    def since(self, first: int, now_s: float) -> list[int]:
        """The slot indexes holding slot numbers ``first`` up to now's, oldest first."""
        last = int(now_s // self.step_s)
        found = []
        for start in range(max(first, last - self.slots + 1), last + 1):
            index = start % self.slots
            if self.times[index] == int(start * self.step_s):
                found.append(index)
        return found

    def encode(self) -> bytes:
        keys = sorted(self.rows)
        header = json.dumps({"step_s": self.step_s, "slots": self.slots, "keys": keys}).encode()
        parts = [MAGIC, HEADER_LEN_STRUCT.pack(len(header)), header, self.times.tobytes()]
        parts.extend(self.rows[k].tobytes() for k in keys)
        return b"".join(parts)

    def decode_into(self, data: bytes) -> None:
        """Load ``data`` (an ``encode`` output of the same step and slots; else nothing)."""
        if not data.startswith(MAGIC):
            return
        at = len(MAGIC)
        (length,) = HEADER_LEN_STRUCT.unpack_from(data, at)
        at += HEADER_LEN_STRUCT.size
        header = json.loads(data[at : at + length])
        at += length
        if header["step_s"] != self.step_s or header["slots"] != self.slots:
            return  # another resolution: start afresh rather than misplace points
        times = array("q")
        times.frombytes(data[at : at + 8 * self.slots])
        at += 8 * self.slots
        rows = {}
        for key in header["keys"]:
            row = array("f")
            row.frombytes(data[at : at + 4 * self.slots])
            at += 4 * self.slots
            if len(row) != self.slots:
                return  # a short file: keep nothing of it
            rows[key] = row
        if len(times) == self.slots:
            self.times, self.rows = times, rows


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a crash leaves the old file or the new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class HistoryStore:
    """The fine and coarse rings of every series; ``path`` None keeps them in memory only."""

    def __init__(
        self,
        path: Path | None,
        *,
        fine_step_s: float = FINE_STEP_S,
        coarse_step_s: float = COARSE_STEP_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.path = path
        self.fine = Tier(fine_step_s, FINE_SLOTS)
        self.coarse = Tier(coarse_step_s, COARSE_SLOTS)
        self.max_series = max(1, max_bytes // self.series_bytes())
        self.dropped = 0
        self._last_seen: dict[str, float] = {}
        self._lock = threading.Lock()
        if path is not None:
            for tier, name in ((self.fine, "fine.bin"), (self.coarse, "coarse.bin")):
                # no history yet, or a damaged file: start empty
                with contextlib.suppress(OSError, ValueError, KeyError, struct.error):
                    tier.decode_into((path / name).read_bytes())
            self._last_seen = dict.fromkeys(self.fine.rows.keys() | self.coarse.rows.keys(), 0.0)

    @staticmethod
    def series_bytes() -> int:
        return 4 * (FINE_SLOTS + COARSE_SLOTS)

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(self._last_seen)

    def add(self, values: dict[str, float], now_s: float) -> None:
        """One sample of every series at ``now_s``; the coarse slot gets the mean of the fine
        points of its minute."""
        with self._lock:
            fine_index = self.fine.claim(now_s)
            coarse_index = self.coarse.claim(now_s)
            _, minute = self.coarse.slot_of(now_s)
            in_minute = self.fine.since(math.ceil(minute / self.fine.step_s), now_s)
            for key, value in values.items():
                if not self._admit(key, now_s):
                    continue
                self._last_seen[key] = now_s
                fine = self.fine.row(key)
                fine[fine_index] = value
                points = [fine[i] for i in in_minute if not math.isnan(fine[i])]
                if points:
                    self.coarse.row(key)[coarse_index] = sum(points) / len(points)

    def _admit(self, key: str, now_s: float) -> bool:
        if key in self._last_seen or len(self._last_seen) < self.max_series:
            return True
        oldest = min(self._last_seen, key=self._last_seen.__getitem__)
        if self._last_seen[oldest] >= now_s:
            self.dropped += 1
            return False
        del self._last_seen[oldest]
        self.fine.rows.pop(oldest, None)
        self.coarse.rows.pop(oldest, None)
        return True

    def query(self, keys: list[str], now_s: float, span_s: float) -> Points:
        """The points of ``keys`` over the last ``span_s`` (the fine tier up to an hour, the
        coarse one beyond): ``{"times": [ms...], "step_s", "series": {key: [value|None...]}}``."""
        with self._lock:
            tier = self.fine if span_s <= self.fine.step_s * self.fine.slots else self.coarse
            slots = tier.window(now_s, span_s)
            series: dict[str, list[float | None]] = {}
            for key in keys:
                row = tier.rows.get(key)
                if row is not None:
                    series[key] = [None if math.isnan(row[i]) else round(row[i], 2) for i in slots]
            times = [tier.times[i] * 1000 for i in slots]
        return {"times": times, "step_s": tier.step_s, "series": series}

    def latest(self, prefix: str, now_s: float) -> dict[str, float]:
        """The newest fine value of every series named ``prefix...`` sampled in the last two
        steps (a series that stopped is left out)."""
        with self._lock:
            slots = self.fine.window(now_s, 2 * self.fine.step_s)
            found = {}
            for key, row in self.fine.rows.items():
                if key.startswith(prefix):
                    values = [row[i] for i in slots if not math.isnan(row[i])]
                    if values:
                        found[key] = values[-1]
        return found

    def save(self, *, coarse: bool = True) -> None:
        """Persist the fine tier (and the coarse one) atomically; no-op without a path."""
        if self.path is None:
            return
        with self._lock:
            blobs = [("fine.bin", self.fine.encode())]
            if coarse:
                blobs.append(("coarse.bin", self.coarse.encode()))
        self.path.mkdir(parents=True, exist_ok=True)
        for name, data in blobs:
            write_atomically(self.path / name, data)
