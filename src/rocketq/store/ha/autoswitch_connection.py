"""AutoSwitchHAConnection: the master's side of one slave link in controller mode (RocketMQ 5's
``AutoSwitchHAConnection``), over the frames of ``autoswitch_frames``.

Theory of operation
-------------------
The read thread takes the slave's handshake (its broker id and flags) and answers through the
write thread with the master's epoch list and max offset; the slave truncates to the
consistent point and then acks (TRANSFER, its max offset). The first ack is where the slave
wants data from; every ack moves the slave's ``slave_ack_offset``, may mark it caught up (an
ack at or past what the master had at the last transfer) and may expand the SyncStateSet, then
the service recomputes the confirm offset and completes the waiting SYNC sends.

The write thread sends frames of at most ``ha_transfer_batch_size`` bytes inside one
commitlog file. A batch **never spans two epochs**: it is cut at the end of the epoch of its
first byte, and the next batch carries the next epoch and its start offset, so the slave can
append the same epoch entry. Each header carries the confirm offset. With nothing to send the
slave counts as caught up now once it acked everything sent (RocketMQ marks it caught up even
before its ack, so a paused slave whose socket still takes bytes never shrinks), and a
header-only heartbeat goes every ``ha_send_heartbeat_interval_ms``. Offsets are compared, never
subtracted to compare.
"""

from __future__ import annotations

import logging
import socket
import time
from typing import Protocol

from rocketq.store.ha.autoswitch_frames import (
    HAConnectionState,
    SlaveFrameDecoder,
    SlaveHandshake,
    encode_master_handshake,
    encode_master_transfer_header,
)
from rocketq.store.ha.epoch_file import OPEN_END_OFFSET, EpochEntry
from rocketq.store.ha.epoch_file_cache import EpochFileCache
from rocketq.store.ha.ha_connection import ConnectionOwner, HAConnection

log = logging.getLogger(__name__)


class AutoSwitchOwner(ConnectionOwner, Protocol):
    """What a connection uses of the AutoSwitchHAService that accepted it."""

    epoch_cache: EpochFileCache

    def get_max_phy_offset(self) -> int: ...

    def get_confirm_offset(self) -> int: ...

    def update_caught_up_time(self, slave_id: int, caught_up_ms: int) -> None: ...

    def maybe_expand_sync_state_set(self, conn: AutoSwitchHAConnection, offset: int) -> None: ...

    def on_slave_ack(self, conn: AutoSwitchHAConnection) -> None: ...


class AutoSwitchHAConnection(HAConnection):
    def __init__(self, service: AutoSwitchOwner, sock: socket.socket, addr: str) -> None:
        super().__init__(service, sock, addr)
        self.owner = service
        self.state = HAConnectionState.HANDSHAKE
        self.slave_id = -1
        self.is_async_learner = False
        self.is_sync_from_last_file = False
        self._handshake_pending = False
        self._last_master_max_offset = -1
        self._last_transfer_ms = 0

    # ------------------------------------------------------------------ read side

    def _read_loop(self) -> None:
        decoder = SlaveFrameDecoder()
        self._read_until_closed(lambda data: self._on_frames(decoder, data))

    def _on_frames(self, decoder: SlaveFrameDecoder, data: bytes) -> None:
        for frame in decoder.feed(data):
            if isinstance(frame, SlaveHandshake):
                self.slave_id = frame.broker_id
                self.is_async_learner = frame.async_learner
                self.is_sync_from_last_file = frame.sync_from_last_file
                self.state = HAConnectionState.HANDSHAKE
                self._handshake_pending = True
                log.info("HA slave %s handshake: broker id %d", self.client_addr, self.slave_id)
            else:
                self.state = HAConnectionState.TRANSFER
                self._on_ack(frame.max_offset)
            self.wakeup()

    def _on_ack(self, offset: int) -> None:
        self.slave_ack_offset = offset
        if self.slave_request_offset < 0:
            self.slave_request_offset = offset
            log.info("HA slave %s requests offset %d", self.client_addr, offset)
        if not self.is_async_learner and offset >= self._last_master_max_offset:
            now = self.service.config.clock_ms()
            caught_up = now if offset == self.owner.get_max_phy_offset() else self._last_transfer_ms
            self.owner.update_caught_up_time(self.slave_id, caught_up)
            self.owner.maybe_expand_sync_state_set(self, offset)
        self.owner.on_slave_ack(self)

    # ------------------------------------------------------------------ write side

    def _write_until_closed(self) -> None:
        while not self.closed:
            if self._handshake_pending:
                self._handshake_pending = False
                cache = self.owner.epoch_cache
                max_offset = self.owner.get_max_phy_offset()
                self.sock.sendall(
                    encode_master_handshake(max_offset, cache.last_epoch(), cache.all_entries())
                )
            elif self.state is HAConnectionState.TRANSFER and self.slave_request_offset >= 0:
                break
            self._wait(0.01)
        first = self._first_offset() if not self.closed else None
        if first is not None:
            self._transfer_from(first)

    def _first_offset(self) -> int | None:
        commit_log = self.service.commit_log
        if self.slave_request_offset != 0:
            return super()._first_offset()
        if self.is_sync_from_last_file:
            end = commit_log.get_max_offset()
            return end - end % commit_log.mapped_file_size
        return max(0, commit_log.get_min_offset())

    def _transfer_from(self, nxt: int) -> None:
        cfg = self.service.config
        cache = self.owner.epoch_cache
        entry = cache.find_epoch_entry_by_offset(nxt)
        if entry is None:
            log.error(
                "HA slave %s: no epoch holds offset %d (epochs %s); link closed",
                self.client_addr,
                nxt,
                cache.all_entries(),
            )
            return
        log.info("HA slave %s: transfer from %d in epoch %s", self.client_addr, nxt, entry)
        heartbeat_s = cfg.ha_send_heartbeat_interval_ms / 1000
        last_write = time.monotonic()
        while not self.closed:
            epoch_end = cache.end_offset(entry.epoch)
            if epoch_end != OPEN_END_OFFSET and nxt >= epoch_end:
                following = cache.next_entry(entry.epoch)
                if following is None:
                    log.error("HA slave %s: no epoch after %s", self.client_addr, entry)
                    return
                entry = following
                continue
            data = self.service.commit_log.select_data(nxt, cfg.ha_transfer_batch_size)
            if data:
                if epoch_end != OPEN_END_OFFSET and nxt + len(data) > epoch_end:
                    data = data[: epoch_end - nxt]  # never span two epochs
                self._last_master_max_offset = self.owner.get_max_phy_offset()
                self._last_transfer_ms = cfg.clock_ms()
                self._send(nxt, entry, data)
                nxt += len(data)
                last_write = time.monotonic()
                continue
            if not self.is_async_learner and self.slave_ack_offset >= nxt:  # acked it all
                self.owner.update_caught_up_time(self.slave_id, cfg.clock_ms())
            if time.monotonic() - last_write >= heartbeat_s:
                self._send(nxt, entry, b"")
                last_write = time.monotonic()
            self._wait(0.1)

    def _send(self, offset: int, entry: EpochEntry, data: bytes) -> None:
        header = encode_master_transfer_header(
            offset, len(data), entry.epoch, entry.start_offset, self.owner.get_confirm_offset()
        )
        self.sock.sendall(header + data)
