"""Client configuration: one frozen keyword-only dataclass per client kind, RocketMQ's defaults.

``ClientConfig`` holds what the shared ``MQClientInstance`` uses (ClientConfig.java); producer and
consumer configs extend it with DefaultMQProducer / DefaultMQPushConsumer /
DefaultLitePullConsumer fields in snake_case with units. Tests shrink the intervals with
``dataclasses.replace``.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from rocketq.common.clock import now_ms
from rocketq.common.topic import AUTO_CREATE_TOPIC_KEY_TOPIC
from rocketq.errors import ConfigError
from rocketq.remoting.acl import AclClientRPCHook
from rocketq.remoting.client import RpcHook
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, MessageModel
from rocketq.remoting.protocol.codes import LanguageCode
from rocketq.remoting.protocol.command import RemotingCommand

MIB = 1024 * 1024
DEFAULT_INSTANCE_NAME = "DEFAULT"


def local_ip() -> str:
    """The address RocketMQ puts in a client id (RemotingUtil.getLocalAddress, simplified)."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _default_consume_timestamp_ms() -> int:
    return now_ms() - 30 * 60 * 1000  # DefaultMQPushConsumer: half an hour ago


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientConfig:
    namesrv_addr: str = ""
    client_ip: str = field(default_factory=local_ip)
    instance_name: str = DEFAULT_INSTANCE_NAME
    unit_name: str = ""
    poll_name_server_interval_s: float = 30.0
    heartbeat_broker_interval_s: float = 30.0
    persist_consumer_offset_interval_s: float = 5.0
    rebalance_interval_s: float = 20.0
    request_timeout_s: float = 3.0
    #: ClientConfig.language: what this client says it is in every request (JAVA in Java's)
    language: LanguageCode = LanguageCode.PYTHON
    # ACL session credentials (SessionCredentials): every request is signed when access_key is set
    access_key: str = ""
    secret_key: str = field(default="", repr=False)
    security_token: str = field(default="", repr=False)
    #: ClientConfig.enableTrace / DefaultMQProducer(enableMsgTrace): send trace records of each
    #: send and consume (client/trace) to ``customized_trace_topic`` or RMQ_SYS_TRACE_TOPIC
    enable_msg_trace: bool = False
    customized_trace_topic: str = ""

    def __post_init__(self) -> None:
        for name in (
            "poll_name_server_interval_s",
            "heartbeat_broker_interval_s",
            "persist_consumer_offset_interval_s",
            "rebalance_interval_s",
            "request_timeout_s",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")

    def rpc_hook(self) -> RpcHook:
        """What every request goes through: it names this client's language and, with
        credentials, is signed (AclClientRPCHook)."""
        return client_rpc_hook(
            self.language, self.access_key, self.secret_key, self.security_token or None
        )

    @property
    def namesrv_addrs(self) -> list[str]:
        return [a.strip() for a in self.namesrv_addr.split(";") if a.strip()]

    def build_client_id(self) -> str:
        """``ip@instanceName[@unitName]``; instance DEFAULT becomes the pid (ClientConfig)."""
        instance = self.instance_name
        if instance == DEFAULT_INSTANCE_NAME:
            instance = str(os.getpid())
        cid = f"{self.client_ip}@{instance}"
        return f"{cid}@{self.unit_name}" if self.unit_name else cid


def client_rpc_hook(
    language: LanguageCode = LanguageCode.PYTHON,
    access_key: str = "",
    secret_key: str = "",
    security_token: str | None = None,
) -> RpcHook:
    """Set ``language`` on each request (RocketMQ's clients set ClientConfig.language, which
    brokers show in connection listings), then sign it when ``access_key`` is given. The
    language is a header field, not one of the signed ext fields, so the order is free."""
    signer = AclClientRPCHook(access_key, secret_key, security_token) if access_key else None

    def hook(request: RemotingCommand) -> None:
        request.language = language
        if signer is not None:
            signer(request)

    return hook


@dataclass(frozen=True, kw_only=True, slots=True)
class ProducerConfig(ClientConfig):
    producer_group: str = "DEFAULT_PRODUCER"
    create_topic_key: str = AUTO_CREATE_TOPIC_KEY_TOPIC
    default_topic_queue_nums: int = 4
    send_msg_timeout_s: float = 3.0
    compress_msg_body_over_bytes: int = 4 * 1024
    compress_level: int = 5
    retry_times_when_send_failed: int = 2
    retry_times_when_send_async_failed: int = 2
    max_message_size_bytes: int = 4 * MIB
    send_latency_fault_enable: bool = True

    def __post_init__(self) -> None:
        ClientConfig.__post_init__(self)
        if not self.producer_group:
            raise ConfigError("producer_group is empty")
        if self.retry_times_when_send_failed < 0 or self.retry_times_when_send_async_failed < 0:
            raise ConfigError("retry times must not be negative")
        if not 0 <= self.compress_level <= 9:
            raise ConfigError("compress_level must be 0..9")
        if self.max_message_size_bytes <= 0 or self.send_msg_timeout_s <= 0:
            raise ConfigError("max_message_size_bytes and send_msg_timeout_s must be positive")


@dataclass(frozen=True, kw_only=True, slots=True)
class ConsumerConfig(ClientConfig):
    consumer_group: str = "DEFAULT_CONSUMER"
    message_model: MessageModel = MessageModel.CLUSTERING
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    consume_timestamp_ms: int = field(default_factory=_default_consume_timestamp_ms)
    allocate_strategy: str = "AVG"
    pull_batch_size: int = 32
    pull_threshold_for_queue: int = 1000
    pull_threshold_size_for_queue_bytes: int = 100 * MIB
    pull_time_delay_when_exception_s: float = 3.0
    pull_time_delay_when_flow_control_s: float = 0.05
    broker_suspend_max_time_s: float = 15.0
    consumer_timeout_when_suspend_s: float = 30.0
    offset_store_dir: str = ""  # broadcasting offsets; "" means ~/.rocketmq_offsets

    def __post_init__(self) -> None:
        ClientConfig.__post_init__(self)
        if not self.consumer_group:
            raise ConfigError("consumer_group is empty")
        if self.allocate_strategy not in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"):
            raise ConfigError(f"unknown allocate_strategy {self.allocate_strategy!r}")
        if not 1 <= self.pull_batch_size <= 1024:
            raise ConfigError("pull_batch_size must be 1..1024")
        if self.pull_threshold_for_queue < 1 or self.pull_threshold_size_for_queue_bytes < 1:
            raise ConfigError("pull thresholds must be positive")
        if self.consumer_timeout_when_suspend_s <= self.broker_suspend_max_time_s:
            raise ConfigError("consumer_timeout_when_suspend_s must exceed the broker suspend")


@dataclass(frozen=True, kw_only=True, slots=True)
class PushConsumerConfig(ConsumerConfig):
    consume_thread_max: int = 20
    consume_message_batch_max_size: int = 1
    consume_concurrently_max_span: int = 2000
    max_reconsume_times: int = -1  # -1: 16 for concurrent consumers, unbounded for orderly
    suspend_current_queue_time_s: float = 1.0
    lock_interval_s: float = 20.0
    lock_max_live_time_s: float = 30.0
    local_retry_delay_s: float = 5.0
    # RocketMQ 5's POP mode (clientRebalance=false): the broker picks the queues of each pop
    client_rebalance: bool = True
    pop_invisible_time_s: float = 60.0
    pop_batch_nums: int = 32

    def __post_init__(self) -> None:
        ConsumerConfig.__post_init__(self)
        if not 1 <= self.pop_batch_nums <= 32 or self.pop_invisible_time_s <= 0:
            raise ConfigError("pop_batch_nums must be 1..32, pop_invisible_time_s positive")
        if not 1 <= self.consume_thread_max <= 1000:
            raise ConfigError("consume_thread_max must be 1..1000")
        if not 1 <= self.consume_message_batch_max_size <= 1024:
            raise ConfigError("consume_message_batch_max_size must be 1..1024")
        if self.consume_concurrently_max_span < 1:
            raise ConfigError("consume_concurrently_max_span must be positive")


@dataclass(frozen=True, kw_only=True, slots=True)
class LitePullConsumerConfig(ConsumerConfig):
    pull_batch_size: int = 10
    auto_commit: bool = True
    auto_commit_interval_s: float = 5.0
    poll_timeout_s: float = 5.0
    topic_metadata_check_interval_s: float = 30.0

    def __post_init__(self) -> None:
        ConsumerConfig.__post_init__(self)
        if self.auto_commit_interval_s <= 0 or self.poll_timeout_s < 0:
            raise ConfigError("auto_commit_interval_s must be positive, poll_timeout_s >= 0")
