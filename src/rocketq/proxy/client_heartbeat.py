"""ClientHeartbeatService: each gRPC client made visible to the brokers as its own client.

RocketMQ's proxy registers every 5.x client in the producer group named after each topic it
publishes to and in its consumer group (``ClientActivity.heartbeat`` and
``processAndWriteClientSettings``, with a ``GrpcClientChannel`` per client), so
``producerConnection -g <topic> -t <topic>``, ``consumerConnection`` and the dashboard list
it with its id, address, language and version.
rocketq's proxy reaches brokers over remoting, so it heartbeats for each client: a HEART_BEAT
whose ``HeartbeatData`` has the client's id and groups, whose command carries the client's
MQVersion ordinal (``x-mq-client-version``), and whose ext fields ``PROXY_CLIENT_ADDR`` and
``PROXY_CLIENT_LANGUAGE`` name the client's gRPC address and ``x-mq-language`` (the broker's
``ProxiedChannel``).
It sends one at each Settings and every ``client_heartbeat_interval_ms``; a client that sent
NotifyClientTermination, or no Heartbeat or Settings for ``channel_expired_timeout_ms`` (the
Java proxy's ``channelExpiredTimeout``), is unregistered from every broker and forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable

from rocketq.broker.proxied_channel import PROXY_CLIENT_ADDR, PROXY_CLIENT_LANGUAGE
from rocketq.common.clock import Clock, now_ms
from rocketq.errors import RocketQError
from rocketq.proxy import consumer_activity as ca
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.telemetry import ClientRegistry, ClientSession
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumerData,
    ConsumeType,
    HeartbeatData,
    MessageModel,
    ProducerData,
)
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode, version_ordinal
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UnregisterClientRequestHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

MASTER_ID = 0


def heartbeat_data(session: ClientSession) -> HeartbeatData:
    """The client's producer groups (= its topics) and consumer group, as a 4.x client's."""
    data = HeartbeatData(client_id=session.client_id)
    data.producer_data_set = [ProducerData(group_name=t) for t in sorted(session.producer_topics)]
    settings = session.settings
    if settings is not None and settings.HasField("subscription") and session.group:
        subs = []
        for entry in settings.subscription.subscriptions:
            with contextlib.suppress(RocketQError):
                subs.append(ca.subscription_of(entry.topic.name, entry.expression))
        push = settings.client_type == pb.PUSH_CONSUMER
        kind = ConsumeType.CONSUME_ACTIVELY if push else ConsumeType.CONSUME_PASSIVELY
        data.consumer_data_set = [
            ConsumerData(
                group_name=session.group,
                consume_type=kind,
                message_model=MessageModel.CLUSTERING,
                consume_from_where=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
                subscription_data_set=subs,
            )
        ]
    return data


class ClientHeartbeatService:
    def __init__(
        self,
        backend: MessagingBackend,
        clients: ClientRegistry,
        config: ProxyConfig,
        *,
        clock: Clock = now_ms,
    ) -> None:
        self.backend = backend
        self.clients = clients
        self.config = config
        self.clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def touch(self, session: ClientSession) -> None:
        session.last_seen_ms = self.clock()

    async def _run(self) -> None:
        interval_s = self.config.client_heartbeat_interval_ms / 1000
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.beat_all()
            except Exception:  # a failed round must not end the loop
                log.exception("client heartbeats failed")

    async def beat_all(self) -> None:
        """Forget the silent clients, heartbeat the others (not the offline brokers)."""
        self.backend.instance.clean_offline_brokers()
        deadline = self.clock() - self.config.channel_expired_timeout_ms
        for session in list(self.clients.sessions.values()):
            if session.last_seen_ms < deadline:
                log.info("gRPC client %s expired: no heartbeat", session.client_id)
                await self.terminate(session)
            else:
                await self.heartbeat(session)

    async def heartbeat(self, session: ClientSession) -> None:
        """HEART_BEAT for ``session`` to every broker the proxy knows (consumers also to slaves)."""
        data = heartbeat_data(session)
        if not data.producer_data_set and not data.consumer_data_set:
            return
        body = data.encode()
        await self._send_all(
            self._addrs(consumer=bool(data.consumer_data_set)),
            lambda: self._request(session, RequestCode.HEART_BEAT, {}, body),
        )

    async def terminate(self, session: ClientSession) -> None:
        """UNREGISTER_CLIENT of each of its groups on every broker; then forget it."""
        self.clients.forget(session.client_id)
        groups: list[tuple[str | None, str | None]] = [(t, None) for t in session.producer_topics]
        if session.group:
            groups.append((None, session.group))
        for producer, consumer in groups:
            ext = UnregisterClientRequestHeader(
                client_id=session.client_id, producer_group=producer, consumer_group=consumer
            ).to_ext_fields()
            await self._send_all(
                self._addrs(consumer=consumer is not None),
                functools.partial(self._request, session, RequestCode.UNREGISTER_CLIENT, ext),
            )

    def _addrs(self, *, consumer: bool) -> list[str]:
        table = self.backend.instance.broker_addr_table
        return sorted(
            addr
            for addrs in list(table.values())
            for broker_id, addr in addrs.items()
            if consumer or broker_id == MASTER_ID
        )

    @staticmethod
    def _request(
        session: ClientSession, code: int, ext: dict[str, str], body: bytes = b""
    ) -> RemotingCommand:
        language = LanguageCode.from_name(session.language).name
        fields = {**ext, PROXY_CLIENT_ADDR: session.peer_addr, PROXY_CLIENT_LANGUAGE: language}
        request = RemotingCommand.create_request(code, fields, body)
        request.version = version_ordinal(session.version)
        return request

    async def _send_all(self, addrs: list[str], request: Callable[[], RemotingCommand]) -> None:
        """One request to each broker at once (a down broker does not hold up the others)."""
        await asyncio.gather(*(self._send(addr, request()) for addr in addrs))

    async def _send(self, addr: str, request: RemotingCommand) -> None:
        instance = self.backend.instance
        try:
            response = await instance.remoting.invoke(
                addr, request, instance.config.request_timeout_s
            )
        except (RocketQError, OSError) as exc:
            log.warning("client heartbeat to %s failed: %r", addr, exc)
            return
        if response.code != ResponseCode.SUCCESS:
            log.warning("client heartbeat to %s refused: %s", addr, response.remark)
