from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from rocketq.broker import BrokerConfig
from rocketq.broker.config import BrokerRole
from rocketq.errors import ConfigError
from rocketq.store.config import parse_properties

STOCK_BROKER_CONF = """\
# Licensed to the Apache Software Foundation (ASF)
brokerClusterName = DefaultCluster
brokerName = broker-a
brokerId = 0
deleteWhen = 04
fileReservedTime = 48
brokerRole = ASYNC_MASTER
flushDiskType = ASYNC_FLUSH
listenPort=10921
namesrvAddr=127.0.0.1:9876;127.0.0.1:9877
storePathRootDir=/data/rocketmq/store
storePathCommitLog=/data/rocketmq/store/commitlog
autoCreateTopicEnable=false
defaultTopicQueueNums=4
"""


def test_defaults_match_rocketmq() -> None:
    c = BrokerConfig()
    assert c.listen_port == 10911
    assert c.broker_cluster_name == "DefaultCluster"
    assert c.broker_role is BrokerRole.ASYNC_MASTER
    assert c.default_topic_queue_nums == 8
    assert c.flush_consumer_offset_interval_ms == 5000
    assert c.register_name_server_period_ms == 30000
    assert c.channel_expired_timeout_ms == 120_000


def test_stock_broker_conf_loads_broker_keys_and_passes_store_keys_through(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(STOCK_BROKER_CONF)
    c = BrokerConfig.from_file(conf)
    assert c.listen_port == 10921
    assert c.broker_name == "broker-a"
    assert c.auto_create_topic_enable is False
    assert c.default_topic_queue_nums == 4
    assert c.namesrv_addr_list == ["127.0.0.1:9876", "127.0.0.1:9877"]
    assert c.store_path_root_dir == "/data/rocketmq/store"
    assert c.store_properties["flushDiskType"] == "ASYNC_FLUSH"
    assert c.store_properties["storePathCommitLog"] == "/data/rocketmq/store/commitlog"
    assert c.store_properties["fileReservedTime"] == "48"


def test_unknown_key_is_warned_about_by_name(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        BrokerConfig.from_properties({"brokerName": "b", "noSuchKnob": "1"})
    assert "noSuchKnob" in caplog.text


def test_bad_values_raise_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="listenPort"):
        BrokerConfig.from_properties({"listenPort": "ten"})
    with pytest.raises(ConfigError, match="autoCreateTopicEnable"):
        BrokerConfig.from_properties({"autoCreateTopicEnable": "yes"})
    with pytest.raises(ConfigError, match="role"):
        BrokerConfig.from_properties({"brokerRole": "LEADER"})
    with pytest.raises(ConfigError):
        BrokerConfig(listen_port=70000)


def test_overrides_win_over_the_file_and_config_is_frozen() -> None:
    c = BrokerConfig.from_properties({"listenPort": "1"}, listen_port=0)
    assert c.listen_port == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.listen_port = 5  # type: ignore[misc]


def test_values_with_trailing_blanks_and_escapes_load() -> None:
    props = parse_properties(
        "listenPort = 10921  \nbrokerName=b\\u0031\nautoCreateTopicEnable=true \n"
    )
    c = BrokerConfig.from_properties(props)
    assert (c.listen_port, c.broker_name, c.auto_create_topic_enable) == (10921, "b1", True)


def test_replication_keys_of_a_stock_slave_conf_reach_the_broker_and_the_store() -> None:
    from rocketq.store.config import StoreConfig

    text = (
        "brokerName=broker-a\nbrokerId=1\nbrokerRole=SLAVE\nslaveReadEnable=true\n"
        "haListenPort=20912\nhaSendHeartbeatInterval=1000\nhaHousekeepingInterval=9000\n"
        "haMasterAddress=10.0.0.1:10912\naccessMessageInMemoryMaxRatio=30\n"
    )
    c = BrokerConfig.from_properties(parse_properties(text))
    assert c.broker_role is BrokerRole.SLAVE
    assert c.broker_id == 1
    assert c.slave_read_enable is True
    store, unknown = StoreConfig.from_properties(c.store_properties)
    assert unknown == {}
    assert store.broker_role is BrokerRole.SLAVE
    assert store.ha_listen_port == 20912
    assert store.ha_send_heartbeat_interval_ms == 1000
    assert store.ha_housekeeping_interval_ms == 9000
    assert store.ha_master_address == "10.0.0.1:10912"
    assert store.access_message_in_memory_max_ratio == 30


# distribution/conf/controller/quick-start/broker-n0.conf of RocketMQ 5, its keys unchanged
QUICK_START_BROKER_N0 = """\
brokerClusterName = DefaultCluster
brokerName = broker-a
brokerId = -1
brokerRole = SLAVE
deleteWhen = 04
fileReservedTime = 48
enableControllerMode = true
controllerAddr = 127.0.0.1:9878
namesrvAddr = 127.0.0.1:9876
allAckInSyncStateSet=true
listenPort=30911
storePathRootDir=/tmp/rmqstore/node00
storePathCommitLog=/tmp/rmqstore/node00/commitlog
"""


def test_rocketmqs_controller_quick_start_broker_conf_loads(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        cfg = BrokerConfig.from_properties(parse_properties(QUICK_START_BROKER_N0))
    assert not caplog.records  # every key known
    assert cfg.enable_controller_mode
    assert cfg.controller_addr_list == ["127.0.0.1:9878"]
    assert cfg.broker_id == -1  # the controller assigns it
    assert cfg.broker_identity_path == "/tmp/rmqstore/node00/brokerIdentity"
    assert cfg.store_properties["enableControllerMode"] == "true"
    assert cfg.store_properties["allAckInSyncStateSet"] == "true"


def test_controller_mode_keys_are_honoured_by_name() -> None:
    props = {
        "enableControllerMode": "true",
        "controllerAddr": "127.0.0.1:9878; 127.0.0.1:9868;127.0.0.1:9858",
        "brokerHeartbeatInterval": "500",
        "controllerHeartBeatTimeoutMills": "3000",
        "brokerElectionPriority": "2",
        "syncBrokerMetadataPeriod": "2000",
        "checkSyncStateSetPeriod": "1000",
        "syncControllerMetadataPeriod": "4000",
        "storePathBrokerIdentity": "/data/id",
        "inSyncReplicas": "2",
        "minInSyncReplicas": "2",
        "haMaxTimeSlaveNotCatchup": "5000",
        "asyncLearner": "true",
    }
    cfg = BrokerConfig.from_properties(props)
    assert cfg.controller_addr_list == ["127.0.0.1:9878", "127.0.0.1:9868", "127.0.0.1:9858"]
    assert (cfg.broker_heartbeat_interval_ms, cfg.controller_heart_beat_timeout_ms) == (500, 3000)
    assert cfg.broker_election_priority == 2
    assert cfg.sync_broker_metadata_period_ms == 2000
    assert cfg.check_sync_state_set_period_ms == 1000
    assert cfg.sync_controller_metadata_period_ms == 4000
    assert cfg.broker_identity_path == "/data/id"
    for key in ("inSyncReplicas", "minInSyncReplicas", "haMaxTimeSlaveNotCatchup", "asyncLearner"):
        assert cfg.store_properties[key] == props[key]  # the store's own keys


def test_controller_mode_without_controller_addr_is_refused() -> None:
    with pytest.raises(ConfigError, match="controllerAddr"):
        BrokerConfig.from_properties({"enableControllerMode": "true"})
    with pytest.raises(ConfigError, match="broker_heartbeat_interval_ms"):
        BrokerConfig.from_properties({"brokerHeartbeatInterval": "0"})
