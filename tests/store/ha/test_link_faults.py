"""The replication link under faults: cut and restored mid-stream, and fuzzed frames."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.store.config import BrokerRole, FlushDiskType
from rocketq.store.ha.frames import (
    HAProtocolError,
    ReportDecoder,
    TransferDecoder,
    encode_report,
    encode_transfer_header,
)
from rocketq.store.message_store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.testing.store import commitlog_bytes, new_msg, open_ha_store, slave_linked
from rocketq.testing.tcp_proxy import TcpProxy
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(90)


def _open(root: Path, role: BrokerRole, **kw: object) -> MessageStore:
    return open_ha_store(root, role, flush_disk_type=FlushDiskType.ASYNC_FLUSH, **kw)


@pytest.fixture
def master(tmp_path: Path) -> Iterator[MessageStore]:
    store = _open(tmp_path / "master", BrokerRole.ASYNC_MASTER)
    yield store
    store.shutdown()


def _put(store: MessageStore, count: int, tag: str) -> None:
    for i in range(count):
        result = store.put_message(new_msg(queue_id=i % 4, body=f"{tag}-{i}".encode() * 20))
        assert result.status is PutMessageStatus.PUT_OK


def test_slave_cut_off_mid_stream_catches_up_from_its_own_offset(
    master: MessageStore, tmp_path: Path
) -> None:
    proxy = TcpProxy(("127.0.0.1", master.ha_service.listen_port))
    slave = _open(tmp_path / "slave", BrokerRole.SLAVE, ha_master_address=proxy.addr)
    try:
        assert until_sync(lambda: slave_linked(master), 10)
        _put(master, 300, "before")
        assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
        proxy.cut()
        assert until_sync(lambda: master.ha_service.connection_count == 0, 10)
        held = slave.get_max_phy_offset()
        _put(master, 700, "during")  # the slave misses all of these (several file rolls)
        assert slave.get_max_phy_offset() == held
        restored = time.monotonic()
        proxy.restore()
        assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 20)
        catch_up_s = time.monotonic() - restored
        conns = list(master.ha_service.connections)
        assert [c.slave_request_offset for c in conns] == [held]  # resumed, not restarted
        assert proxy.connections == 2
        end = master.get_max_phy_offset()
        assert commitlog_bytes(slave, end) == commitlog_bytes(master, end)
        assert slave.wait_for_dispatch(10)
        assert sum(slave.get_max_offset_in_queue("TopicTest", q) for q in range(4)) == 1000
        assert catch_up_s < 20
        print(f"HA link cut: {end - held} bytes missed, caught up in {catch_up_s * 1000:.0f} ms")
    finally:
        slave.shutdown()
        proxy.close()


def test_master_survives_fuzzed_slave_reports_and_keeps_serving_a_real_slave(
    master: MessageStore, tmp_path: Path
) -> None:
    rng = random.Random(7)
    port = master.ha_service.listen_port
    for _ in range(100):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            junk = rng.randbytes(rng.randrange(1, 64))
            if rng.random() < 0.3:
                junk = encode_report(rng.choice([-1, 2**62, rng.randrange(1 << 40)])) + junk
            s.sendall(junk)
    _put(master, 50, "after-fuzz")
    slave = _open(tmp_path / "slave", BrokerRole.SLAVE, ha_master_address=f"127.0.0.1:{port}")
    try:
        assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
        assert until_sync(lambda: master.ha_service.connection_count == 1, 10)
    finally:
        slave.shutdown()


class FakeMaster:
    """An HA port that answers a slave with the frames a test gives it."""

    def __init__(self, frames: list[bytes]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.frames = frames
        self.served = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.frames:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(8)
                try:
                    conn.sendall(self.frames.pop(0))
                    time.sleep(0.05)
                except OSError:
                    pass
        self.served.set()

    def close(self) -> None:
        self.listener.close()


def test_slave_survives_fuzzed_master_frames_and_stores_none_of_them(
    master: MessageStore, tmp_path: Path
) -> None:
    rng = random.Random(3)
    frames = []
    for _ in range(40):
        kind = rng.randrange(4)
        if kind == 0:  # garbage
            frames.append(rng.randbytes(rng.randrange(1, 200)))
        elif kind == 1:  # a header with an absurd size
            frames.append(encode_transfer_header(0, rng.choice([-5, 1 << 30])) + b"x" * 20)
        elif kind == 2:  # data that does not start where the slave's log ends
            frames.append(encode_transfer_header(rng.randrange(1, 1 << 40), 4) + b"abcd")
        else:  # a truncated header
            frames.append(encode_transfer_header(0, 10)[: rng.randrange(1, 12)])
    fake = FakeMaster(frames)
    slave = _open(
        tmp_path / "slave",
        BrokerRole.SLAVE,
        ha_master_address=f"127.0.0.1:{fake.port}",
        ha_send_heartbeat_interval_ms=50,  # reconnects after 50 ms
    )
    try:
        assert fake.served.wait(60)
        assert slave.get_max_phy_offset() == 0  # nothing the fake sent was kept
        _put(master, 30, "real")
        slave.ha_service.ha_client.update_ha_master_address(
            f"127.0.0.1:{master.ha_service.listen_port}"
        )
        assert until_sync(lambda: slave.get_max_phy_offset() == master.get_max_phy_offset(), 10)
    finally:
        slave.shutdown()
        fake.close()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=8))
def test_transfer_decoder_yields_frames_or_raises_ha_protocol_error(chunks: list[bytes]) -> None:
    decoder = TransferDecoder(1 << 20)
    try:
        for chunk in chunks:
            for frame in decoder.feed(chunk):
                assert frame.phy_offset >= 0
    except HAProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=8))
def test_report_decoder_keeps_the_last_whole_report(chunks: list[bytes]) -> None:
    decoder = ReportDecoder()
    stream = b"".join(chunks)
    last = None
    try:
        for chunk in chunks:
            got = decoder.feed(chunk)
            last = got if got is not None else last
    except HAProtocolError:
        return
    whole = len(stream) // 8
    if whole:
        assert last == int.from_bytes(stream[(whole - 1) * 8 : whole * 8], "big", signed=True)
    else:
        assert last is None


def test_transfer_frames_split_anywhere_decode_the_same() -> None:
    stream = encode_transfer_header(100, 5) + b"hello" + encode_transfer_header(105, 0)
    for cut in range(len(stream) + 1):
        decoder = TransferDecoder(64)
        frames = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
        assert [(f.phy_offset, f.data) for f in frames] == [(100, b"hello"), (105, b"")]


def test_a_master_holding_less_than_its_slave_refuses_to_replicate(tmp_path: Path) -> None:
    first = _open(tmp_path / "m1", BrokerRole.ASYNC_MASTER)
    port = first.ha_service.listen_port
    slave = _open(tmp_path / "slave", BrokerRole.SLAVE, ha_master_address=f"127.0.0.1:{port}")
    try:
        _put(first, 50, "old")
        assert until_sync(lambda: slave.get_max_phy_offset() == first.get_max_phy_offset(), 10)
        first.shutdown()
        held = slave.get_max_phy_offset()
        before = commitlog_bytes(slave, held)
        lesser = _open(tmp_path / "m2", BrokerRole.ASYNC_MASTER, ha_listen_port=port)
        try:
            _put(lesser, 5, "new")  # a master that lost its tail: it has less than the slave
            refused = lesser.ha_service
            assert until_sync(lambda: refused.accept_service.accepted >= 2, 10)
            assert slave.get_max_phy_offset() == held
            assert commitlog_bytes(slave, held) == before  # no silent divergence
        finally:
            lesser.shutdown()
    finally:
        slave.shutdown()
        first.shutdown()
