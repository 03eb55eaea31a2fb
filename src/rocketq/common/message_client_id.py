"""MessageClientIDSetter: the client message id (UNIQ_KEY), built as RocketMQ's class does.

16 bytes, 32 upper-case hex characters: client IPv4 address (4), low 16 bits of the pid (2),
a per-process random number in place of Java's class-loader hash (4), milliseconds since the
start of the current month in local time (4, wrapping as Java's int does), a counter (2).
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import struct
import threading
import time

from rocketq.common import clock

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()


class _UniqIdMaker:
    """MessageClientIDSetter: IP, pid, a per-process random (the class-loader hash), the
    milliseconds since the start of the month (local time), a 16-bit counter."""

    def __init__(self) -> None:
        ip = _local_ip()
        self.prefix = (
            (ip + struct.pack(">HI", os.getpid() & 0xFFFF, _random.getrandbits(31))).hex().upper()
        )
        self._counter = itertools.count(_random.randrange(1 << 16))
        self._lock = threading.Lock()
        self._month_start_ms = 0
        self._next_month_ms = 0

    def _refresh_month(self, now_ms: int) -> None:
        t = time.localtime(now_ms / 1000)
        start = time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))
        year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        nxt = time.mktime((year, month, 1, 0, 0, 0, 0, 0, -1))
        self._month_start_ms, self._next_month_ms = int(start * 1000), int(nxt * 1000)

    def create(self) -> str:
        now_ms = clock.now_ms()
        if now_ms >= self._next_month_ms:
            with self._lock:
                if now_ms >= self._next_month_ms:
                    self._refresh_month(now_ms)
        diff = (now_ms - self._month_start_ms) & 0xFFFFFFFF
        count = next(self._counter) & 0xFFFF
        return self.prefix + f"{diff:08X}{count:04X}"


def _local_ip() -> bytes:
    try:
        ip = socket.gethostbyname(socket.gethostname())
        raw = socket.inet_aton(ip)
    except OSError:
        raw = b"\x7f\x00\x00\x01"
    return raw


_uniq_maker: _UniqIdMaker | None = None


def create_uniq_id() -> str:
    """A client message id (UNIQ_KEY) in MessageClientIDSetter's 16-byte layout."""
    global _uniq_maker
    if _uniq_maker is None:
        _uniq_maker = _UniqIdMaker()
    return _uniq_maker.create()
