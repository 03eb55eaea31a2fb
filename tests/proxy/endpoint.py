"""A name server, a broker and the gRPC endpoint over them on 127.0.0.1 port 0, with a
``grpc.aio`` stub of rocketq's own generated modules (what tests/proxy's tests drive)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from rocketq.common.topic_config import TopicConfig
from rocketq.proxy.auth import authorization_value
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.proxy.protos import service_pb2_grpc
from rocketq.proxy.server import GrpcServer
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.testing.acl import write_acl
from rocketq.testing.cluster import Cluster, run_cluster

CALL_TIMEOUT_S = 10.0


@dataclass
class Endpoint:
    cluster: Cluster
    server: GrpcServer
    stub: Any
    client_id: str
    language: str = "PYTHON"
    version: str = "5.1.2"

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (
            ("x-mq-client-id", self.client_id),
            ("x-mq-language", self.language),
            ("x-mq-client-version", self.version),
        )

    def signed(self, access_key: str, secret_key: str) -> tuple[tuple[str, str], ...]:
        """The metadata of a client with these credentials, as the 5.x clients sign."""
        date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        return (
            *self.metadata,
            ("x-mq-date-time", date),
            ("authorization", authorization_value(access_key, secret_key, date)),
        )

    @property
    def endpoints(self) -> pb.Endpoints:
        return pb.Endpoints(
            scheme=pb.IPv4, addresses=[pb.Address(host="127.0.0.1", port=self.server.port)]
        )

    async def create_topic(self, topic: str, message_type: str | None = None, queues: int = 4):
        attributes = {"message.type": message_type} if message_type else None
        self.cluster.broker.topic_config_manager.update_topic_config(
            TopicConfig(
                topic_name=topic,
                read_queue_nums=queues,
                write_queue_nums=queues,
                attributes=attributes,
            )
        )
        await self.cluster.broker.register_broker_all()

    def create_group(self, group: str, *, orderly: bool = False, retry_max_times: int = 16):
        self.cluster.broker.subscription_group_manager.update_subscription_group_config(
            SubscriptionGroupConfig(
                group_name=group, consume_message_orderly=orderly, retry_max_times=retry_max_times
            )
        )

    async def ack(self, group: str, topic: str, m: pb.Message) -> spb.AckMessageResponse:
        return await self.stub.AckMessage(
            spb.AckMessageRequest(
                group=pb.Resource(name=group),
                topic=pb.Resource(name=topic),
                entries=[
                    spb.AckMessageEntry(
                        message_id=m.system_properties.message_id,
                        receipt_handle=m.system_properties.receipt_handle,
                    )
                ],
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT_S,
        )

    def message(self, topic: str, body: bytes, **system: Any) -> pb.Message:
        system.setdefault("message_id", uuid.uuid4().hex.upper())
        system.setdefault("message_type", pb.NORMAL)
        return pb.Message(
            topic=pb.Resource(name=topic),
            body=body,
            system_properties=pb.SystemProperties(**system),
        )

    async def send(self, *messages: pb.Message) -> spb.SendMessageResponse:
        return await self.stub.SendMessage(
            spb.SendMessageRequest(messages=messages),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT_S,
        )

    async def receive(
        self, group: str, topic: str, *, invisible_s: int = 10, polling_s: int = 5, **request: Any
    ) -> tuple[list[spb.ReceiveMessageResponse], list[pb.Message]]:
        call = self.stub.ReceiveMessage(
            spb.ReceiveMessageRequest(
                group=pb.Resource(name=group),
                message_queue=pb.MessageQueue(topic=pb.Resource(name=topic)),
                filter_expression=request.pop(
                    "filter_expression", pb.FilterExpression(type=pb.TAG, expression="*")
                ),
                batch_size=request.pop("batch_size", 32),
                invisible_duration={"seconds": invisible_s},
                long_polling_timeout={"seconds": polling_s},
                **request,
            ),
            metadata=self.metadata,
            timeout=polling_s + CALL_TIMEOUT_S,
        )
        responses = [r async for r in call]
        return responses, [r.message for r in responses if r.HasField("message")]


class Stream:
    """A Telemetry call whose writes go through a queue."""

    def __init__(self, ep: Endpoint) -> None:
        self.outgoing: asyncio.Queue[spb.TelemetryCommand | None] = asyncio.Queue()
        self.client_id = ep.client_id
        self.call = ep.stub.Telemetry(self._requests(), metadata=ep.metadata, timeout=60)

    async def _requests(self) -> AsyncIterator[spb.TelemetryCommand]:
        while (command := await self.outgoing.get()) is not None:
            yield command

    async def settings(self, settings: pb.Settings) -> spb.TelemetryCommand:
        await self.outgoing.put(spb.TelemetryCommand(settings=settings))
        return await asyncio.wait_for(self.call.read(), 10)


def producer_settings(*topics: str) -> pb.Settings:
    return pb.Settings(
        client_type=pb.PRODUCER,
        publishing=pb.Publishing(
            topics=[pb.Resource(name=t) for t in topics], max_body_size=128 * 1024 * 1024
        ),
    )


@contextlib.asynccontextmanager
async def run_endpoint(
    tmp: Path,
    broker: dict[str, Any] | None = None,
    acl: list[dict[str, Any]] | None = None,
    **config: Any,
) -> AsyncIterator[Endpoint]:
    """The endpoint (``config``: ProxyConfig fields) over a cluster (``broker``: BrokerConfig
    fields); with ``acl`` accounts the broker has aclEnable and the endpoint checks them."""
    overrides = dict(broker or {})
    if acl is not None:
        write_acl(tmp / "store" / "config" / "plain_acl.yml", acl)
        overrides["acl_enable"] = True
    async with run_cluster(tmp, **overrides) as cluster:
        validator = cluster.broker.access_validator
        server = GrpcServer.over_namesrv(
            ProxyConfig(grpc_server_port=0, **config),
            cluster.addr,
            None if validator is None else validator.manager,
        )
        await server.start("127.0.0.1")
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = service_pb2_grpc.MessagingServiceStub(channel)
                yield Endpoint(cluster, server, stub, f"test@{uuid.uuid4().hex[:8]}")
        finally:
            await server.stop()
