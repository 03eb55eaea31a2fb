"""Typed topics and groups through ``rocketq admin`` and the broker: updateTopic ``-a``
(mqadmin 5.x) stores RocketMQ 5's attributes, topicStatus and ``topicList -c`` show the
message type, the broker refuses what RocketMQ 5 refuses with its code and remark, and
updateSubGroup's ``-o``, ``-r``, ``-p`` and ``--attributes`` reach the group."""

from __future__ import annotations

import json

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin import admin
from rocketq.common.attribute import TopicMessageType, parse_to_map
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import BrokerResponseError
from rocketq.response_code import ResponseCode
from rocketq.testing.admin_cli import error_line, ok, run
from rocketq.testing.cluster import Cluster


def stored(cluster: Cluster, topic: str) -> TopicConfig:
    return cluster.broker.topic_config_manager.topic_config_table[topic]


async def test_update_topic_a_sets_changes_and_shows_the_message_type(cluster: Cluster) -> None:
    ok(await run(cluster, "updateTopic", "-c", "DefaultCluster", "-t", "Orders", "-r", "2",
                 "-w", "2", "-a", "+message.type=FIFO,+reserve.time=72"))  # fmt: skip
    assert stored(cluster, "Orders").attributes == {"message.type": "FIFO", "reserve.time": "72"}
    status = ok(await run(cluster, "topicStatus", "-t", "Orders")).splitlines()
    assert status[0].split()[-2:] == ["#Message", "Type"]
    assert [line.split()[-1] for line in status[1:]] == ["FIFO", "FIFO"]
    rows = json.loads(ok(await run(cluster, "topicStatus", "-t", "Orders", "--json")))
    assert {r["Message Type"] for r in rows} == {"FIFO"}
    listed = json.loads(ok(await run(cluster, "topicList", "-c", "--json")))
    assert {"Cluster Name": "DefaultCluster", "Topic": "Orders", "Consumer Group": "",
            "Message Type": "FIFO"} in listed  # fmt: skip

    # a change keeps the queues given and the other attributes; -key deletes
    ok(await run(cluster, "updateTopic", "-b", cluster.broker_addr, "-t", "Orders", "-r", "2",
                 "-w", "2", "-a", "+message.type=DELAY,-reserve.time"))  # fmt: skip
    assert stored(cluster, "Orders").attributes == {"message.type": "DELAY"}
    ok(await run(cluster, "updateTopic", "-c", "DefaultCluster", "-t", "Orders", "-r", "4",
                 "-w", "4"))  # fmt: skip
    assert stored(cluster, "Orders").topic_message_type is TopicMessageType.DELAY
    assert stored(cluster, "Orders").write_queue_nums == 4


async def test_the_broker_refuses_attributes_with_rocketmqs_code_and_remark(
    cluster: Cluster,
) -> None:
    async def refused(topic: str, change: str) -> str:
        args = ["-c", "DefaultCluster", "-t", topic, "-a", change]
        return error_line(await run(cluster, "updateTopic", *args))

    assert await refused("T1", "+color=red") == "Error: SYSTEM_ERROR: unsupported key: color"
    line = await refused("T1", "+queue.type=BatchCQ")
    assert line.startswith("Error: SYSTEM_ERROR: queue.type=BatchCQ is not supported by rocketq")
    line = await refused("T1", "+cleanup.policy=COMPACTION")
    assert "cleanup.policy=COMPACTION is not supported by rocketq, only DELETE" in line
    line = await refused("T1", "+message.type=MIXED")
    assert line == "Error: INVALID_PARAMETER: MIXED message type is not supported."
    assert "T1" not in cluster.broker.topic_config_manager.topic_config_table

    ok(await run(cluster, "updateTopic", "-c", "DefaultCluster", "-t", "T2",
                 "-a", "+queue.type=SimpleCQ,+cleanup.policy=DELETE"))  # fmt: skip
    line = await refused("T2", "+queue.type=SimpleCQ")
    assert line.endswith("attempt to update an unchangeable attribute. key: queue.type")
    line = await refused("T2", "-cleanup.policy")
    assert line.endswith("attempt to update an unchangeable attribute. key: cleanup.policy")
    assert (await refused("T2", "-reserve.time")).endswith(
        "attempt to delete a nonexistent key: reserve.time"
    )
    bad = await run(cluster, "updateTopic", "-c", "DefaultCluster", "-t", "T2", "-a", "queue")
    assert bad.exit_code == 2
    assert "delete attribute format is wrong: queue" in bad.output

    # the admin library sends the same change (DefaultMQAdminExt: signed keys in attributes)
    async with AsyncAdminClient(cluster.addr) as admin:
        change = TopicConfig(topic_name="T2", attributes=parse_to_map("+message.type=UNKNOWN"))
        with pytest.raises(BrokerResponseError) as refused:
            await admin.create_and_update_topic_config(cluster.broker_addr, change)
        assert refused.value.response_code == ResponseCode.SYSTEM_ERROR
        assert (refused.value.remark or "").startswith("value is not in set: [")
        typed = await admin.examine_topic_config(cluster.broker_addr, "T2")
        assert typed is not None
        assert typed.attributes == {"cleanup.policy": "DELETE", "queue.type": "SimpleCQ"}


async def test_update_sub_group_sets_orderly_retry_times_and_retry_policy(
    cluster: Cluster,
) -> None:
    policy = '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}'
    ok(await run(cluster, "updateSubGroup", "-c", "DefaultCluster", "-g", "FifoGroup", "-o",
                 "true", "-r", "3", "-p", policy, "-a", "false"))  # fmt: skip
    async with AsyncAdminClient(cluster.addr) as admin:
        wrapper = await admin.get_all_subscription_group(cluster.broker_addr)
    group = wrapper.subscription_group_table["FifoGroup"]
    assert group.orderly
    assert group.retry_max_times == 3
    assert group.notify_consumer_ids_changed_enable is False  # -a stays notifyConsumerIdsChanged
    assert group.group_retry_policy is not None
    assert group.retry_policy.next_delay_duration_ms(5) == 5000

    line = error_line(await run(cluster, "updateSubGroup", "-c", "DefaultCluster", "-g",
                                "FifoGroup", "--attributes", "+x=1"))  # fmt: skip
    assert line == "Error: SYSTEM_ERROR: unsupported key: x"
    bad = await run(cluster, "updateSubGroup", "-b", cluster.broker_addr, "-g", "G", "-p", "{")
    assert bad.exit_code == 2
    assert "not a retry policy" in bad.output
    plain = ok(await run(cluster, "updateSubGroup", "-b", cluster.broker_addr, "-g", "Plain"))
    assert "success" in plain
    table = cluster.broker.subscription_group_manager.subscription_group_table
    assert table["Plain"].consume_message_orderly is None  # RocketMQ 4's shape kept


def test_update_topic_and_update_sub_group_take_mqadmin_5s_options() -> None:
    def options(command: str) -> dict[str, list[str]]:
        return {p.name or "": p.opts for p in admin.commands[command].params}

    assert options("updateTopic")["attributes"] == ["-a", "--attributes"]
    group = options("updateSubGroup")
    assert group["orderly"] == ["-o", "--consumeMessageOrderly"]
    assert group["retry_max"] == ["-r", "--retryMaxTimes"]
    assert group["retry_policy"] == ["-p", "--groupRetryPolicy"]
    assert group["attributes"] == ["--attributes"]
    assert group["notify"] == ["-a", "--notifyConsumerIdsChanged"]
