"""The HA link byte for byte, each side against a raw socket playing the other: the slave's
8-byte reports (at once, after each transfer, every ``haSendHeartbeatInterval``), the
master's (offset, size, data) frames and size-0 heartbeats, ``haHousekeepingInterval`` on
the slave's side, RocketMQ's defaults, and the slave's own consume queues and index."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.store.config import BrokerRole, FlushDiskType, StoreConfig
from rocketq.store.ha.frames import (
    REPORT_STRUCT,
    TRANSFER_HEADER_SIZE,
    TRANSFER_HEADER_STRUCT,
    encode_transfer_header,
)
from rocketq.store.message_store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.testing.store import commitlog_bytes, new_msg, slave_linked, small_store_config
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(60)

HEARTBEAT_MS = 500


def _open(root: Path, role: BrokerRole, **kw: object) -> MessageStore:
    config = small_store_config(
        root,
        broker_role=role,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
        ha_listen_port=0,
        ha_listen_host="127.0.0.1",
        **kw,
    )
    store = MessageStore(config)
    store.load()
    store.start()
    store.start_ha()
    return store


def assert_paced(arrivals: list[float]) -> None:
    """Heartbeats come once per interval, not in a busy loop: the mean gap is at least half
    the interval (a mean, so that a late read on a loaded machine, which delivers two at
    once, does not fail it; a report on every 0.2 s poll or every loop would)."""
    assert len(arrivals) >= 4
    mean_gap = (arrivals[-1] - arrivals[0]) / (len(arrivals) - 1)
    assert mean_gap >= HEARTBEAT_MS / 1000 * 0.5, arrivals


def test_rocketmq_defaults_heartbeat_5_s_housekeeping_20_s() -> None:
    config = StoreConfig()
    assert config.ha_send_heartbeat_interval_ms == 5_000
    assert config.ha_housekeeping_interval_ms == 20_000
    assert config.ha_transfer_batch_size == 32 * 1024
    assert config.ha_listen_port == 10912  # listenPort 10911 + 1


class RawMaster:
    """An HA port that records every 8-byte report with its arrival time."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.addr = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.reports: list[tuple[int, float, int]] = []  # (connection no, time, offset)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.conns.append(conn)
                number = len(self.conns)
            reader = threading.Thread(target=self._read, args=(conn, number), daemon=True)
            self._threads.append(reader)
            reader.start()

    def _read(self, conn: socket.socket, number: int) -> None:
        buf = b""
        conn.settimeout(0.2)
        while not self._stop.is_set():
            try:
                data = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= REPORT_STRUCT.size:
                (offset,) = REPORT_STRUCT.unpack_from(buf)
                buf = buf[REPORT_STRUCT.size :]
                with self._lock:
                    self.reports.append((number, time.monotonic(), offset))

    def of(self, number: int) -> list[tuple[float, int]]:
        with self._lock:
            return [(t, o) for n, t, o in self.reports if n == number]

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            conns = list(self.conns)
        for conn in conns:
            conn.close()
        self.listener.close()
        for thread in self._threads:
            thread.join(5)


@pytest.fixture
def raw_master() -> Iterator[RawMaster]:
    fake = RawMaster()
    yield fake
    fake.close()


def test_slave_reports_its_offset_at_once_then_every_heartbeat_interval(
    raw_master: RawMaster, tmp_path: Path
) -> None:
    slave = _open(
        tmp_path / "slave",
        BrokerRole.SLAVE,
        ha_master_address=raw_master.addr,
        ha_send_heartbeat_interval_ms=HEARTBEAT_MS,
    )
    try:
        assert until_sync(lambda: len(raw_master.of(1)) >= 6, 30)
        reports = raw_master.of(1)
        assert {offset for _, offset in reports} == {0}  # an empty slave asks from 0
        assert_paced([t for t, _ in reports[1:]])  # the first one is sent at connect
    finally:
        slave.shutdown()


def test_slave_appends_a_frame_as_is_and_reports_the_new_offset_right_after(
    raw_master: RawMaster, tmp_path: Path
) -> None:
    source = _open(tmp_path / "source", BrokerRole.ASYNC_MASTER)
    slave = _open(
        tmp_path / "slave",
        BrokerRole.SLAVE,
        ha_master_address=raw_master.addr,
        ha_send_heartbeat_interval_ms=60_000,  # only a transfer can trigger the next report
    )
    try:
        for i in range(5):
            message = new_msg(queue_id=i % 2, body=b"wire-%d" % i, properties={"KEYS": f"k{i}"})
            assert source.put_message(message).status is PutMessageStatus.PUT_OK
        data = commitlog_bytes(source)
        assert until_sync(lambda: len(raw_master.of(1)) == 1, 10)
        conn = raw_master.conns[0]
        half = len(data) // 2  # the second frame starts inside a record
        conn.sendall(encode_transfer_header(0, half) + data[:half])
        assert until_sync(lambda: raw_master.of(1)[-1][1] == half, 10)
        conn.sendall(encode_transfer_header(half, len(data) - half) + data[half:])
        assert until_sync(lambda: raw_master.of(1)[-1][1] == len(data), 10)
        assert [o for _, o in raw_master.of(1)] == [0, half, len(data)]
        assert commitlog_bytes(slave) == data
        # the slave builds its own consume queues and index from the copied bytes
        assert slave.wait_for_dispatch(10)
        assert [slave.get_max_offset_in_queue("TopicTest", q) for q in (0, 1)] == [3, 2]
        found = slave.query_messages("TopicTest", "k3", 8, 0, 2**62)
        assert [m.body for m in found] == [b"wire-3"]
    finally:
        slave.shutdown()
        source.shutdown()


def test_slave_closes_a_silent_master_link_after_housekeeping_and_reconnects(
    raw_master: RawMaster, tmp_path: Path
) -> None:
    slave = _open(
        tmp_path / "slave",
        BrokerRole.SLAVE,
        ha_master_address=raw_master.addr,
        ha_send_heartbeat_interval_ms=100,
        ha_housekeeping_interval_ms=600,
    )
    try:
        assert until_sync(lambda: len(raw_master.of(2)) >= 1, 20)  # a second link reported
        first, second = raw_master.of(1)[0][0], raw_master.of(2)[0][0]
        assert second - first >= 0.4  # not at once: after 600 ms of silence (+ the pause)
    finally:
        slave.shutdown()


def read_frame(sock: socket.socket) -> tuple[float, int, bytes]:
    header = _read_exactly(sock, TRANSFER_HEADER_SIZE)
    arrived = time.monotonic()
    offset, size = TRANSFER_HEADER_STRUCT.unpack(header)
    return arrived, offset, _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "the master closed the link"
        out += chunk
    return out


def test_master_sends_offset_size_data_frames_then_size_0_heartbeats(tmp_path: Path) -> None:
    master = _open(
        tmp_path / "master", BrokerRole.ASYNC_MASTER, ha_send_heartbeat_interval_ms=HEARTBEAT_MS
    )
    sock = socket.create_connection(("127.0.0.1", master.ha_service.listen_port), timeout=10)
    try:
        sock.sendall(REPORT_STRUCT.pack(0))
        assert until_sync(lambda: slave_linked(master), 10)
        for i in range(40):
            master.put_message(new_msg(body=b"frame-%d" % i * 30))
        end = master.get_max_phy_offset()
        got, frames = b"", []
        while len(got) < end:
            frame = read_frame(sock)
            frames.append(frame)
            if frame[2]:
                assert frame[1] == len(got)  # each frame starts where the last one ended
                assert len(frame[2]) <= master.config.ha_transfer_batch_size
                got += frame[2]
        assert got == commitlog_bytes(master)
        beats = []
        while len(beats) < 5:
            arrived, offset, data = read_frame(sock)
            assert (offset, data) == (end, b"")  # a heartbeat: header only, at the end
            beats.append(arrived)
        assert_paced(beats)
    finally:
        sock.close()
        master.shutdown()
