"""ControllerConfig: RocketMQ's sample files load, the group is numbered alike on every node,
and what RocketMQ's controller would refuse or ignore is refused or named."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rocketq.common.java_properties import parse_properties
from rocketq.controller.config import ControllerConfig, parse_peers
from rocketq.errors import ConfigError
from rocketq.namesrv.config import NamesrvConfig

# the keys of RocketMQ's distribution/conf/controller/cluster-3n-independent/controller-n1.conf
CLUSTER_3N_N1 = """
controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858
controllerDLegerSelfId = n1
"""

# distribution/conf/controller/cluster-3n-namesrv-plugin/namesrv-n0.conf opens with an XML
# comment, which java.util.Properties reads as keys: they must be named, not fatal
NAMESRV_PLUGIN_N0 = """<!--
  Licensed to the Apache Software Foundation (ASF) under one or more
  -->

listenPort = 9876
enableControllerInNamesrv = true

controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858
controllerDLegerSelfId = n0
"""


def test_a_cluster_3n_sample_file_loads_with_rocketmqs_defaults() -> None:
    config = ControllerConfig.from_properties(parse_properties(CLUSTER_3N_N1))
    assert config.controller_dleger_group == "group1"
    assert config.self_addr == "127.0.0.1:9868"
    assert config.raft_ids == {"n0": 1, "n1": 2, "n2": 3}
    assert config.self_raft_id == 2
    assert config.controller_type == "DLedger"
    assert config.scan_not_active_broker_interval_ms == 5_000
    assert config.enable_elect_unclean_master is False
    assert config.notify_broker_role_changed is True
    assert config.store_path == Path.home() / "DLedgerController"


def test_raft_ids_do_not_depend_on_the_order_peers_are_listed() -> None:
    listed = "n2-127.0.0.1:3;n0-127.0.0.1:1;n1-127.0.0.1:2"
    config = ControllerConfig(controller_dleger_peers=listed, controller_dleger_self_id="n2")
    assert config.raft_ids == {"n0": 1, "n1": 2, "n2": 3}


def test_every_controller_key_is_read_with_its_type() -> None:
    props = {
        "controllerDLegerGroup": "g",
        "controllerDLegerPeers": "a-10.0.0.1:9878",
        "controllerDLegerSelfId": "a",
        "controllerStorePath": "/data/controller",
        "controllerType": "DLedger",
        "scanNotActiveBrokerInterval": "500",
        "scanInactiveMasterInterval": "2000",
        "electMasterMaxRetryCount": "5",
        "enableElectUncleanMaster": "true",
        "notifyBrokerRoleChanged": "false",
        "configStorePath": "/data/controller.properties",
    }
    config = ControllerConfig.from_properties(props)
    assert (config.scan_not_active_broker_interval_ms, config.scan_inactive_master_interval_ms) == (
        500,
        2000,
    )
    assert config.elect_master_max_retry_count == 5
    assert config.enable_elect_unclean_master is True
    assert config.notify_broker_role_changed is False
    assert config.store_path == Path("/data/controller")
    assert config.config_store_path == "/data/controller.properties"


def test_jraft_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError) as refused:
        ControllerConfig.from_properties({"controllerType": "jRaft"})
    assert "jRaft is not supported" in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("props", "reason"),
    [
        ({"scanNotActiveBrokerInterval": "soon"}, "expected an integer"),
        ({"enableElectUncleanMaster": "yes"}, "expected true or false"),
        ({"controllerDLegerPeers": "n0:127.0.0.1", "controllerDLegerSelfId": "n0"}, "id-host:port"),
        ({"controllerDLegerPeers": "n0-h:1;n0-h:2", "controllerDLegerSelfId": "n0"}, "twice"),
        ({"controllerDLegerPeers": "n0-h:1", "controllerDLegerSelfId": "n9"}, "not one of"),
        ({"controllerType": "ZooKeeper"}, "only DLedger"),
    ],
)
def test_bad_values_are_refused_naming_the_key(props: dict[str, str], reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        ControllerConfig.from_properties(props)


def test_unknown_keys_are_warned_about_by_name_and_java_only_keys_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        ControllerConfig.from_properties({"controllerThreadPoolNums": "16", "typoKey": "1"})
    assert "unknown key 'typoKey'" in caplog.text
    assert "controllerThreadPoolNums has no effect" in caplog.text


def test_the_namesrv_plugin_sample_file_configures_both_servers() -> None:
    props = parse_properties(NAMESRV_PLUGIN_N0)
    namesrv = NamesrvConfig.from_properties(props)
    assert namesrv.listen_port == 9876
    assert namesrv.enable_controller_in_namesrv is True
    controller = ControllerConfig.from_properties(props, warn_unknown=False)
    assert controller.self_addr == "127.0.0.1:9878"


def test_parse_peers_keeps_each_address() -> None:
    assert parse_peers(" n0-127.0.0.1:9878 ; n1-localhost:9868 ;") == {
        "n0": "127.0.0.1:9878",
        "n1": "localhost:9868",
    }
