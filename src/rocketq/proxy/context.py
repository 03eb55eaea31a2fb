"""What every activity reads from a gRPC call: the client's metadata headers and its peer.

The 5.x clients send ``x-mq-client-id`` (required: CLIENT_ID_REQUIRED without it, as the Java
proxy's ``ContextInterceptor``), ``x-mq-language`` (PYTHON, or HTTP from Node),
``x-mq-client-version``, ``x-mq-namespace`` and ``authorization`` on every RPC.

A client's language in the brokers' client lists is this header's, as the Java proxy's
``ClientActivity`` (``LanguageCode.valueOf(ctx.getLanguage())``) takes it: the Node client
1.0.8 sends ``HTTP`` here (and NODE_JS only in its Settings ``user_agent``, which Java does not
read), so Java lists it as HTTP, and so does rocketq.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc

from rocketq.proxy.status import Code, ProxyError

ServicerContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
CLIENT_ID = "x-mq-client-id"
LANGUAGE = "x-mq-language"
CLIENT_VERSION = "x-mq-client-version"
NAMESPACE = "x-mq-namespace"


@dataclass(frozen=True, slots=True)
class CallContext:
    client_id: str
    language: str
    version: str
    namespace: str
    peer_host: str
    peer_addr: str  # host:port, as a broker's connection list shows a client
    metadata: dict[str, str]

    @classmethod
    def of(cls, context: grpc.aio.ServicerContext) -> CallContext:  # type: ignore[type-arg]
        metadata: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            metadata[key.lower()] = value if isinstance(value, str) else value.decode()
        return cls(
            client_id=metadata.get(CLIENT_ID, ""),
            language=metadata.get(LANGUAGE, ""),
            version=metadata.get(CLIENT_VERSION, ""),
            namespace=metadata.get(NAMESPACE, ""),
            peer_host=peer_host(context.peer() or ""),
            peer_addr=peer_addr(context.peer() or ""),
            metadata=metadata,
        )

    def require_client_id(self) -> None:
        if not self.client_id:
            raise ProxyError(Code.CLIENT_ID_REQUIRED, "x-mq-client-id is required")


def peer_host(peer: str) -> str:
    """The host of a grpc peer string (``ipv4:127.0.0.1:5000``, ``ipv6:[::1]:5000``)."""
    _, _, rest = peer.partition(":")
    host = rest.rpartition(":")[0] if ":" in rest else rest
    return host.strip("[]")


def peer_addr(peer: str) -> str:
    """``host:port`` of a grpc peer string (``ipv4:127.0.0.1:5000`` -> ``127.0.0.1:5000``)."""
    return peer.partition(":")[2]
