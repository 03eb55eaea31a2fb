"""``rocketq admin`` failures: one line naming RocketMQ's response code (never a Python class
or "None"), the address that refused, and what is missing for a reset."""

from __future__ import annotations

from rocketq.admin import AsyncAdminClient
from rocketq.common.message import MessageQueue
from rocketq.testing.admin_cli import error_line, run
from rocketq.testing.cluster import Cluster


async def test_a_refusal_names_the_response_code_on_one_line(cluster: Cluster) -> None:
    line = error_line(await run(cluster, "topicRoute", "-t", "NoSuchTopic"))
    assert line.startswith("Error: TOPIC_NOT_EXIST: ")
    assert "NoSuchTopic" in line
    line = error_line(await run(cluster, "updateBrokerConfig", "-b", cluster.broker_addr,
                                "-k", "noSuchKey", "-v", "1"))  # fmt: skip
    assert line.startswith("Error: SYSTEM_ERROR: ")


async def test_broker_status_of_a_dead_address_blames_that_broker(cluster: Cluster) -> None:
    line = error_line(await run(cluster, "brokerStatus", "-b", "127.0.0.1:1"))
    assert "broker at 127.0.0.1:1" in line
    assert "connection refused" in line
    assert "name server" not in line


async def test_reset_offset_names_the_queues_without_a_committed_offset(cluster: Cluster) -> None:
    await cluster.create_topic("ResetTopic", 2)
    ok = await run(cluster, "updateSubGroup", "-b", cluster.broker_addr, "-g", "ResetGroup")
    assert ok.exit_code == 0, ok.output
    async with AsyncAdminClient(cluster.addr) as admin:
        mq = MessageQueue("ResetTopic", "broker-a", 0)
        await admin.update_consume_offset(cluster.broker_addr, "ResetGroup", mq, 0)
    line = error_line(
        await run(cluster, "resetOffsetByTime", "-g", "ResetGroup", "-t", "ResetTopic", "-s", "0")
    )
    assert "no committed offset on ResetTopic queue(s) broker-a:1," in line
    assert "broker-a:0" not in line
    assert "THe consumer group <ResetGroup> not exist" in line  # RocketMQ's own answer, quoted
