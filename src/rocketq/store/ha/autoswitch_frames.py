"""The autoswitch HA wire format of controller mode (RocketMQ 5's ``AutoSwitchHAClient`` and
``AutoSwitchHAConnection``), sans IO. All integers big-endian; every frame starts with the
sender's ``HAConnectionState`` ordinal (READY 0, HANDSHAKE 1, TRANSFER 2, SUSPEND 3,
SHUTDOWN 4).

Slave -> master, handshake (``AutoSwitchHAClient.HANDSHAKE_HEADER_SIZE``)::

    0  state              i4   HANDSHAKE (1)
    4  isSyncFromLastFile i2   1: start an empty slave at the master's last file
    6  isAsyncLearner     i2   1: never joins the SyncStateSet
    8  slaveBrokerId      i8   the slave's controller-assigned broker id
    = 16 bytes

Slave -> master, transfer ack (``AutoSwitchHAClient.TRANSFER_HEADER_SIZE``)::

    0  state              i4   TRANSFER (2)
    4  maxOffset          i8   the slave's commitlog max offset
    = 12 bytes

Master -> slave, handshake (``AutoSwitchHAConnection.HANDSHAKE_HEADER_SIZE``)::

    0  state              i4   HANDSHAKE (1)
    4  bodySize           i4   12 x entries
    8  offset             i8   the master's max offset
    16 epoch              i4   the master's last epoch
    20 body: entries x (epoch i4, startOffset i8)   (EPOCH_ENTRY_SIZE 12)
    = 20 + bodySize bytes

Master -> slave, transfer (``AutoSwitchHAConnection.TRANSFER_HEADER_SIZE``; body 0 is a
heartbeat)::

    0  state              i4   TRANSFER (2)
    4  bodySize           i4   bytes of commitlog data that follow
    8  offset             i8   where the data starts in the master's commitlog
    16 epoch              i4   the epoch the data was written under
    20 epochStartOffset   i8   where that epoch starts
    28 confirmOffset      i8   the master's confirm offset
    36 body: bodySize bytes of commitlog, never spanning two epochs
    = 36 + bodySize bytes

Java's reader takes a frame whose state differs from its own as a protocol error; so do we.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from rocketq.store.ha.epoch_file import EpochEntry
from rocketq.store.ha.frames import HAProtocolError


class HAConnectionState(IntEnum):
    """HAConnectionState.java; the ordinal goes on the wire."""

    READY = 0
    HANDSHAKE = 1
    TRANSFER = 2
    SUSPEND = 3
    SHUTDOWN = 4


SLAVE_HANDSHAKE_STRUCT = struct.Struct(
    ">i"  # state
    "h"  # isSyncFromLastFile
    "h"  # isAsyncLearner
    "q"  # slaveBrokerId
)
SLAVE_HANDSHAKE_SIZE = 16
assert SLAVE_HANDSHAKE_STRUCT.size == SLAVE_HANDSHAKE_SIZE

SLAVE_ACK_STRUCT = struct.Struct(
    ">i"  # state
    "q"  # maxOffset
)
SLAVE_ACK_SIZE = 12
assert SLAVE_ACK_STRUCT.size == SLAVE_ACK_SIZE

MASTER_HANDSHAKE_STRUCT = struct.Struct(
    ">i"  # state
    "i"  # bodySize
    "q"  # master max offset
    "i"  # master last epoch
)
MASTER_HANDSHAKE_SIZE = 20
assert MASTER_HANDSHAKE_STRUCT.size == MASTER_HANDSHAKE_SIZE

MASTER_TRANSFER_STRUCT = struct.Struct(
    ">i"  # state
    "i"  # bodySize
    "q"  # offset of the first data byte
    "i"  # epoch of the data
    "q"  # epochStartOffset
    "q"  # confirmOffset
)
MASTER_TRANSFER_SIZE = 36
assert MASTER_TRANSFER_STRUCT.size == MASTER_TRANSFER_SIZE

EPOCH_ENTRY_STRUCT = struct.Struct(
    ">i"  # epoch
    "q"  # startOffset
)
EPOCH_ENTRY_SIZE = 12
assert EPOCH_ENTRY_STRUCT.size == EPOCH_ENTRY_SIZE
#: AbstractWriteSocketService.handShakeBuffer holds at most 1000 entries.
MAX_EPOCH_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class SlaveHandshake:
    broker_id: int
    sync_from_last_file: bool = False
    async_learner: bool = False


@dataclass(frozen=True, slots=True)
class SlaveAck:
    max_offset: int


@dataclass(frozen=True, slots=True)
class MasterHandshake:
    max_offset: int
    epoch: int
    entries: tuple[EpochEntry, ...]


@dataclass(frozen=True, slots=True)
class MasterTransfer:
    offset: int
    epoch: int
    epoch_start_offset: int
    confirm_offset: int
    data: bytes


def encode_slave_handshake(h: SlaveHandshake) -> bytes:
    return SLAVE_HANDSHAKE_STRUCT.pack(
        HAConnectionState.HANDSHAKE, int(h.sync_from_last_file), int(h.async_learner), h.broker_id
    )


def encode_slave_ack(max_offset: int) -> bytes:
    return SLAVE_ACK_STRUCT.pack(HAConnectionState.TRANSFER, max_offset)


def encode_master_handshake(max_offset: int, epoch: int, entries: Sequence[EpochEntry]) -> bytes:
    body = b"".join(EPOCH_ENTRY_STRUCT.pack(e.epoch, e.start_offset) for e in entries)
    head = MASTER_HANDSHAKE_STRUCT.pack(HAConnectionState.HANDSHAKE, len(body), max_offset, epoch)
    return head + body


def encode_master_transfer_header(
    offset: int, body_size: int, epoch: int, epoch_start_offset: int, confirm_offset: int
) -> bytes:
    return MASTER_TRANSFER_STRUCT.pack(
        HAConnectionState.TRANSFER, body_size, offset, epoch, epoch_start_offset, confirm_offset
    )


def _state(buf: bytearray, pos: int) -> HAConnectionState:
    (raw,) = struct.unpack_from(">i", buf, pos)
    try:
        return HAConnectionState(raw)
    except ValueError:
        raise HAProtocolError(f"unknown HA state {raw} at stream byte {pos}") from None


class SlaveFrameDecoder:
    """Master side: the slave's handshake and acks, sized by their state."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[SlaveHandshake | SlaveAck]:
        self._buf += data
        buf, pos, out = self._buf, 0, list[SlaveHandshake | SlaveAck]()
        while len(buf) - pos >= SLAVE_ACK_SIZE:
            state = _state(buf, pos)
            if state is HAConnectionState.HANDSHAKE:
                if len(buf) - pos < SLAVE_HANDSHAKE_SIZE:
                    break
                _, last_file, learner, broker_id = SLAVE_HANDSHAKE_STRUCT.unpack_from(buf, pos)
                out.append(SlaveHandshake(broker_id, last_file == 1, learner == 1))
                pos += SLAVE_HANDSHAKE_SIZE
            elif state is HAConnectionState.TRANSFER:
                _, offset = SLAVE_ACK_STRUCT.unpack_from(buf, pos)
                if offset < 0:
                    raise HAProtocolError(f"slave acked a negative offset {offset}")
                out.append(SlaveAck(offset))
                pos += SLAVE_ACK_SIZE
            else:
                raise HAProtocolError(f"slave sent state {state.name} at stream byte {pos}")
        del buf[:pos]
        return out


class MasterFrameDecoder:
    """Slave side: the master's handshake and transfer frames."""

    def __init__(self, max_body_size: int) -> None:
        self.max_body_size = max_body_size
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[MasterHandshake | MasterTransfer]:
        self._buf += data
        buf, pos, out = self._buf, 0, list[MasterHandshake | MasterTransfer]()
        while len(buf) - pos >= MASTER_HANDSHAKE_SIZE:
            state = _state(buf, pos)
            frame: MasterHandshake | MasterTransfer | None
            if state is HAConnectionState.HANDSHAKE:
                frame, end = self._handshake(buf, pos)
            elif state is HAConnectionState.TRANSFER:
                frame, end = self._transfer(buf, pos)
            else:
                raise HAProtocolError(f"master sent state {state.name} at stream byte {pos}")
            if frame is None:
                break
            out.append(frame)
            pos = end
        del buf[:pos]
        return out

    def _handshake(self, buf: bytearray, pos: int) -> tuple[MasterHandshake | None, int]:
        _, size, max_offset, epoch = MASTER_HANDSHAKE_STRUCT.unpack_from(buf, pos)
        if size < 0 or size % EPOCH_ENTRY_SIZE or size > EPOCH_ENTRY_SIZE * MAX_EPOCH_ENTRIES:
            raise HAProtocolError(f"bad handshake body size {size} at stream byte {pos}")
        end = pos + MASTER_HANDSHAKE_SIZE + size
        if end > len(buf):
            return None, pos
        entries = tuple(
            EpochEntry(*EPOCH_ENTRY_STRUCT.unpack_from(buf, at))
            for at in range(pos + MASTER_HANDSHAKE_SIZE, end, EPOCH_ENTRY_SIZE)
        )
        return MasterHandshake(max_offset, epoch, entries), end

    def _transfer(self, buf: bytearray, pos: int) -> tuple[MasterTransfer | None, int]:
        if len(buf) - pos < MASTER_TRANSFER_SIZE:
            return None, pos
        _, size, offset, epoch, start, confirm = MASTER_TRANSFER_STRUCT.unpack_from(buf, pos)
        if not 0 <= size <= self.max_body_size or offset < 0:
            raise HAProtocolError(
                f"bad transfer header at stream byte {pos}: offset {offset}, size {size}"
                f" (max {self.max_body_size})"
            )
        end = pos + MASTER_TRANSFER_SIZE + size
        if end > len(buf):
            return None, pos
        data = bytes(buf[pos + MASTER_TRANSFER_SIZE : end])
        return MasterTransfer(offset, epoch, start, confirm, data), end
