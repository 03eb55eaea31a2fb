"""ProxyConfig: the keys of RocketMQ 5's ``rmq-proxy.json`` that rocketq's gRPC endpoint reads.

``rmq-proxy.json`` is a JSON object with ProxyConfig's camelCase keys (``-pc`` /
``--proxyConfigPath``, as ProxyStartup). Known keys: ``grpcServerPort`` (8081),
``rocketMQClusterName``, ``namesrvAddr``, ``enableTopicMessageTypeCheck`` (true),
``grpcMaxInboundMessageSize`` (130 MiB, as the Java proxy's Netty server), ``tlsCertPath`` and
``tlsKeyPath`` (both set: the port serves TLS only, Java's ENFORCING mode) and
``tlsTestModeEnable`` (Java's self-signed certificate, refused: the Python client verifies
certificates and rejects it), ``aclEnable`` (plain ACL; ACL 2.0's ``authenticationEnabled`` /
``authorizationEnabled`` = true stop the start). Other keys are logged by name and otherwise
ignored. The limits of Java's ProxyConfig that the activities apply are fields here too, with
Java's defaults.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass
from typing import Any

from rocketq.errors import ConfigError
from rocketq.proxy.auth import ACL2_KEYS, refuse_acl2_keys

log = logging.getLogger(__name__)

MIB = 1024 * 1024

# camelCase key in rmq-proxy.json -> ProxyConfig field
_KEYS = {
    "grpcServerPort": "grpc_server_port",
    "rocketMQClusterName": "rocketmq_cluster_name",
    "namesrvAddr": "namesrv_addr",
    "enableTopicMessageTypeCheck": "enable_topic_message_type_check",
    "grpcMaxInboundMessageSize": "grpc_max_inbound_message_size_bytes",
    "tlsCertPath": "tls_cert_path",
    "tlsKeyPath": "tls_key_path",
    "tlsTestModeEnable": "tls_test_mode_enable",
    "maxMessageSize": "max_message_size_bytes",
    "aclEnable": "acl_enable",
    "channelExpiredTimeout": "channel_expired_timeout_ms",
    "topicRouteServiceCacheRefreshSeconds": "topic_route_service_cache_refresh_s",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ProxyConfig:
    grpc_server_port: int = 8081
    rocketmq_cluster_name: str = "DefaultCluster"
    namesrv_addr: str = ""
    enable_topic_message_type_check: bool = True
    grpc_max_inbound_message_size_bytes: int = 130 * MIB
    tls_cert_path: str = ""
    tls_key_path: str = ""
    tls_test_mode_enable: bool = False
    acl_enable: bool = False  # cluster mode: plain_acl.yml beside rmq-proxy.json
    max_message_size_bytes: int = 4 * MIB  # publishing.max_body_size of the Settings echo
    # ReceiveMessageActivity / ProxyConfig's limits
    min_invisible_time_ms: int = 10_000
    max_invisible_time_ms: int = 12 * 3600 * 1000
    min_long_polling_ms: int = 5_000
    max_long_polling_ms: int = 20_000
    default_invisible_time_ms: int = 60_000  # auto_renew receives (PushConsumer)
    renew_ahead_ms: int = 10_000
    renew_max_ms: int = 3 * 3600 * 1000
    max_delay_ms: int = 24 * 3600 * 1000
    max_message_group_bytes: int = 64
    max_user_property_count: int = 128
    max_property_bytes: int = 16 * 1024
    # a client silent (no Heartbeat, no Settings) this long is unregistered from the brokers
    channel_expired_timeout_ms: int = 120_000
    client_heartbeat_interval_ms: int = 10_000  # the proxy's heartbeats for its clients
    # every route the proxy holds is read again this often (TopicRouteService's
    # refreshAfterWrite): a broker back on a new address is seen within it
    topic_route_service_cache_refresh_s: int = 20

    def __post_init__(self) -> None:
        if not 0 <= self.grpc_server_port <= 65535:
            raise ConfigError(f"grpcServerPort {self.grpc_server_port} is not a port")
        if self.tls_test_mode_enable:
            raise ConfigError(
                "tlsTestModeEnable=true is not supported: the 5.x clients reject a self-signed"
                " certificate; set tlsCertPath and tlsKeyPath to a certificate they trust"
            )
        if bool(self.tls_cert_path) != bool(self.tls_key_path):
            raise ConfigError("tlsCertPath and tlsKeyPath must be set together")
        if self.grpc_max_inbound_message_size_bytes <= 0:
            raise ConfigError("grpcMaxInboundMessageSize must be positive")
        if self.topic_route_service_cache_refresh_s <= 0:
            raise ConfigError("topicRouteServiceCacheRefreshSeconds must be positive")

    @property
    def tls_enabled(self) -> bool:
        return bool(self.tls_cert_path)

    @classmethod
    def from_json(cls, data: dict[str, Any], **overrides: Any) -> ProxyConfig:
        """A config from rmq-proxy.json's object; unknown keys are logged by name."""
        refuse_acl2_keys(data, "rmq-proxy.json")
        values: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for key, value in data.items():
            name = _KEYS.get(key)
            if name is None and key in ACL2_KEYS:
                continue  # false: refused above when true
            if name is None:
                log.warning("rmq-proxy.json: %s is not supported by rocketq, ignored", key)
                continue
            values[name] = _coerce(key, value, fields[name].type)
        values.update(overrides)
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> ProxyConfig:
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{os.fspath(path)} is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{os.fspath(path)} must hold a JSON object")
        return cls.from_json(data, **overrides)


def _coerce(key: str, value: Any, kind: Any) -> Any:
    text = str(kind)
    if text == "bool":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
    elif text == "int":
        try:
            return int(value)
        except (TypeError, ValueError):
            pass
    else:
        return str(value)
    raise ConfigError(f"rmq-proxy.json: {key}={value!r} is not a {text}")
