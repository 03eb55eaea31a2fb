"""NamesrvConfig: the name server's settings, with RocketMQ's defaults.

``from_properties`` reads the camelCase keys of RocketMQ's ``namesrv.conf`` (``NamesrvConfig``
and ``NettyServerConfig``) that map to a field below; the caller (``rocketq namesrv -c``)
decides what the other keys are (the embedded controller's, or unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rocketq.errors import ConfigError

# camelCase key in namesrv.conf -> NamesrvConfig field
NAMESRV_KEYS: dict[str, str] = {
    "listenPort": "listen_port",
    "bindAddress": "listen_host",
    "scanNotActiveBrokerInterval": "scan_not_active_broker_interval_ms",
    "serverChannelMaxIdleTimeSeconds": "server_channel_max_idle_time_s",
    "orderMessageEnable": "order_message_enable",
    "kvConfigPath": "kv_config_path",
    "metricsExporterType": "metrics_exporter_type",
    "metricsPromExporterHost": "metrics_prom_exporter_host",
    "metricsPromExporterPort": "metrics_prom_exporter_port",
    "enableControllerInNamesrv": "enable_controller_in_namesrv",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class NamesrvConfig:
    listen_host: str = "0.0.0.0"
    listen_port: int = 9876
    # RouteInfoManager: scan period and how long a silent broker stays (BROKER_CHANNEL_EXPIRED_TIME)
    scan_not_active_broker_interval_ms: int = 10_000
    broker_channel_expired_time_ms: int = 120_000
    # NettyServerConfig.serverChannelMaxIdleTimeSeconds
    server_channel_max_idle_time_s: float = 120.0
    # answer orderTopicConf from KV namespace ORDER_TOPIC_CONFIG in routes
    order_message_enable: bool = False
    # where KV config persists (RocketMQ: ~/namesrv/kvConfig.json); None keeps it in memory
    kv_config_path: str | None = None
    # PROM: /metrics (rocketmq_rpc_latency, live brokers, topics) on this host and port
    metrics_exporter_type: str = "DISABLE"
    metrics_prom_exporter_host: str = "127.0.0.1"
    metrics_prom_exporter_port: int = 5558
    # answer an unknown ordinary topic with TBW102's route (namesrv/auto_create_route.py) for
    # clients without a TBW102 fallback (ali-ons); off answers TOPIC_NOT_EXIST as RocketMQ does.
    # The `rocketq namesrv` and `rocketq server` commands turn it on.
    auto_create_topic_route_enable: bool = False
    # RocketMQ 5: this process also runs a controller (rocketq namesrv -c composes it)
    enable_controller_in_namesrv: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.listen_port <= 65535:
            raise ConfigError(f"listen_port out of range: {self.listen_port}")
        if self.scan_not_active_broker_interval_ms <= 0:
            raise ConfigError("scan_not_active_broker_interval_ms must be positive")
        if self.broker_channel_expired_time_ms <= 0:
            raise ConfigError("broker_channel_expired_time_ms must be positive")
        if self.server_channel_max_idle_time_s <= 0:
            raise ConfigError("server_channel_max_idle_time_s must be positive")

    @classmethod
    def from_properties(cls, props: dict[str, str], **overrides: Any) -> NamesrvConfig:
        """Build from namesrv.conf properties; keys not in ``NAMESRV_KEYS`` are not read."""
        types = {f.name: str(f.type) for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, text in props.items():
            if key in NAMESRV_KEYS:
                name = NAMESRV_KEYS[key]
                values[name] = _convert(key, text.strip(), types[name])
        values.update(overrides)
        return cls(**values)


def _convert(key: str, text: str, type_name: str) -> Any:
    if type_name == "bool":
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key}: expected true or false, got {text!r}")
        return text.lower() == "true"
    try:
        if type_name == "int":
            return int(text)
        if type_name == "float":
            return float(text)
    except ValueError:
        raise ConfigError(f"{key}: expected {type_name}, got {text!r}") from None
    return text
