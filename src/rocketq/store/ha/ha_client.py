"""HAClient: the slave's replication link to its master (RocketMQ 4.x ``HAClient``).

Theory of operation
-------------------
The client connects to ``master_address`` (``ha_master_address`` or what the name server
returned at registration), reports its commitlog max offset at once, then every
``ha_send_heartbeat_interval_ms`` and after every append. Each frame from the master must
start exactly where the slave's log ends (a slave that has nothing accepts the start of any
commitlog file, where a master starts an empty slave): the
bytes are appended as they are (``MessageStore.append_to_commit_log``), so the slave's
commitlog is byte-identical to the master's, and the slave's own reput service builds its
consume queues and index from them. A mismatch, a bad frame or a link silent for
``ha_housekeeping_interval_ms`` closes the link; the client reconnects after a pause and
resumes from its own offset.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time

from rocketq.store.ha.frames import HAProtocolError, TransferDecoder, encode_report
from rocketq.store.ha.replica_store import ReplicaStore

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3.0
RECV_TIMEOUT_S = 0.2
RECV_BYTES = 1024 * 1024
MAX_RECONNECT_WAIT_MS = 5_000


class HAClient:
    def __init__(self, store: ReplicaStore) -> None:
        self.store = store
        self.config = store.config
        self.master_address = self.config.ha_master_address
        self.current_reported_offset = 0
        self.last_read_s = 0.0
        self.last_write_s = 0.0
        self.connected = threading.Event()
        self._sock: socket.socket | None = None
        self._linked_address = ""
        self._stopped = threading.Event()
        self._wakeup = threading.Event()
        self._thread: threading.Thread | None = None

    def update_ha_master_address(self, address: str) -> None:
        if address and address != self.master_address:
            log.info("HA master address %r -> %r", self.master_address, address)
            self.master_address = address
            self._close_master()
            self._wakeup.set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HAClient", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        self._stopped.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(10)
        self._close_master()

    # ------------------------------------------------------------------ loop

    def _run(self) -> None:
        wait_ms = min(MAX_RECONNECT_WAIT_MS, self.config.ha_send_heartbeat_interval_ms)
        while not self._stopped.is_set():
            try:
                if self._connect_master():
                    self._serve_link()
            except (OSError, HAProtocolError) as exc:
                log.warning("HA link to master %s broken: %s", self.master_address, exc)
            except Exception:  # the HA client reconnects after any failure of a link; logged
                log.exception("HA client failed")
            self._close_master()
            if not self._stopped.is_set():
                self._wakeup.wait(wait_ms / 1000)
                self._wakeup.clear()

    def _connect_master(self) -> bool:
        address = self.master_address
        if not address:
            return False
        host, _, port = address.rpartition(":")
        sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(RECV_TIMEOUT_S)
        self._sock = sock
        self._linked_address = address
        self.current_reported_offset = self.store.get_max_phy_offset()
        self.last_read_s = time.monotonic()
        self._report(self.current_reported_offset)
        self.connected.set()
        log.info(
            "HA slave connected to master %s at offset %d",
            self.master_address,
            self.current_reported_offset,
        )
        return True

    def _serve_link(self) -> None:
        sock = self._sock
        assert sock is not None
        decoder = TransferDecoder(max(self.config.ha_transfer_batch_size, 1 << 20))
        heartbeat_s = self.config.ha_send_heartbeat_interval_ms / 1000
        housekeeping_s = self.config.ha_housekeeping_interval_ms / 1000
        while (
            not self._stopped.is_set()
            and self._sock is sock
            and self._linked_address == self.master_address  # not moved while connecting
        ):
            if time.monotonic() - self.last_write_s >= heartbeat_s:
                self._report(self.current_reported_offset)
            try:
                data = sock.recv(RECV_BYTES)
            except TimeoutError:
                if time.monotonic() - self.last_read_s > housekeeping_s:
                    log.warning(
                        "HA master %s silent for %.0f s: link closed",
                        self.master_address,
                        housekeeping_s,
                    )
                    return
                continue
            if not data:
                log.info("HA master %s closed the link", self.master_address)
                return
            self.last_read_s = time.monotonic()
            for frame in decoder.feed(data):
                if not self._append(frame.phy_offset, frame.data):
                    return
            self._report_max_offset_plus()

    def _append(self, master_offset: int, data: bytes) -> bool:
        slave_offset = self.store.get_max_phy_offset()
        if slave_offset == 0 and master_offset % self.config.mapped_file_size_commit_log:
            log.error(
                "master pushed offset %d to an empty slave; a master starts an empty slave at"
                " a file boundary; link closed",
                master_offset,
            )
            return False
        if slave_offset != 0 and slave_offset != master_offset:
            log.error(
                "master pushed offset %d not equal the max phy offset %d in slave; link closed",
                master_offset,
                slave_offset,
            )
            return False
        if not data:
            return True
        return self.store.append_to_commit_log(master_offset, data)

    def _report_max_offset_plus(self) -> None:
        current = self.store.get_max_phy_offset()
        if current > self.current_reported_offset:
            self.current_reported_offset = current
            self._report(current)

    def _report(self, offset: int) -> None:
        sock = self._sock
        if sock is None:
            return
        sock.sendall(encode_report(offset))
        self.last_write_s = time.monotonic()

    def _close_master(self) -> None:
        sock, self._sock = self._sock, None
        self.connected.clear()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
