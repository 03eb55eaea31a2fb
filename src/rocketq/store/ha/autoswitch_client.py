"""AutoSwitchHAClient: a controller-mode slave's link to its master (RocketMQ 5's
``AutoSwitchHAClient``), READY -> HANDSHAKE -> TRANSFER.

Theory of operation
-------------------
- **READY**: cut the torn tail (a frame may have ended mid-record) and the epochs past it,
  then connect and send the handshake (broker id, isSyncFromLastFile, isAsyncLearner).
- **HANDSHAKE**: the master answers with its epoch list and max offset. A slave with epochs
  finds the consistent point (``epoch_file.find_consistent_point``) and cuts its commitlog,
  consume queues, index and epoch file back to it (``log_truncation.truncate_files``); with
  no consistent point it refuses loudly, logs both lists and retries only after a pause (an
  operator must act). A slave without epochs (new, or written in classic mode) keeps what it
  has and continues from its end, as RocketMQ does.
- **TRANSFER**: each frame must start where the log ends; a frame whose epoch differs from the
  last one appends ``<epoch, epochStartOffset>`` to the epoch file before its bytes; the
  header's confirm offset (capped by what the slave holds) bounds the slave's consume queues.
  After each batch the slave acks its max offset, and every ``ha_send_heartbeat_interval_ms``.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Protocol

from rocketq.store.ha.autoswitch_frames import (
    HAConnectionState,
    MasterFrameDecoder,
    MasterHandshake,
    MasterTransfer,
    SlaveHandshake,
    encode_slave_ack,
    encode_slave_handshake,
)
from rocketq.store.ha.epoch_file import EpochEntry, find_consistent_point
from rocketq.store.ha.epoch_file_cache import EpochFileCache
from rocketq.store.ha.frames import HAProtocolError
from rocketq.store.ha.ha_client import CONNECT_TIMEOUT_S, RECV_BYTES, RECV_TIMEOUT_S, HAClient
from rocketq.store.ha.replica_store import ReplicaStore

log = logging.getLogger(__name__)

NO_CONSISTENT_POINT_WAIT_MS = 2_000


class ClientOwner(Protocol):
    """What the client uses of its AutoSwitchHAService."""

    epoch_cache: EpochFileCache

    def truncate_invalid_msg(self) -> int: ...

    def truncate_files(self, offset: int, reason: str) -> None: ...

    def set_confirm_offset(self, offset: int) -> None: ...


class AutoSwitchHAClient(HAClient):
    def __init__(self, store: ReplicaStore, owner: ClientOwner, broker_id: int) -> None:
        super().__init__(store)
        self.owner = owner
        self.broker_id = broker_id
        self.master_address = ""
        self.state = HAConnectionState.READY
        self.current_received_epoch = -1
        self.transferring = threading.Event()
        self.no_consistent_point = threading.Event()
        #: links made to a master so far: a link is the same one while this number is
        self.links = 0

    def _connect_master(self) -> bool:
        self.state = HAConnectionState.READY
        self.transferring.clear()
        cut = self.owner.truncate_invalid_msg()
        if cut >= 0:
            self.owner.epoch_cache.truncate_suffix_by_offset(cut)
        address = self.master_address
        if not address:
            return False
        host, _, port = address.rpartition(":")
        sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(RECV_TIMEOUT_S)
        self._sock = sock
        self._linked_address = address
        self.current_received_epoch = -1
        self.last_read_s = time.monotonic()
        cfg = self.config
        hello = SlaveHandshake(self.broker_id, cfg.sync_from_last_file, cfg.async_learner)
        sock.sendall(encode_slave_handshake(hello))
        self.last_write_s = time.monotonic()
        self.state = HAConnectionState.HANDSHAKE
        self.links += 1
        self.connected.set()
        log.info("HA slave %d connected to master %s", self.broker_id, address)
        return True

    def _serve_link(self) -> None:
        sock = self._sock
        assert sock is not None
        decoder = MasterFrameDecoder(max(self.config.ha_transfer_batch_size, 1 << 20))
        heartbeat_s = self.config.ha_send_heartbeat_interval_ms / 1000
        housekeeping_s = self.config.ha_housekeeping_interval_ms / 1000
        while (
            not self._stopped.is_set()
            and self._sock is sock
            and self._linked_address == self.master_address
        ):
            transferring = self.state is HAConnectionState.TRANSFER
            if transferring and time.monotonic() - self.last_write_s >= heartbeat_s:
                self._report(self.current_reported_offset)
            try:
                data = sock.recv(RECV_BYTES)
            except TimeoutError:
                if time.monotonic() - self.last_read_s > housekeeping_s:
                    log.warning("HA master %s silent: link closed", self.master_address)
                    return
                continue
            if not data:
                log.info("HA master %s closed the link", self.master_address)
                return
            self.last_read_s = time.monotonic()
            for frame in decoder.feed(data):
                if not self._on_frame(frame):
                    return

    def _on_frame(self, frame: MasterHandshake | MasterTransfer) -> bool:
        if isinstance(frame, MasterHandshake):
            if self.state is not HAConnectionState.HANDSHAKE:
                raise HAProtocolError(f"a handshake in state {self.state.name}")
            return self._do_truncate(frame)
        if self.state is not HAConnectionState.TRANSFER:
            raise HAProtocolError(f"a transfer frame in state {self.state.name}")
        return self._on_transfer(frame)

    def _do_truncate(self, master: MasterHandshake) -> bool:
        cache = self.owner.epoch_cache
        local = cache.all_entries()
        local_max = self.store.get_max_phy_offset()
        if local:
            point = find_consistent_point(local, local_max, master.entries, master.max_offset)
            if point < 0:
                log.error(
                    "HA slave %d: no consistent point with master %s (master epochs %s, max %d;"
                    " local epochs %s, max %d): replication refused, an operator must act",
                    self.broker_id,
                    self.master_address,
                    list(master.entries),
                    master.max_offset,
                    local,
                    local_max,
                )
                self.no_consistent_point.set()
                self._stopped.wait(NO_CONSISTENT_POINT_WAIT_MS / 1000)
                return False
            self.owner.truncate_files(point, f"diverged from master at epoch {master.epoch}")
            cache.truncate_suffix_by_offset(point)
            log.info("HA slave %d: consistent point %d", self.broker_id, point)
        self.no_consistent_point.clear()
        self.state = HAConnectionState.TRANSFER
        self.current_reported_offset = self.store.get_max_phy_offset()
        self._report(self.current_reported_offset)
        self.transferring.set()
        return True

    def _on_transfer(self, frame: MasterTransfer) -> bool:
        if not self._append(frame.offset, b""):  # the offset checks only
            return False
        if frame.epoch != self.current_received_epoch:
            entry = EpochEntry(frame.epoch, frame.epoch_start_offset)
            cache = self.owner.epoch_cache
            if not cache.append_entry(entry) and cache.last_entry() != entry:
                log.error(
                    "HA slave %d: master epoch %s does not follow local epochs %s; link closed",
                    self.broker_id,
                    entry,
                    cache.all_entries(),
                )
                return False
            self.current_received_epoch = frame.epoch
        if frame.data and not self._append(frame.offset, frame.data):
            return False
        self.owner.set_confirm_offset(min(frame.confirm_offset, self.store.get_max_phy_offset()))
        self._report_max_offset_plus()
        return True

    def _report(self, offset: int) -> None:
        sock = self._sock
        if sock is None:
            return
        sock.sendall(encode_slave_ack(offset))
        self.last_write_s = time.monotonic()
