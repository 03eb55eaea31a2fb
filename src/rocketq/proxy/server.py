"""GrpcServer: the 5.x gRPC endpoint on grpcio's asyncio server, over one MessagingBackend.

``start(host)`` binds ``grpcServerPort`` (0 picks a free port; ``port`` tells which):
plaintext by default, TLS only when ``tlsCertPath``/``tlsKeyPath`` are set (grpcio cannot serve
both on one port). Messages over ``grpcMaxInboundMessageSize`` are refused by grpcio with
RESOURCE_EXHAUSTED. ``stop`` ends the calls in flight after a short grace.
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import grpc

from rocketq.errors import IllegalStateError
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.messaging_service import MessagingService, generic_handler

log = logging.getLogger(__name__)
STOP_GRACE_S = 1.0


class GrpcServer:
    def __init__(self, config: ProxyConfig, backend: MessagingBackend) -> None:
        self.config = config
        self.backend = backend
        self.service = MessagingService(backend, config)
        self._server: grpc.aio.Server | None = None
        self.host = ""
        self.port = 0

    @classmethod
    def over_namesrv(cls, config: ProxyConfig, namesrv_addr: str) -> GrpcServer:
        """A server whose backend reads routes from ``namesrv_addr`` (both deployments)."""
        return cls(config, MessagingBackend(namesrv_addr))

    async def start(self, host: str = "0.0.0.0") -> int:
        if self._server is not None:
            raise IllegalStateError("the gRPC server is already started")
        size = self.config.grpc_max_inbound_message_size_bytes
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", size),
                ("grpc.max_send_message_length", -1),
                ("grpc.so_reuseport", 0),
            ]
        )
        server.add_generic_rpc_handlers((generic_handler(self.service),))
        address = f"{host}:{self.config.grpc_server_port}"
        try:
            self.port = self._bind(server, address)
        except RuntimeError as exc:  # grpcio's "Failed to bind": say it as a taken port
            raise OSError(
                errno.EADDRINUSE,
                f"could not bind on address ('{host}', {self.config.grpc_server_port}): {exc}",
            ) from exc
        await server.start()
        self._server, self.host = server, host
        log.info(
            "gRPC endpoint (apache.rocketmq.v2) on %s:%d%s",
            host, self.port, " (TLS)" if self.config.tls_enabled else "",
        )  # fmt: skip
        return self.port

    def _bind(self, server: grpc.aio.Server, address: str) -> int:
        if not self.config.tls_enabled:
            return server.add_insecure_port(address)
        credentials = grpc.ssl_server_credentials(
            [(_read(self.config.tls_key_path), _read(self.config.tls_cert_path))]
        )
        return server.add_secure_port(address, credentials)

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop(STOP_GRACE_S)
        await self.service.shutdown()
        await self.backend.shutdown()


def _read(path: str) -> bytes:
    return Path(path).read_bytes()
