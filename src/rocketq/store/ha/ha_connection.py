"""HAConnection: the master's side of one slave link (RocketMQ 4.x ``HAConnection``).

Theory of operation
-------------------
Two threads per slave. The read thread decodes the slave's 8-byte reports: the first one
is where the slave wants data from (``slave_request_offset``), every one is what the slave
has (``slave_ack_offset``), which it hands to ``HAService.notify_transfer_some`` (that
completes SYNC_MASTER sends). A link silent for ``ha_housekeeping_interval_ms`` is closed.

The write thread starts at the slave's offset (a slave that has nothing starts at the
beginning of the master's last commitlog file, as RocketMQ does), then sends frames of at
most ``ha_transfer_batch_size`` bytes, each within one commitlog file and never past the
write position; with nothing to send it waits for a put (``wakeup``) and sends a
header-only heartbeat every ``ha_send_heartbeat_interval_ms``. A slave that asks for data
beyond the master's end holds more than the master (a master that lost its tail): the link
is refused with an error log, never silently diverged.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Protocol

from rocketq.store.commitlog import CommitLog
from rocketq.store.config import StoreConfig
from rocketq.store.ha.frames import HAProtocolError, ReportDecoder, encode_transfer_header


class ConnectionOwner(Protocol):
    """What a connection uses of the HAService that accepted it."""

    config: StoreConfig
    commit_log: CommitLog

    def notify_transfer_some(self, offset: int) -> None: ...

    def remove_connection(self, conn: HAConnection) -> None: ...


log = logging.getLogger(__name__)

READ_TIMEOUT_S = 3.0
RECV_BYTES = 1024 * 1024


class HAConnection:
    def __init__(self, service: ConnectionOwner, sock: socket.socket, addr: str) -> None:
        self.service = service
        self.sock = sock
        self.client_addr = addr
        self.slave_request_offset = -1
        self.slave_ack_offset = -1
        self._closed = threading.Event()
        self._wakeup = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name=f"HAReader-{addr}")
        self._writer = threading.Thread(target=self._write_loop, name=f"HAWriter-{addr}")
        self._reader.daemon = self._writer.daemon = True
        housekeeping_s = service.config.ha_housekeeping_interval_ms / 1000
        sock.settimeout(min(READ_TIMEOUT_S, max(0.1, housekeeping_s / 2)))

    def start(self) -> None:
        self._reader.start()
        self._writer.start()

    def wakeup(self) -> None:
        if not self._wakeup.is_set():
            self._wakeup.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def shutdown(self) -> None:
        self.close()
        for t in (self._reader, self._writer):
            if t.is_alive() and t is not threading.current_thread():
                t.join(5)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._wakeup.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.service.remove_connection(self)

    # ------------------------------------------------------------------ read side

    def _read_loop(self) -> None:
        decoder = ReportDecoder()
        self._read_until_closed(lambda data: self._on_report_bytes(decoder, data))

    def _on_report_bytes(self, decoder: ReportDecoder, data: bytes) -> None:
        offset = decoder.feed(data)
        if offset is not None:
            self._on_report(offset)

    def _read_until_closed(self, on_bytes: Callable[[bytes], None]) -> None:
        last_read = time.monotonic()
        housekeeping_s = self.service.config.ha_housekeeping_interval_ms / 1000
        try:
            while not self.closed:
                try:
                    data = self.sock.recv(RECV_BYTES)
                except TimeoutError:
                    if time.monotonic() - last_read > housekeeping_s:
                        log.warning(
                            "HA slave %s silent for %.0f s: closed",
                            self.client_addr,
                            housekeeping_s,
                        )
                        break
                    continue
                if not data:
                    log.info("HA slave %s closed the link", self.client_addr)
                    break
                last_read = time.monotonic()
                on_bytes(data)
        except HAProtocolError as exc:
            log.warning("HA slave %s sent a bad frame: %s; closed", self.client_addr, exc)
        except OSError as exc:
            if not self.closed:
                log.info("HA slave %s read failed: %s", self.client_addr, exc)
        self.close()

    def _on_report(self, offset: int) -> None:
        self.slave_ack_offset = offset
        if self.slave_request_offset < 0:
            self.slave_request_offset = offset
            log.info("HA slave %s requests offset %d", self.client_addr, offset)
            self.wakeup()
        self.service.notify_transfer_some(offset)

    # ------------------------------------------------------------------ write side

    def _write_loop(self) -> None:
        try:
            self._write_until_closed()
        except OSError as exc:
            if not self.closed:
                log.info("HA slave %s write failed: %s", self.client_addr, exc)
        self.close()

    def _first_offset(self) -> int | None:
        store_max = self.service.commit_log.get_max_offset()
        requested = self.slave_request_offset
        if requested == 0:
            return store_max - store_max % self.service.commit_log.mapped_file_size
        if requested > store_max:
            log.error(
                "HA slave %s has %d bytes, more than this master's %d: the master lost data;"
                " replication refused until repaired",
                self.client_addr,
                requested,
                store_max,
            )
            return None
        return requested

    def _write_until_closed(self) -> None:
        cfg = self.service.config
        heartbeat_s = cfg.ha_send_heartbeat_interval_ms / 1000
        while not self.closed and self.slave_request_offset < 0:
            self._wait(0.01)
        first = self._first_offset()
        if first is None:
            return
        nxt = first
        last_write = time.monotonic()
        while not self.closed:
            data = self.service.commit_log.select_data(nxt, cfg.ha_transfer_batch_size)
            if data:
                self.sock.sendall(encode_transfer_header(nxt, len(data)) + data)
                nxt += len(data)
                last_write = time.monotonic()
                continue
            if time.monotonic() - last_write >= heartbeat_s:
                self.sock.sendall(encode_transfer_header(nxt, 0))
                last_write = time.monotonic()
            self._wait(0.1)

    def _wait(self, timeout_s: float) -> None:
        self._wakeup.wait(timeout_s)
        self._wakeup.clear()
