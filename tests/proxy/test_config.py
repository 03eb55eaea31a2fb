"""rmq-proxy.json: ProxyConfig's keys, unknown keys logged by name, refused settings."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rocketq.errors import ConfigError
from rocketq.proxy.config import ProxyConfig


def write(tmp_path: Path, data: dict[str, object]) -> Path:
    path = tmp_path / "rmq-proxy.json"
    path.write_text(json.dumps(data))
    return path


def test_known_keys_load_and_unknown_ones_are_logged_by_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path,
        {
            "grpcServerPort": 18081,
            "rocketMQClusterName": "C1",
            "namesrvAddr": "127.0.0.1:9876",
            "enableTopicMessageTypeCheck": "false",
            "grpcMaxInboundMessageSize": 1024,
            "topicRouteServiceCacheRefreshSeconds": 5,
            "remotingListenPort": 8080,
        },
    )
    with caplog.at_level(logging.WARNING):
        config = ProxyConfig.from_file(path)
    assert config.grpc_server_port == 18081
    assert config.rocketmq_cluster_name == "C1"
    assert config.namesrv_addr == "127.0.0.1:9876"
    assert config.enable_topic_message_type_check is False
    assert config.grpc_max_inbound_message_size_bytes == 1024
    assert config.topic_route_service_cache_refresh_s == 5
    assert "remotingListenPort" in caplog.text


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"tlsTestModeEnable": True}, "tlsTestModeEnable"),
        ({"tlsCertPath": "/x.crt"}, "together"),
        ({"authenticationEnabled": True}, "aclEnable"),
        ({"grpcServerPort": "eighty"}, "grpcServerPort"),
        ({"topicRouteServiceCacheRefreshSeconds": 0}, "topicRouteServiceCacheRefreshSeconds"),
    ],
)
def test_refused_settings_stop_the_start_with_the_key(
    tmp_path: Path, data: dict[str, object], reason: str
) -> None:
    with pytest.raises(ConfigError, match=reason):
        ProxyConfig.from_file(write(tmp_path, data))


def test_defaults_are_javas() -> None:
    config = ProxyConfig()
    assert config.grpc_server_port == 8081
    assert config.enable_topic_message_type_check
    assert config.max_message_size_bytes == 4 * 1024 * 1024
    assert not config.tls_enabled
