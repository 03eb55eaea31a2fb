"""The partition injector: a silent cut holds connections and passes no byte, a restore closes
what lived through it and forwards again, and a frame rewriter sees whole frames."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from rocketq.testing.tcp_proxy import TcpProxy

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def echo() -> Iterator[tuple[str, int]]:
    """An echo server on 127.0.0.1 port 0 (one thread per connection)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[:2]
    server.close()


def connect(proxy: TcpProxy) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    s.settimeout(5)
    return s


def test_a_silenced_link_stays_open_and_passes_nothing(echo: tuple[str, int]) -> None:
    proxy = TcpProxy(echo)
    try:
        s = connect(proxy)
        s.sendall(b"ping")
        assert s.recv(4) == b"ping"
        proxy.silence()
        s.sendall(b"lost")
        s.settimeout(0.5)
        with pytest.raises(TimeoutError):  # no answer, and no reset either
            s.recv(4)
        fresh = connect(proxy)  # a new connection is accepted, then hears nothing
        fresh.sendall(b"lost")
        fresh.settimeout(0.5)
        with pytest.raises(TimeoutError):
            fresh.recv(4)
        proxy.restore()
        s.settimeout(5)
        assert s.recv(4) == b""  # what lived through the silence is closed at the heal
        again = connect(proxy)
        again.sendall(b"back")
        assert again.recv(4) == b"back"
        for c in (s, fresh, again):
            c.close()
    finally:
        proxy.close()


def test_the_rewriter_sees_each_whole_frame_of_the_answer(echo: tuple[str, int]) -> None:
    seen: list[bytes] = []

    def rewrite(frame: bytes) -> bytes:
        seen.append(frame)
        body = frame[4:].upper()
        return struct.pack(">i", len(body)) + body

    proxy = TcpProxy(echo, rewrite)
    try:
        s = connect(proxy)
        frames = [struct.pack(">i", len(b)) + b for b in (b"abc", b"defgh")]
        payload = b"".join(frames)
        for i in range(len(payload)):  # byte by byte: the proxy reassembles frames
            s.sendall(payload[i : i + 1])
        got = b""
        while len(got) < len(payload):
            got += s.recv(65536)
        assert got == struct.pack(">i", 3) + b"ABC" + struct.pack(">i", 5) + b"DEFGH"
        assert seen == frames
        s.close()
    finally:
        proxy.close()
