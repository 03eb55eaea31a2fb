"""The HA wire format (RocketMQ 4.x ``HAConnection`` / ``HAClient``), sans IO.

Slave -> master, every ``haSendHeartbeatInterval`` and after each append::

    0 maxPhyOffset i8     the slave's commitlog max offset
    = 8 bytes

Master -> slave, one frame per transfer (``size`` 0 is a heartbeat)::

    0 phyOffset i8        where the data starts in the master's commitlog
    8 bodySize  i4        bytes of data that follow (at most haTransferBatchSize)
    12 data     bodySize  raw commitlog bytes
    = 12 + bodySize bytes

The master answers only whole frames; a frame may end inside a record (the slave's
dispatcher waits for the rest). Decoders validate what they read and say where it failed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rocketq.errors import RemotingCommandError

REPORT_STRUCT = struct.Struct(
    ">q"  # maxPhyOffset of the slave
)
REPORT_SIZE = 8
assert REPORT_STRUCT.size == REPORT_SIZE

TRANSFER_HEADER_STRUCT = struct.Struct(
    ">q"  # phyOffset: master commitlog offset of the first data byte
    "i"  # bodySize
)
TRANSFER_HEADER_SIZE = 12
assert TRANSFER_HEADER_STRUCT.size == TRANSFER_HEADER_SIZE


class HAProtocolError(RemotingCommandError):
    """A peer sent bytes that are not an HA frame; the connection is closed."""


def encode_report(max_phy_offset: int) -> bytes:
    return REPORT_STRUCT.pack(max_phy_offset)


def encode_transfer_header(phy_offset: int, body_size: int) -> bytes:
    return TRANSFER_HEADER_STRUCT.pack(phy_offset, body_size)


@dataclass(frozen=True, slots=True)
class TransferFrame:
    phy_offset: int
    data: bytes


class ReportDecoder:
    """Master side: the slave's acked offsets; only the newest whole report matters."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> int | None:
        """Returns the last complete report in what arrived so far, or None."""
        self._buf += data
        whole = len(self._buf) - len(self._buf) % REPORT_SIZE
        if whole == 0:
            return None
        (offset,) = REPORT_STRUCT.unpack_from(self._buf, whole - REPORT_SIZE)
        del self._buf[:whole]
        if offset < 0:
            raise HAProtocolError(f"slave reported a negative offset {offset}")
        return int(offset)


class TransferDecoder:
    """Slave side: frames out of the master's byte stream."""

    def __init__(self, max_body_size: int) -> None:
        self.max_body_size = max_body_size
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[TransferFrame]:
        self._buf += data
        frames: list[TransferFrame] = []
        pos = 0
        buf = self._buf
        while len(buf) - pos >= TRANSFER_HEADER_SIZE:
            phy, size = TRANSFER_HEADER_STRUCT.unpack_from(buf, pos)
            if phy < 0 or not 0 <= size <= self.max_body_size:
                raise HAProtocolError(
                    f"bad transfer header at stream byte {pos}: offset {phy}, size {size}"
                    f" (max {self.max_body_size})"
                )
            end = pos + TRANSFER_HEADER_SIZE + size
            if end > len(buf):
                break
            frames.append(TransferFrame(phy, bytes(buf[pos + TRANSFER_HEADER_SIZE : end])))
            pos = end
        del buf[:pos]
        return frames
