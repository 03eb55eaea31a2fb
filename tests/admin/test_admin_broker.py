"""AdminClient against a real name server and broker: name-server calls, topics,
subscription groups, runtime info and broker config (get, update, refusals)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from rocketq.admin import AdminClient, AsyncAdminClient
from rocketq.broker.config import BrokerConfig
from rocketq.common.topic_config import PERM_READ, TopicConfig
from rocketq.errors import BrokerResponseError, ClientError, NoPermissionError, TopicNotExistError
from rocketq.remoting.protocol.group_bodies import (
    SubscriptionGroupConfig,
)
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import Cluster
from rocketq.testing.wait import until


async def test_topic_created_through_admin_is_routed_listed_and_deleted(cluster: Cluster) -> None:
    broker = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.create_and_update_topic_config(
            broker, TopicConfig(topic_name="AdminTopic", read_queue_nums=3, write_queue_nums=3)
        )
        route = await admin.examine_topic_route_info("AdminTopic")
        assert [(q.broker_name, q.write_queue_nums) for q in route.queue_datas] == [("broker-a", 3)]
        assert "AdminTopic" in await admin.fetch_all_topic_list()
        assert "AdminTopic" in await admin.fetch_topics_by_cluster("DefaultCluster")
        configs = await admin.get_all_topic_config(broker)
        assert configs.topic_config_table["AdminTopic"].read_queue_nums == 3
        info = await admin.examine_broker_cluster_info()
        assert info.cluster_addr_table["DefaultCluster"] == {"broker-a"}
        await admin.delete_topic_in_broker([broker], "AdminTopic")
        await admin.delete_topic_in_namesrv("AdminTopic")
        with pytest.raises(TopicNotExistError):
            await admin.examine_topic_route_info("AdminTopic")
        assert "AdminTopic" not in cluster.broker.topic_config_manager.topic_config_table


async def test_kv_config_put_get_list_and_delete(cluster: Cluster) -> None:
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.put_kv_config("ORDER_TOPIC_CONFIG", "OrderTopic", "broker-a:4")
        assert await admin.get_kv_config("ORDER_TOPIC_CONFIG", "OrderTopic") == "broker-a:4"
        assert await admin.get_kv_list_by_namespace("ORDER_TOPIC_CONFIG") == {
            "OrderTopic": "broker-a:4"
        }
        await admin.delete_kv_config("ORDER_TOPIC_CONFIG", "OrderTopic")
        assert await admin.get_kv_config("ORDER_TOPIC_CONFIG", "OrderTopic") is None
        assert await admin.get_kv_list_by_namespace("ORDER_TOPIC_CONFIG") == {}


async def test_wipe_and_add_write_perm_change_the_route(cluster: Cluster) -> None:
    await cluster.create_topic("PermTopic", 2)
    async with AsyncAdminClient(cluster.addr) as admin:
        wiped = await admin.wipe_write_perm_of_broker(cluster.addr, "broker-a")
        assert wiped >= 1
        route = await admin.examine_topic_route_info("PermTopic")
        assert route.queue_datas[0].perm == PERM_READ
        added = await admin.add_write_perm_of_broker(cluster.addr, "broker-a")
        assert added == wiped
        route = await admin.examine_topic_route_info("PermTopic")
        assert route.queue_datas[0].perm == 6


async def test_subscription_group_created_listed_and_deleted_with_its_offsets(
    cluster: Cluster,
) -> None:
    broker = cluster.broker.broker_addr
    cluster.broker.consumer_offset_manager.commit_offset("x", "GroupZ", "T", 0, 7)
    async with AsyncAdminClient(cluster.addr) as admin:
        cfg = SubscriptionGroupConfig(group_name="GroupZ", retry_max_times=3, consume_enable=False)
        await admin.create_and_update_subscription_group_config(broker, cfg)
        wrapper = await admin.get_all_subscription_group(broker)
        assert wrapper.subscription_group_table["GroupZ"] == cfg
        assert wrapper.data_version.counter >= 1
        on_disk = cluster.broker.subscription_group_manager.subscription_group_table["GroupZ"]
        assert on_disk.retry_max_times == 3
        await admin.delete_subscription_group(broker, "GroupZ", remove_offset=True)
        wrapper = await admin.get_all_subscription_group(broker)
    assert "GroupZ" not in wrapper.subscription_group_table
    assert cluster.committed("GroupZ", "T") == {}


async def test_runtime_info_and_broker_config_are_readable(cluster: Cluster) -> None:
    broker = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        runtime = await admin.fetch_broker_runtime_stats(broker)
        config = await admin.get_broker_config(broker)
        version = await admin.get_broker_config_version(broker)
    assert runtime["brokerName"] == "broker-a"
    assert config["brokerName"] == "broker-a"
    assert config["brokerClusterName"] == "DefaultCluster"
    assert config["autoCreateTopicEnable"] == "true"
    assert config["messageDelayLevel"] == " ".join(["1s"] * 18)
    assert set(version) == {"counter", "timestamp"}


async def test_broker_config_update_applies_and_bumps_the_version(cluster: Cluster) -> None:
    broker = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        before = await admin.get_broker_config_version(broker)
        await admin.update_broker_config(
            broker, {"autoCreateTopicEnable": "false", "defaultTopicQueueNums": "3"}
        )
        config = await admin.get_broker_config(broker)
        after = await admin.get_broker_config_version(broker)
    assert config["autoCreateTopicEnable"] == "false"
    assert config["defaultTopicQueueNums"] == "3"
    assert cluster.broker.config.auto_create_topic_enable is False
    assert after["counter"] == before["counter"] + 1


@pytest.mark.parametrize(
    ("props", "code", "names"),
    [
        ({"brokerConfigPath": "/x"}, ResponseCode.NO_PERMISSION, "black list"),
        ({"noSuchKey": "1"}, ResponseCode.SYSTEM_ERROR, "unknown broker config keys: noSuchKey"),
        ({"flushDiskType": "SYNC_FLUSH"}, ResponseCode.SYSTEM_ERROR, "flushDiskType"),
        ({"listenPort": "1"}, ResponseCode.SYSTEM_ERROR, "listenPort"),
        ({"defaultTopicQueueNums": "many"}, ResponseCode.SYSTEM_ERROR, "expected an integer"),
    ],
)
async def test_broker_config_update_that_cannot_apply_is_refused_and_changes_nothing(
    cluster: Cluster, props: dict[str, str], code: int, names: str
) -> None:
    broker = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        before = await admin.get_broker_config(broker)
        with pytest.raises(BrokerResponseError, match=names) as caught:
            await admin.update_broker_config(broker, {"autoCreateTopicEnable": "false", **props})
        assert caught.value.response_code == code
        assert await admin.get_broker_config(broker) == before
    if code == ResponseCode.NO_PERMISSION:
        assert isinstance(caught.value, NoPermissionError)


async def test_broker_permission_update_reregisters_a_read_only_route(cluster: Cluster) -> None:
    await cluster.create_topic("ReadOnlyTopic", 1)
    broker = cluster.broker.broker_addr
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.update_broker_config(broker, {"brokerPermission": str(PERM_READ)})
        route = await admin.examine_topic_route_info("ReadOnlyTopic")
    assert route.queue_datas[0].perm == PERM_READ


async def test_blocking_admin_client_answers_the_same_calls(cluster: Cluster) -> None:
    await cluster.create_topic("BlockingAdminTopic", 2)

    def run() -> tuple[set[str], dict[str, str]]:
        with AdminClient(cluster.addr) as admin:
            return (
                admin.fetch_all_topic_list(),
                admin.get_broker_config(cluster.broker.broker_addr),
            )

    topics, config = await asyncio.to_thread(run)
    assert "BlockingAdminTopic" in topics
    assert config["brokerName"] == "broker-a"


async def test_a_code_this_broker_does_not_serve_is_refused_with_its_number(
    cluster: Cluster,
) -> None:
    from rocketq.remoting.protocol.codes import RequestCode

    async with AsyncAdminClient(cluster.addr) as admin:
        with pytest.raises(BrokerResponseError, match="request type 223 not supported") as caught:
            await admin.call(
                cluster.broker.broker_addr, RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS
            )
    assert caught.value.response_code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert await until(lambda: True, 0.1)


async def test_cluster_wide_topic_create_and_delete_reach_every_master(cluster: Cluster) -> None:
    async with AsyncAdminClient(cluster.addr) as admin:
        masters = await admin.create_and_update_topic_config_in_cluster(
            "DefaultCluster", TopicConfig(topic_name="ClusterTopic", read_queue_nums=2)
        )
        assert masters == [cluster.broker.broker_addr]
        route = await admin.examine_topic_route_info("ClusterTopic")
        assert route.queue_datas[0].read_queue_nums == 2
        await admin.delete_topic("ClusterTopic", "DefaultCluster")
        with pytest.raises(TopicNotExistError):
            await admin.examine_topic_route_info("ClusterTopic")
        with pytest.raises(ClientError, match="NoCluster"):
            await admin.master_addrs_of_cluster("NoCluster")


async def test_a_config_update_is_written_to_the_brokers_file_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("# the operator's note stays\nbrokerName=broker-a\ndefaultTopicQueueNums=8\n")
    config = BrokerConfig.from_file(conf)
    assert config.broker_config_path == str(conf)
    async with run_namesrv() as ns:
        async with (
            run_broker(tmp_path / "store", namesrv_addr=ns.addr, config=config) as broker,
            AsyncAdminClient(ns.addr) as admin,
        ):
            await admin.update_broker_config(
                broker.broker_addr,
                {"defaultTopicQueueNums": "3", "autoCreateTopicEnable": "false"},
            )
        assert conf.read_text() == (
            "# the operator's note stays\nbrokerName=broker-a\ndefaultTopicQueueNums=3\n"
            "autoCreateTopicEnable=false\n"
        )
        assert "defaultTopicQueueNums=8" in conf.with_suffix(".conf.bak").read_text()
        restarted = BrokerConfig.from_file(conf)
        async with run_broker(tmp_path / "store", namesrv_addr=ns.addr, config=restarted) as again:
            assert again.config.default_topic_queue_nums == 3
            assert again.config.auto_create_topic_enable is False


async def test_a_config_update_that_cannot_be_written_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    gone = tmp_path / "gone" / "broker.conf"  # its directory does not exist
    config = dataclasses.replace(BrokerConfig(), broker_config_path=str(gone))
    async with (
        run_namesrv() as ns,
        run_broker(tmp_path / "store", namesrv_addr=ns.addr, config=config) as broker,
        AsyncAdminClient(ns.addr) as admin,
    ):
        with pytest.raises(BrokerResponseError, match=r"cannot write .*nothing changed"):
            await admin.update_broker_config(broker.broker_addr, {"defaultTopicQueueNums": "3"})
        assert broker.config.default_topic_queue_nums == 8
