"""The clients the endpoint knows and their Telemetry streams (the Java proxy's
``GrpcClientSettingsManager``, ``GrpcChannelManager`` and ``ClientActivity.telemetry``).

A client id (``x-mq-client-id``) keys its last Settings and its current stream. Each Settings
that arrives is stored and answered on the same stream with ``{status OK, settings: merged}``:
a producer gets the real ``max_body_size``, ``validate_message_type`` and a 3-attempt exponential
backoff; a consumer gets batch 32, the polling time, ``fifo`` from the group's
consumeMessageOrderly and the group's retry policy as backoff (``max_attempts`` =
retryMaxTimes + 1); both get ``metric{on: false}``. A Settings with neither publishing nor
subscription ends the stream with gRPC INVALID_ARGUMENT. Commands pushed to a client (the
transaction check's RecoverOrphanedTransactionCommand) go to its most recent open stream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.message_converter import duration
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.retry_policy import ExponentialRetryPolicy

PRODUCER_MAX_ATTEMPTS = 3
DEFAULT_BATCH = 32
DEFAULT_LONG_POLLING_MS = 20_000


@dataclass(slots=True)
class ClientSession:
    client_id: str
    language: str = ""
    version: str = ""
    peer_addr: str = ""  # host:port of its Telemetry stream
    last_seen_ms: int = 0  # its last Heartbeat or Settings (client_heartbeat.py expires it)
    settings: pb.Settings | None = None
    outbox: asyncio.Queue[spb.TelemetryCommand] | None = None  # the open stream's writes
    producer_topics: set[str] = field(default_factory=set)

    @property
    def group(self) -> str | None:
        s = self.settings
        if s is None or not s.HasField("subscription") or not s.subscription.HasField("group"):
            return None
        return s.subscription.group.name

    @property
    def fifo(self) -> bool:
        s = self.settings
        return s is not None and s.HasField("subscription") and s.subscription.fifo

    @property
    def max_attempts(self) -> int:
        s = self.settings
        if s is None or not s.HasField("backoff_policy") or s.backoff_policy.max_attempts <= 0:
            return 17
        return s.backoff_policy.max_attempts


class ClientRegistry:
    def __init__(self) -> None:
        self.sessions: dict[str, ClientSession] = {}

    def session(self, client_id: str) -> ClientSession:
        found = self.sessions.get(client_id)
        if found is None:
            found = self.sessions[client_id] = ClientSession(client_id)
        return found

    def forget(self, client_id: str) -> None:
        self.sessions.pop(client_id, None)

    def producers_of(self, topic: str) -> list[ClientSession]:
        """Sessions with an open stream whose producer Settings listed ``topic``."""
        return [
            s for s in self.sessions.values() if topic in s.producer_topics and s.outbox is not None
        ]

    def push(self, session: ClientSession, command: spb.TelemetryCommand) -> bool:
        if session.outbox is None:
            return False
        session.outbox.put_nowait(command)
        return True


def producer_echo(settings: pb.Settings, config: ProxyConfig) -> pb.Settings:
    """A producer's Settings with the server's publishing limits and backoff."""
    merged = pb.Settings()
    merged.CopyFrom(settings)
    merged.publishing.max_body_size = config.max_message_size_bytes
    merged.publishing.validate_message_type = config.enable_topic_message_type_check
    merged.backoff_policy.CopyFrom(
        pb.RetryPolicy(
            max_attempts=PRODUCER_MAX_ATTEMPTS,
            exponential_backoff=pb.ExponentialBackoff(
                initial=duration(10), max=duration(1000), multiplier=2.0
            ),
        )
    )
    merged.metric.CopyFrom(pb.Metric(on=False))
    return merged


def consumer_echo(settings: pb.Settings, group: SubscriptionGroupConfig) -> pb.Settings:
    """A consumer's Settings with the group's FIFO flag and retry policy."""
    merged = pb.Settings()
    merged.CopyFrom(settings)
    sub = merged.subscription
    sub.receive_batch_size = DEFAULT_BATCH
    if not sub.HasField("long_polling_timeout"):
        sub.long_polling_timeout.CopyFrom(duration(DEFAULT_LONG_POLLING_MS))
    sub.fifo = group.orderly
    policy = group.retry_policy
    retry = pb.RetryPolicy(max_attempts=group.retry_max_times + 1)
    if isinstance(policy, ExponentialRetryPolicy):
        retry.exponential_backoff.CopyFrom(
            pb.ExponentialBackoff(
                initial=duration(policy.initial),
                max=duration(policy.max),
                multiplier=float(policy.multiplier),
            )
        )
    else:
        retry.customized_backoff.CopyFrom(
            pb.CustomizedBackoff(next=[duration(ms) for ms in policy.next])
        )
    merged.backoff_policy.CopyFrom(retry)
    merged.metric.CopyFrom(pb.Metric(on=False))
    return merged
