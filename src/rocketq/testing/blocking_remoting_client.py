"""BlockingRemotingClient: plain sockets on the same codec, for scripts and Spark executors.

One socket per address, guarded by a lock: a call writes its request and reads frames until the
response with its ``opaque`` arrives, discarding late responses of earlier timed-out calls.
Requests the server starts are answered by ``register_processor`` handlers (plain functions),
or with REQUEST_CODE_NOT_SUPPORTED. Thread-safe; no event loop involved.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable

from rocketq.errors import RemotingCommandError, RemotingConnectError, RemotingTimeoutError
from rocketq.remoting.client import RpcHook, parse_addr
from rocketq.remoting.codec import MAX_FRAME_SIZE, FrameDecoder, encode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

BlockingProcessor = Callable[[RemotingCommand], RemotingCommand | None]


class _Connection:
    def __init__(self, addr: str, sock: socket.socket, max_frame_size: int) -> None:
        self.addr = addr
        self.sock = sock
        self.lock = threading.Lock()
        self.decoder = FrameDecoder(max_frame_size)
        self.closed = False

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()


class BlockingRemotingClient:
    def __init__(
        self,
        *,
        namesrv_addrs: list[str] | None = None,
        connect_timeout_s: float = 3.0,
        max_frame_size: int = MAX_FRAME_SIZE,
        rpc_hook: RpcHook | None = None,
    ) -> None:
        self._rpc_hook = rpc_hook
        self._connections: dict[str, _Connection] = {}
        self._lock = threading.Lock()
        self._processors: dict[int, BlockingProcessor] = {}
        self._namesrv_addrs = list(namesrv_addrs or [])
        self._namesrv_index = 0
        self._connect_timeout_s = connect_timeout_s
        self._max_frame_size = max_frame_size

    def register_processor(self, code: int, processor: BlockingProcessor) -> None:
        self._processors[int(code)] = processor

    def update_namesrv_addr_list(self, addrs: list[str]) -> None:
        self._namesrv_addrs = list(addrs)

    # ------------------------------------------------------------------ calls

    def invoke(
        self, addr: str | None, request: RemotingCommand, timeout_s: float = 3.0
    ) -> RemotingCommand:
        """Send ``request`` and block until its response (or RemotingTimeoutError)."""
        conn = self._connection(addr)
        if self._rpc_hook is not None:
            self._rpc_hook(request)
        deadline = time.monotonic() + timeout_s
        with conn.lock:
            self._send(conn, request)
            while True:
                for cmd in self._receive(conn, deadline, request):
                    if cmd.is_response and cmd.opaque == request.opaque:
                        return cmd

    def invoke_oneway(self, addr: str | None, request: RemotingCommand) -> None:
        request.mark_oneway_rpc()
        conn = self._connection(addr)
        if self._rpc_hook is not None:
            self._rpc_hook(request)
        with conn.lock:
            self._send(conn, request)

    def _send(self, conn: _Connection, cmd: RemotingCommand) -> None:
        try:
            conn.sock.sendall(encode(cmd))
        except OSError as exc:
            self._drop(conn)
            raise RemotingConnectError(f"write to {conn.addr} failed: {exc}") from exc

    def _receive(
        self, conn: _Connection, deadline: float, request: RemotingCommand
    ) -> list[RemotingCommand]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RemotingTimeoutError(
                f"wait response on {conn.addr} timeout, code {request.code}, "
                f"opaque {request.opaque}"
            )
        try:
            conn.sock.settimeout(remaining)
            data = conn.sock.recv(256 * 1024)
        except TimeoutError:
            return []
        except OSError as exc:
            self._drop(conn)
            raise RemotingConnectError(f"read from {conn.addr} failed: {exc}") from exc
        if not data:
            self._drop(conn)
            raise RemotingConnectError(f"connection to {conn.addr} closed")
        try:
            commands = conn.decoder.feed(data)
        except RemotingCommandError:
            self._drop(conn)
            raise
        for cmd in commands:
            if not cmd.is_response:
                self._serve(conn, cmd)
        return commands

    def _serve(self, conn: _Connection, request: RemotingCommand) -> None:
        processor = self._processors.get(request.code)
        if processor is None:
            response: RemotingCommand | None = RemotingCommand.create_response(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                f" request type {request.code} not supported",
            )
        else:
            try:
                response = processor(request)
            except Exception as exc:  # noqa: BLE001 -- a raising processor answers SYSTEM_ERROR
                response = RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(exc))
        if response is not None and not request.is_oneway:
            self._send(conn, response.response_to(request))

    # ------------------------------------------------------------------ connections

    def _connection(self, addr: str | None) -> _Connection:
        if addr is None:
            return self._namesrv_connection()
        with self._lock:
            conn = self._connections.get(addr)
            if conn is not None and not conn.closed:
                return conn
            host, port = parse_addr(addr)
            try:
                sock = socket.create_connection((host, port), timeout=self._connect_timeout_s)
            except OSError as exc:
                raise RemotingConnectError(f"connect to {addr} failed: {exc!r}") from exc
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(addr, sock, self._max_frame_size)
            self._connections[addr] = conn
            return conn

    def _namesrv_connection(self) -> _Connection:
        if not self._namesrv_addrs:
            raise RemotingConnectError("no name server address")
        last_error: RemotingConnectError | None = None
        for _ in range(len(self._namesrv_addrs)):
            addr = self._namesrv_addrs[self._namesrv_index % len(self._namesrv_addrs)]
            try:
                return self._connection(addr)
            except RemotingConnectError as exc:
                last_error = exc
                self._namesrv_index += 1
        assert last_error is not None
        raise last_error

    def _drop(self, conn: _Connection) -> None:
        conn.close()
        with self._lock:
            if self._connections.get(conn.addr) is conn:
                del self._connections[conn.addr]

    def close(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        for conn in connections:
            conn.close()

    def __enter__(self) -> BlockingRemotingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
