"""ProxiedChannel: one 5.x gRPC client behind a proxy's shared remoting connection.

RocketMQ's proxy registers each gRPC client with the broker's ProducerManager and
ConsumerManager under a channel of its own (``GrpcClientChannel``, a ``ProxyChannel``), so
``producerConnection``, ``consumerConnection`` and the dashboard list every client with its id,
address, language and version. rocketq's proxy reaches brokers over remoting in both
deployments, so it heartbeats on behalf of each client (HEART_BEAT with the client's id in
``HeartbeatData``, its version in the command, and its gRPC address and language in the ext
fields ``PROXY_CLIENT_ADDR`` and ``PROXY_CLIENT_LANGUAGE``); the broker then keys that client
by ``ProxiedChannel(carrier, client_id)``: equal for the same client on the same connection, so
a heartbeat refreshes its entry and UNREGISTER_CLIENT (with the same ext field) removes only
that client. Requests to the client (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
CHECK_TRANSACTION_STATE) travel on the carrier, where the proxy routes them by client id;
NOTIFY_CONSUMER_IDS_CHANGED is not sent, since a gRPC client has no rebalance
(GrpcClientChannel ignores it too). Closing a ProxiedChannel (an expired client) never closes
the carrier; the carrier's close removes every client on it (``carried_by``).
"""

from __future__ import annotations

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand

PROXY_CLIENT_ADDR = "proxyClientAddr"  # rocketq's ext field: the gRPC client's host:port
# and its x-mq-language (the proxy's own connection stamps its language on every command)
PROXY_CLIENT_LANGUAGE = "proxyClientLanguage"


class ProxiedChannel:
    __slots__ = ("carrier", "client_id", "remote_addr")

    def __init__(self, carrier: RemotingChannel, client_id: str, remote_addr: str = "") -> None:
        self.carrier = carrier
        self.client_id = client_id
        self.remote_addr = remote_addr or carrier.remote_addr

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ProxiedChannel)
            and other.carrier is self.carrier
            and other.client_id == self.client_id
        )

    def __hash__(self) -> int:
        return hash((id(self.carrier), self.client_id))

    def __repr__(self) -> str:
        return f"ProxiedChannel({self.client_id} at {self.remote_addr} via {self.carrier!r})"

    @property
    def is_closed(self) -> bool:
        return self.carrier.is_closed

    def close(self) -> None:
        """An expired client: its entries go, the proxy's connection stays."""

    async def invoke(self, request: RemotingCommand, timeout_s: float) -> RemotingCommand:
        return await self.carrier.invoke(request, timeout_s)

    async def invoke_oneway(self, request: RemotingCommand) -> None:
        if request.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
            return
        await self.carrier.invoke_oneway(request)


def carried_by(channel: object, carrier: object) -> bool:
    """``channel`` is ``carrier`` itself or a client it carries."""
    return channel is carrier or (
        isinstance(channel, ProxiedChannel) and channel.carrier is carrier
    )


def client_language(ext_fields: dict[str, str], language: str) -> str:
    """A proxied client's language, else the command's."""
    return ext_fields.get(PROXY_CLIENT_LANGUAGE) or language


def client_channel(
    channel: RemotingChannel, client_id: str, ext_fields: dict[str, str]
) -> RemotingChannel | ProxiedChannel:
    """The key a heartbeat or unregister of ``client_id`` on ``channel`` registers under."""
    addr = ext_fields.get(PROXY_CLIENT_ADDR)
    if addr is None:
        return channel
    return ProxiedChannel(channel, client_id, addr)
