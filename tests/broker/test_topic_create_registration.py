"""A topic create registers only its topics (registerIncrementBrokerData): the registration
body does not grow with the table, and the name server routes the topic once the create is
answered. UPDATE_AND_CREATE_TOPIC_LIST (18) creates a batch in one request."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import BrokerResponseError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import Cluster, run_cluster


def topic(name: str, queues: int = 8) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues)


async def routed(cluster: Cluster, name: str) -> bool:
    request = RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": name})
    response = await cluster.client.invoke(cluster.addr, request, 5.0)
    return response.code == ResponseCode.SUCCESS


async def test_a_create_registers_the_same_body_at_3000_topics_as_at_10(tmp_path: Path) -> None:
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        api = cluster.broker.outer_api
        await admin.create_and_update_topic_config(cluster.broker_addr, topic("Probe0001"))
        small = list(api.last_register_body_sizes)
        assert await routed(cluster, "Probe0001")
        manager = cluster.broker.topic_config_manager
        manager.update_topic_config_list(topic(f"Fill{i:05d}") for i in range(3000))
        await admin.create_and_update_topic_config(cluster.broker_addr, topic("Probe0002"))
        assert api.last_register_body_sizes == small
        assert await routed(cluster, "Probe0002")  # answered means routed
        assert not await routed(cluster, "Fill00000")  # never registered: not in the body


async def test_a_topic_list_is_created_in_one_request_and_routed(tmp_path: Path) -> None:
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        configs = [topic("BatchA", 2), topic("BatchB", 3)]
        await admin.create_and_update_topic_config_list(cluster.broker_addr, configs)
        table = cluster.broker.topic_config_manager.topic_config_table
        assert (table["BatchA"].write_queue_nums, table["BatchB"].write_queue_nums) == (2, 3)
        assert await routed(cluster, "BatchA")
        assert await routed(cluster, "BatchB")
        assert len(cluster.broker.outer_api.last_register_body_sizes) == 1
        typed = TopicConfig(
            topic_name="BatchFifo",
            read_queue_nums=1,
            write_queue_nums=1,
            attributes={"+message.type": "FIFO"},
        )
        await admin.create_and_update_topic_config_list(cluster.broker_addr, [typed])
        assert table["BatchFifo"].attributes == {"message.type": "FIFO"}


async def test_one_bad_name_refuses_the_whole_list(tmp_path: Path) -> None:
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        with pytest.raises(BrokerResponseError) as refused:
            await admin.create_and_update_topic_config_list(
                cluster.broker_addr, [topic("GoodOne"), topic("bad name!")]
            )
        assert refused.value.code == ResponseCode.SYSTEM_ERROR
        assert "GoodOne" not in cluster.broker.topic_config_manager.topic_config_table


async def test_split_registration_keys_of_broker_conf_are_honoured(tmp_path: Path) -> None:
    async with run_cluster(
        tmp_path, enable_split_registration=True, split_registration_size=4
    ) as cluster:
        cluster.broker.topic_config_manager.update_topic_config_list(
            topic(f"Split{i}") for i in range(10)
        )
        await cluster.broker.register_broker_all()
        sizes = cluster.broker.outer_api.last_register_body_sizes
        table = cluster.broker.topic_config_manager.topic_config_table
        assert len(sizes) == len(table) // 4 + 1
        assert await routed(cluster, "Split9")


async def test_a_topic_a_send_creates_registers_alone(tmp_path: Path) -> None:
    """register_broker_all_soon (auto-create, retry and DLQ topics) sends only the topics
    created since the last registration (TopicConfigManager.registerBrokerData)."""
    async with run_cluster(tmp_path) as cluster:
        manager = cluster.broker.topic_config_manager
        manager.update_topic_config_list(topic(f"Quiet{i:05d}") for i in range(2000))
        await cluster.broker.register_broker_all()
        full = sum(cluster.broker.outer_api.last_register_body_sizes)
        manager.create_topic_in_send_message_back_method("%RETRY%SoonGroup", 1)
        cluster.broker.register_broker_all_soon()
        task = cluster.broker._register_task
        assert task is not None
        await task
        sizes = cluster.broker.outer_api.last_register_body_sizes
        assert len(sizes) == 1
        assert sizes[0] * 100 < full
        assert await routed(cluster, "%RETRY%SoonGroup")


async def test_the_periodic_registration_sends_the_table_only_to_a_name_server_behind(
    tmp_path: Path,
) -> None:
    """forceRegister=false (rocketq's default): the 30 s registration asks QUERY_DATA_VERSION
    first (BrokerOuterAPI.needRegister); a name server that has the table's version (every
    create registered its increment) only has the broker's liveness refreshed."""
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        broker, api = cluster.broker, cluster.broker.outer_api
        await admin.create_and_update_topic_config(cluster.broker_addr, topic("Current"))
        increment = list(api.last_register_body_sizes)
        live = cluster.namesrv.route_info_manager.broker_live_table[cluster.broker_addr]
        live.last_update_timestamp = 0
        await broker._register_periodically()
        assert api.last_register_body_sizes == increment  # no full registration
        assert live.last_update_timestamp > 0  # the query kept the broker alive
        # a change the name server never got (no increment): its version is behind
        broker.topic_config_manager.update_topic_config(topic("Unannounced"))
        assert not await routed(cluster, "Unannounced")
        await broker._register_periodically()  # its increment may be on its way: not yet
        assert api.last_register_body_sizes == increment
        await broker._register_periodically()  # still not there: never sent
        assert sum(api.last_register_body_sizes) > 5 * sum(increment)  # the whole table
        assert await routed(cluster, "Unannounced")


async def test_force_register_sends_the_table_every_period(tmp_path: Path) -> None:
    async with run_cluster(tmp_path, force_register=True) as cluster:
        api = cluster.broker.outer_api
        api.last_register_body_sizes = []
        await cluster.broker._register_periodically()
        assert api.last_register_body_sizes  # registered although nothing changed


async def test_a_name_server_that_lost_the_broker_gets_the_table_after_an_increment(
    tmp_path: Path,
) -> None:
    """A name server that forgot the broker (restarted, or expired it) and then receives a
    create's increment holds that topic only: the increment names its base version, which
    the name server does not hold, so the broker's version there stays unknown and the next
    periodic round sends the whole table (without the base it would look current forever)."""
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        broker = cluster.broker
        await admin.create_and_update_topic_config(cluster.broker_addr, topic("Before"))
        assert await routed(cluster, "Before")
        cluster.namesrv.route_info_manager.unregister_broker(
            cluster_name=broker.config.broker_cluster_name,
            broker_addr=cluster.broker_addr,
            broker_name=broker.config.broker_name,
            broker_id=0,
        )
        await admin.create_and_update_topic_config(cluster.broker_addr, topic("After"))
        assert await routed(cluster, "After")
        assert not await routed(cluster, "Before")
        await broker._register_periodically()
        assert await routed(cluster, "Before")


async def test_consecutive_creates_chain_and_leave_the_name_server_current(
    tmp_path: Path,
) -> None:
    async with run_cluster(tmp_path) as cluster, AsyncAdminClient(cluster.addr) as admin:
        api = cluster.broker.outer_api
        for name in ("ChainA", "ChainB", "ChainC"):
            await admin.create_and_update_topic_config(cluster.broker_addr, topic(name))
        api.last_register_body_sizes = []
        await cluster.broker._register_periodically()
        assert api.last_register_body_sizes == []  # every increment chained on the last
