"""ClientActivity: the Telemetry stream of each 5.x client and its life on the brokers (the Java
proxy's ``ClientActivity``).

Telemetry keeps the client's stream open: each Settings is answered with the merged Settings
(telemetry.py), registers the client on the brokers at once (client_heartbeat.py) and, for a
producer, the proxy's relay of its topics' transaction checks; commands for the client
(transaction checks, and the admin's stack-trace and verify commands of admin_relay.py) are
written on it, and the client's answers to the latter are handed back to the relay. A Settings
with neither publishing nor subscription ends the stream with INVALID_ARGUMENT; with
``aclEnable`` each Settings passes ``auth.GrpcAccessValidator`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc

from rocketq.errors import AclError, RocketQError
from rocketq.proxy.admin_relay import AdminCommandRelay
from rocketq.proxy.auth import REFUSAL_STATUS, GrpcAccessValidator
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.client_heartbeat import ClientHeartbeatService
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.context import CallContext, ServicerContext
from rocketq.proxy.producer_activity import ProducerActivity
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.proxy.status import Code, status
from rocketq.proxy.telemetry import ClientRegistry, consumer_echo, producer_echo
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig

log = logging.getLogger(__name__)
Context = ServicerContext
ACL_REFUSED = "permission denied"


class ClientActivity:
    def __init__(
        self,
        backend: MessagingBackend,
        config: ProxyConfig,
        validator: GrpcAccessValidator | None,
        clients: ClientRegistry,
        producers: ProducerActivity,
    ) -> None:
        self.backend = backend
        self.config = config
        self.validator = validator
        self.clients = clients
        self.producers = producers
        # each client as its own producer/consumer on the brokers; their admin commands
        self.heartbeats = ClientHeartbeatService(backend, clients, config)
        self.admin_relay = AdminCommandRelay(clients)
        self.admin_relay.register(backend.instance.remoting)

    async def shutdown(self) -> None:
        self.admin_relay.cancel_all()
        await self.heartbeats.shutdown()

    async def telemetry(
        self, requests: AsyncIterator[spb.TelemetryCommand], context: Context
    ) -> AsyncGenerator[spb.TelemetryCommand, None]:
        """The client's stream: Settings in, their echo and the proxy's commands out."""
        call = CallContext.of(context)
        if not call.client_id:
            yield spb.TelemetryCommand(
                status=status(Code.CLIENT_ID_REQUIRED, "x-mq-client-id is required")
            )
            return
        session = self.clients.session(call.client_id)
        session.language, session.version = call.language, call.version
        session.peer_addr = call.peer_addr
        self.heartbeats.touch(session)
        self.heartbeats.start()
        outbox: asyncio.Queue[spb.TelemetryCommand] = asyncio.Queue()
        session.outbox = outbox
        reader = asyncio.get_running_loop().create_task(
            self._read_telemetry(requests, session, call)
        )
        getter: asyncio.Future[spb.TelemetryCommand] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(outbox.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                error = reader.result()
                if error == ACL_REFUSED:
                    await context.abort(getattr(grpc.StatusCode, REFUSAL_STATUS), error)
                if error is not None:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, error)
                return
        finally:
            if session.outbox is outbox:
                session.outbox = None
            for task in (getter, reader):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    async def _read_telemetry(
        self, requests: AsyncIterator[spb.TelemetryCommand], session: Any, call: CallContext
    ) -> str | None:
        """Answer each Settings; the reason to end the stream with, None at its end."""
        async for command in requests:
            if not command.HasField("settings"):
                self.admin_relay.on_client_answer(command)  # stack traces, verifications
                continue
            if self.validator is not None:
                try:
                    self.validator.validate(call.metadata, command, f"{call.peer_host}:0")
                except AclError as exc:
                    log.info("refused Settings from %s: %s", call.peer_host, exc)
                    return ACL_REFUSED
            settings = command.settings
            if settings.HasField("publishing"):
                echo = producer_echo(settings, self.config)
                await self._register_producer(session, settings)
            elif settings.HasField("subscription"):
                group = settings.subscription.group.name
                topics = [e.topic.name for e in settings.subscription.subscriptions]
                try:
                    config = await self.backend.group_config(group, topics[0]) if topics else None
                except (RocketQError, OSError) as exc:
                    log.warning("reading the group config of %s failed: %r", group, exc)
                    config = None
                echo = consumer_echo(settings, config or SubscriptionGroupConfig(group_name=group))
            else:
                return "settings carry neither publishing nor subscription"
            session.settings = echo
            session.outbox.put_nowait(spb.TelemetryCommand(status=status(), settings=echo))
            self.heartbeats.touch(session)
            await self.heartbeats.heartbeat(session)
        return None

    async def _register_producer(self, session: Any, settings: pb.Settings) -> None:
        topics = {t.name for t in settings.publishing.topics}
        new = topics - session.producer_topics
        session.producer_topics |= topics
        for topic in sorted(new):
            self.backend.register_producer(self.producers.relay_for(topic))
            with contextlib.suppress(RocketQError, OSError):
                await self.backend.route(topic)
        if new:
            with contextlib.suppress(RocketQError, OSError):
                await self.backend.heartbeat()
