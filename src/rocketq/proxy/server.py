"""GrpcServer: the 5.x gRPC endpoint on grpcio's asyncio server, over one MessagingBackend.

``start(host)`` binds ``grpcServerPort`` (0 picks a free port; ``port`` tells which):
plaintext by default, TLS only when ``tlsCertPath``/``tlsKeyPath`` are set (grpcio cannot serve
both on one port). Messages over ``grpcMaxInboundMessageSize`` are refused by grpcio with
RESOURCE_EXHAUSTED. ``stop`` ends the calls in flight after a short grace.
"""

from __future__ import annotations

import errno
import logging

import grpc

from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.errors import ConfigError, IllegalStateError
from rocketq.proxy.auth import GrpcAccessValidator
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.messaging_service import MessagingService, generic_handler
from rocketq.proxy.tls import TLS_CERT_PATH, TLS_KEY_PATH, server_credentials, tls_key_pair

log = logging.getLogger(__name__)
STOP_GRACE_S = 1.0


class GrpcServer:
    def __init__(
        self,
        config: ProxyConfig,
        backend: MessagingBackend,
        validator: GrpcAccessValidator | None = None,
    ) -> None:
        self.config = config
        self.backend = backend
        self.service = MessagingService(backend, config, validator)
        self._server: grpc.aio.Server | None = None
        self.host = ""
        self.port = 0

    @classmethod
    def over_namesrv(
        cls, config: ProxyConfig, namesrv_addr: str, acl: PlainPermissionManager | None = None
    ) -> GrpcServer:
        """A server whose backend reads routes from ``namesrv_addr`` (both deployments). With
        ``acl`` (aclEnable) clients are checked against its accounts, and the backend signs its
        requests to the brokers with the first admin account (sorted by access key)."""
        refresh_s = config.topic_route_service_cache_refresh_s
        if acl is None:
            return cls(config, MessagingBackend(namesrv_addr, route_refresh_s=refresh_s))
        admins = sorted(
            (a for a in acl.config.accounts.values() if a.admin), key=lambda a: a.access_key
        )
        if not admins:
            raise ConfigError("aclEnable: the gRPC endpoint needs an admin account in the ACL file")
        backend = MessagingBackend(
            namesrv_addr,
            route_refresh_s=refresh_s,
            access_key=admins[0].access_key,
            secret_key=admins[0].secret_key,
        )
        return cls(config, backend, GrpcAccessValidator(acl))

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
        pair = tls_key_pair(
            {TLS_CERT_PATH: self.config.tls_cert_path, TLS_KEY_PATH: self.config.tls_key_path}
        )
        if pair is None:
            return server.add_insecure_port(address)
        return server.add_secure_port(address, server_credentials(pair))

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop(STOP_GRACE_S)
        await self.service.shutdown()
        await self.backend.shutdown()
