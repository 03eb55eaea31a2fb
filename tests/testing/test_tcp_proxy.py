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


@pytest.fixture
def greeter() -> Iterator[tuple[tuple[str, int], list[bytes]]]:
    """A server on 127.0.0.1 port 0 that says ``hi`` to each connection and keeps what it is
    sent (so each direction can be seen on its own)."""
    server = socket.create_server(("127.0.0.1", 0))
    heard: list[bytes] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.sendall(b"hi")
            while data := conn.recv(65536):
                heard.append(data)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[:2], heard
    server.close()


def heard_within(heard: list[bytes], want: bytes, timeout_s: float) -> bool:
    deadline = threading.Event()
    timer = threading.Timer(timeout_s, deadline.set)
    timer.start()
    try:
        while not deadline.is_set():
            if b"".join(heard) == want:
                return True
            deadline.wait(0.01)
        return b"".join(heard) == want
    finally:
        timer.cancel()


@pytest.mark.parametrize("direction", ["up", "down"])
def test_one_direction_silenced_passes_the_other(
    greeter: tuple[tuple[str, int], list[bytes]], direction: str
) -> None:
    target, heard = greeter
    proxy = TcpProxy(target)
    try:
        proxy.silence(up=direction == "up", down=direction == "down")
        assert proxy.silent
        s = connect(proxy)
        s.sendall(b"ping")
        s.settimeout(0.5)
        if direction == "up":  # the target's bytes arrive, the client's do not
            assert s.recv(2) == b"hi"
            assert not heard_within(heard, b"ping", 0.5)
        else:  # the client's bytes arrive, the target's do not
            assert heard_within(heard, b"ping", 5)
            with pytest.raises(TimeoutError):
                s.recv(2)
        proxy.restore()  # closes what lived through the silence
        assert not proxy.silent
        s.settimeout(5)
        assert s.recv(2) == b""
        heard.clear()
        again = connect(proxy)
        assert again.recv(2) == b"hi"
        again.sendall(b"pong")
        assert heard_within(heard, b"pong", 5)
        again.close()
        s.close()
    finally:
        proxy.close()


def test_a_connection_drained_during_the_silence_is_closed_after_the_heal(
    echo: tuple[str, int],
) -> None:
    """A connection accepted as ``restore()`` closes the others is not among them: once the
    silence is over it must not swallow its client's requests for ever (the heal timeout of
    RELIABILITY.md's partition runs), but close at its first bytes so the client reconnects."""
    proxy = TcpProxy(echo)
    sockets: list[socket.socket] = []
    try:
        proxy.silence()
        late = connect(proxy)
        sockets.append(late)
        late.sendall(b"lost")
        late.settimeout(0.3)
        with pytest.raises(TimeoutError):
            late.recv(4)
        # the heal as that connection saw it: the silence lifted, the connection not closed
        proxy._silent_up.clear()
        proxy._silent_down.clear()
        late.settimeout(5)
        late.sendall(b"ping")
        assert late.recv(4) == b""  # closed, not a black hole
        fresh = connect(proxy)
        sockets.append(fresh)
        fresh.sendall(b"ping")
        assert fresh.recv(4) == b"ping"
    finally:
        for s in sockets:
            s.close()
        proxy.close()
