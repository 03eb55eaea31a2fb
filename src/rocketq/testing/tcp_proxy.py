"""A loopback TCP proxy whose link a test can cut and restore (a network-partition injector).

Threads and blocking sockets, so it serves synchronous store tests as well as asyncio ones.

- ``cut()`` closes every open connection and refuses new ones until ``restore()``; bytes in
  flight at the cut are lost, as on a real broken link (the peer sees a reset at once).
- ``silence()`` is a silent partition: connections stay open and new ones are accepted, but no
  byte crosses in either direction, so each end learns of it only by its own timeouts (a
  heartbeat timeout, not a closed channel). ``restore()`` then closes the connections that
  lived through the silence (their streams lost bytes mid-frame, as TCP would have given up on
  them) and forwards again.
- ``silence(up=..., down=...)`` silences one direction only (an asymmetric partition): ``up``
  is what the connecting side sends, ``down`` what the target sends back. With one direction
  silenced new connections reach the target; the other direction still flows.
- ``rewrite``, if given, sees each length-prefixed frame (RocketMQ's remoting framing: a
  4-byte big-endian length, then that many bytes) the upstream sends back, and returns the
  frame to deliver instead.
- ``target`` may be reassigned (a server that had to move): each new connection goes to the
  target of the moment; open ones stay where they were.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

LENGTH_STRUCT = struct.Struct(">i")  # the remoting frame's length field


class TcpProxy:
    def __init__(
        self, target: tuple[str, int], rewrite: Callable[[bytes], bytes] | None = None
    ) -> None:
        self.target = target
        self.rewrite = rewrite
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = int(self._listener.getsockname()[1])
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._cut = threading.Event()
        self._silent_up = threading.Event()  # client -> target dropped
        self._silent_down = threading.Event()  # target -> client dropped
        self._stopped = threading.Event()
        self.connections = 0
        self._thread = threading.Thread(target=self._accept_loop, name="TcpProxy", daemon=True)
        self._thread.start()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def silent(self) -> bool:
        """Either direction silenced."""
        return self._silent_up.is_set() or self._silent_down.is_set()

    def cut(self) -> None:
        self._cut.set()
        self._close_open()

    def silence(self, *, up: bool = True, down: bool = True) -> None:
        """No byte crosses in the directions named (both by default)."""
        if up:
            self._silent_up.set()
        if down:
            self._silent_down.set()

    def restore(self) -> None:
        if self.silent:
            self._close_open()
            self._silent_up.clear()
            self._silent_down.clear()
        self._cut.clear()

    def close(self) -> None:
        self._stopped.set()
        self.cut()
        self._thread.join(5)
        self._listener.close()

    def _close_open(self) -> None:
        with self._lock:
            doomed, self._open = self._open, set()
        for s in doomed:
            _close(s)

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._cut.is_set():
                _close(client)
                continue
            client.settimeout(None)
            if self._silent_up.is_set() and self._silent_down.is_set():  # the target unreachable
                self._track(client)
                threading.Thread(target=self._drain, args=(client,), daemon=True).start()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            self._track(client, upstream)
            up = (client, upstream, self._silent_up)
            threading.Thread(target=self._pump, args=up, daemon=True).start()
            back = self._pump_frames if self.rewrite is not None else self._pump
            down = (upstream, client, self._silent_down)
            threading.Thread(target=back, args=down, daemon=True).start()

    def _track(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._open.update(sockets)
            self.connections += 1

    def _drain(self, src: socket.socket) -> None:
        """A connection accepted while the target was unreachable: swallow what it sends
        while the silence lasts. Accepted just as ``restore()`` closed the others, it would
        otherwise swallow for ever (a black hole no real link leaves after a heal); closed
        instead at its first bytes after the heal, so its client connects again."""
        with contextlib.suppress(OSError):
            while src.recv(65536):
                if not (self._silent_up.is_set() and self._silent_down.is_set()):
                    break
        _close(src)

    def _pump(self, src: socket.socket, dst: socket.socket, silent: threading.Event) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not silent.is_set():
                    dst.sendall(data)
        except OSError:
            pass
        _close(src)
        _close(dst)

    def _pump_frames(self, src: socket.socket, dst: socket.socket, silent: threading.Event) -> None:
        assert self.rewrite is not None
        pending = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                pending += data
                while len(pending) >= 4:
                    end = 4 + LENGTH_STRUCT.unpack_from(pending)[0]
                    if len(pending) < end:
                        break
                    frame, pending = pending[:end], pending[end:]
                    if not silent.is_set():
                        dst.sendall(self.rewrite(frame))
        except OSError:
            pass
        _close(src)
        _close(dst)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()
