"""HAService: the master's replication endpoint and SYNC_MASTER's wait (RocketMQ 4.x).

Theory of operation
-------------------
``AcceptSocketService`` listens on ``ha_listen_port`` and starts one
:class:`~rocketq.store.ha.ha_connection.HAConnection` per slave. Each slave report moves
``push2slave_max_offset`` (the highest offset any slave holds) through
:meth:`HAService.notify_transfer_some`, which completes every waiting SYNC_MASTER put
whose record ends at or below it. ``GroupTransferService`` only times the waiters out:
a put not replicated within ``sync_flush_timeout_ms`` completes with FLUSH_SLAVE_TIMEOUT.
A put finds no slave (or one more than ``ha_slave_fallbehind_max`` behind) through
:meth:`is_slave_ok` and is answered SLAVE_NOT_AVAILABLE at once, as 4.9.x does.

On a slave the same service runs the :class:`~rocketq.store.ha.ha_client.HAClient`.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
import time
from concurrent.futures import Future

from rocketq.store.commitlog import CommitLog
from rocketq.store.config import BrokerRole, StoreConfig
from rocketq.store.ha.ha_client import HAClient
from rocketq.store.ha.ha_connection import HAConnection
from rocketq.store.ha.replica_store import ReplicaStore
from rocketq.store.results import PutMessageStatus
from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)


class HAService:
    def __init__(self, store: ReplicaStore) -> None:
        self.store = store
        self.config: StoreConfig = store.config
        self.commit_log: CommitLog = store.commit_log
        self.push2slave_max_offset = 0
        self.connections: list[HAConnection] = []
        self._lock = threading.Lock()
        self.accept_service = AcceptSocketService(self)
        self.group_transfer_service = GroupTransferService(self)
        self.ha_client = HAClient(store) if self.config.broker_role is BrokerRole.SLAVE else None

    @property
    def listen_port(self) -> int:
        return self.accept_service.port

    @property
    def connection_count(self) -> int:
        return len(self.connections)

    def start(self) -> None:
        self.accept_service.begin_accept()
        self.accept_service.start()
        self.group_transfer_service.start()
        if self.ha_client is not None:
            self.ha_client.start()

    def shutdown(self) -> None:
        if self.ha_client is not None:
            self.ha_client.shutdown()
        self.accept_service.shutdown()
        for conn in list(self.connections):
            conn.shutdown()
        self.group_transfer_service.shutdown()

    # ------------------------------------------------------------------ connections

    def add_connection(self, conn: HAConnection) -> None:
        with self._lock:
            self.connections.append(conn)

    def remove_connection(self, conn: HAConnection) -> None:
        with self._lock:
            if conn in self.connections:
                self.connections.remove(conn)

    def create_connection(self, sock: socket.socket, addr: str) -> HAConnection:
        return HAConnection(self, sock, addr)

    def in_sync_replicas_enough(self) -> bool:
        """Controller mode refuses a put when the in-sync set is below minInSyncReplicas."""
        return True

    def wakeup_all(self) -> None:
        """A put happened: the write threads send it now instead of at their next poll."""
        for conn in self.connections:
            conn.wakeup()

    # ------------------------------------------------------------------ SYNC_MASTER

    def is_slave_ok(self, master_put_where: int) -> bool:
        return (
            self.connection_count > 0
            and master_put_where - self.push2slave_max_offset < self.config.ha_slave_fallbehind_max
        )

    def notify_transfer_some(self, offset: int) -> None:
        with self._lock:
            if offset <= self.push2slave_max_offset:
                return
            self.push2slave_max_offset = offset
        self.group_transfer_service.complete_up_to(offset)

    def put_request(self, next_offset: int) -> Future[PutMessageStatus]:
        future = self.group_transfer_service.put_request(next_offset)
        self.wakeup_all()
        return future


class AcceptSocketService(ServiceThread):
    """Accepts the slaves' links. It blocks in ``select`` on the listening socket and a wake
    socket that :meth:`shutdown` writes to (a 200 ms accept timeout to notice the stop woke an
    idle broker five times a second)."""

    def __init__(self, service: HAService) -> None:
        super().__init__("AcceptSocketService")
        self.service = service
        self.port = 0
        self.accepted = 0
        self._sock: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None  # (read, write) ends

    def begin_accept(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.service.config.ha_listen_host, self.service.config.ha_listen_port))
            sock.listen(64)
        except OSError:
            sock.close()
            raise
        sock.settimeout(0.2)
        self._sock = sock
        self._wake = socket.socketpair()
        self.port = sock.getsockname()[1]
        log.info("HAService listening on port %d", self.port)

    def run(self) -> None:
        sock, wake = self._sock, self._wake
        assert sock is not None
        assert wake is not None
        while not self.is_stopped():
            try:
                ready, _, _ = select.select([sock, wake[0]], [], [])
                if sock not in ready:
                    continue  # woken: stopping
                conn, addr = sock.accept()
            except TimeoutError:  # the link went away between the select and the accept
                continue
            except OSError:
                if not self.is_stopped():
                    log.exception("HA accept failed")
                    self.wait_for_running(200)
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.accepted += 1
            ha_conn = self.service.create_connection(conn, f"{addr[0]}:{addr[1]}")
            self.service.add_connection(ha_conn)
            ha_conn.start()
            log.info("HA slave connected from %s:%d", addr[0], addr[1])
        sock.close()

    def shutdown(self) -> None:
        self._stopped.set()
        wake = self._wake
        if wake is not None:
            with contextlib.suppress(OSError):
                wake[1].send(b"x")
        super().shutdown()
        if wake is not None and not self.is_alive:
            self._wake = None
            wake[0].close()
            wake[1].close()


class GroupTransferService(ServiceThread):
    """Waiting SYNC_MASTER puts; completed by slave reports, timed out here."""

    def __init__(self, service: HAService) -> None:
        super().__init__("GroupTransferService")
        self.service = service
        self._lock = threading.Lock()
        self._requests: list[tuple[int, float, Future[PutMessageStatus]]] = []

    def put_request(self, next_offset: int) -> Future[PutMessageStatus]:
        future: Future[PutMessageStatus] = Future()
        if self.service.push2slave_max_offset >= next_offset:
            future.set_result(PutMessageStatus.PUT_OK)
            return future
        deadline = time.monotonic() + self.service.config.sync_flush_timeout_ms / 1000
        with self._lock:
            first = not self._requests
            self._requests.append((next_offset, deadline, future))
        if first:
            self.wakeup()  # the timer thread sleeps up to 1 s with nothing to time
        if self.service.push2slave_max_offset >= next_offset:  # a report raced the append
            self.complete_up_to(self.service.push2slave_max_offset)
        return future

    def complete_up_to(self, offset: int) -> None:
        with self._lock:
            done = [r for r in self._requests if r[0] <= offset]
            if not done:
                return
            self._requests = [r for r in self._requests if r[0] > offset]
        for _, _, future in done:
            future.set_result(PutMessageStatus.PUT_OK)

    def _expire(self, now: float) -> None:
        with self._lock:
            expired = [r for r in self._requests if r[1] <= now]
            if not expired:
                return
            self._requests = [r for r in self._requests if r[1] > now]
        log.warning("%d puts not replicated in time: FLUSH_SLAVE_TIMEOUT", len(expired))
        for _, _, future in expired:
            future.set_result(PutMessageStatus.FLUSH_SLAVE_TIMEOUT)

    def run(self) -> None:
        while not self.is_stopped():
            with self._lock:
                first = min((r[1] for r in self._requests), default=None)
            wait_s = 1.0 if first is None else max(0.0, first - time.monotonic()) + 0.001
            self.wait_for_running(min(1.0, wait_s) * 1000)
            self._expire(time.monotonic())
        with self._lock:
            left, self._requests = self._requests, []
        for _, _, future in left:
            future.set_result(PutMessageStatus.FLUSH_SLAVE_TIMEOUT)
