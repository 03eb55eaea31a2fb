"""mqadmin's maintenance and export commands against a real name server and broker:
getNamesrvConfig/updateNamesrvConfig, updateTopicPerm, updateOrderConf, skipAccumulatedMessage,
cloneGroupOffset, resetOffsetByTime -b -q -o, getConsumerConfig, queryCq, allocateMQ,
exportMetadata and exportConfigs."""

from __future__ import annotations

import json
from pathlib import Path

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.common.message import MessageQueue
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import FAST_CLIENT, Cluster
from rocketq.testing.wait import until


def _committed(cluster: Cluster, group: str, topic: str, queue_id: int) -> int:
    return cluster.broker.consumer_offset_manager.query_offset(group, topic, queue_id)


async def _topic_with_messages(cluster: Cluster, topic: str, count: int) -> None:
    await cluster.create_topic(topic, 1)
    async with Producer("MaintProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(count):
            await producer.send(Message(topic, f"m{i}".encode()))
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 10)


async def test_namesrv_config_is_read_and_changed(cluster: Cluster) -> None:
    before = json.loads(ok(await run(cluster, "getNamesrvConfig", "--json")))
    [(addr, config)] = before.items()
    assert config["orderMessageEnable"] == "false"
    ok(await run(cluster, "updateNamesrvConfig", "-k", "orderMessageEnable", "-v", "true"))
    after = json.loads(ok(await run(cluster, "getNamesrvConfig", "--json")))
    assert after[addr]["orderMessageEnable"] == "true"
    refused = await run(cluster, "updateNamesrvConfig", "-k", "kvConfigPath", "-v", "/x")
    assert refused.exit_code == 1


async def test_topic_perm_and_order_conf_change(cluster: Cluster) -> None:
    await cluster.create_topic("PermTopic", 2)
    ok(await run(cluster, "updateTopicPerm", "-c", "DefaultCluster", "-t", "PermTopic", "-p", "4"))
    config = cluster.broker.topic_config_manager.select_topic_config("PermTopic")
    assert config is not None
    assert config.perm == 4
    missing = await run(cluster, "updateTopicPerm", "-c", "DefaultCluster", "-t", "No", "-p", "6")
    assert missing.exit_code == 1
    put = ok(
        await run(cluster, "updateOrderConf", "-t", "PermTopic", "-m", "put", "-v", "broker-a:2")
    )
    assert "orderConf=broker-a:2" in put
    got = ok(await run(cluster, "updateOrderConf", "-t", "PermTopic"))
    assert "orderConf=broker-a:2" in got
    gone = ok(await run(cluster, "updateOrderConf", "-t", "PermTopic", "-m", "delete"))
    assert gone.strip().endswith("orderConf=")


async def test_offsets_skip_clone_and_reset_one_queue(cluster: Cluster) -> None:
    await _topic_with_messages(cluster, "SkipTopic", 5)
    mq = MessageQueue("SkipTopic", "broker-a", 0)
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.update_consume_offset(cluster.broker_addr, "SkipGroup", mq, 1)
    ok(await run(cluster, "skipAccumulatedMessage", "-g", "SkipGroup", "-t", "SkipTopic"))
    assert _committed(cluster, "SkipGroup", "SkipTopic", 0) == 5
    cloned = ok(
        await run(cluster, "cloneGroupOffset", "-s", "SkipGroup", "-d", "Clone", "-t", "SkipTopic")
    )
    assert "clone group offset success" in cloned
    assert _committed(cluster, "Clone", "SkipTopic", 0) == 5
    argv = ["-g", "Clone", "-t", "SkipTopic", "-s", "now", "-b", cluster.broker_addr, "-q", "0"]
    ok(await run(cluster, "resetOffsetByTime", *argv, "-o", "2"))
    assert _committed(cluster, "Clone", "SkipTopic", 0) == 2


async def test_queue_and_group_views(cluster: Cluster) -> None:
    await _topic_with_messages(cluster, "CqTopic", 3)
    units = ok(await run(cluster, "queryCq", "-t", "CqTopic", "-q", "0", "-i", "0", "-c", "5"))
    assert len(units.splitlines()) == 3
    assert all(line.startswith("phyOffset=") for line in units.splitlines())
    ok(await run(cluster, "updateSubGroup", "-c", "DefaultCluster", "-g", "ViewGroup", "-r", "7"))
    config = json.loads(ok(await run(cluster, "getConsumerConfig", "-g", "ViewGroup", "--json")))
    assert config["broker-a"]["retryMaxTimes"] == 7
    await cluster.create_topic("AllocTopic", 4)
    plan = json.loads(
        ok(
            await run(
                cluster, "allocateMQ", "-t", "AllocTopic", "-i", "10.0.0.2,10.0.0.1", "--json"
            )
        )
    )
    assert [q["queueId"] for q in plan["10.0.0.1"]] == [0, 1]
    assert [q["queueId"] for q in plan["10.0.0.2"]] == [2, 3]


async def test_exports_write_mqadmins_files(cluster: Cluster, tmp_path: Path) -> None:
    await cluster.create_topic("ExportTopic", 3)
    out = tmp_path / "export"
    ok(await run(cluster, "exportMetadata", "-c", "DefaultCluster", "-f", str(out)))
    metadata = json.loads((out / "metadata.json").read_text())
    assert metadata["topicConfigTable"]["ExportTopic"]["writeQueueNums"] == 3
    assert "SCHEDULE_TOPIC_XXXX" not in metadata["topicConfigTable"]  # -s adds system topics
    assert metadata["exportTime"] > 0
    ok(await run(cluster, "exportMetadata", "-b", cluster.broker_addr, "-t", "-s", "-f", str(out)))
    topics = json.loads((out / "topic.json").read_text())["topicConfigTable"]
    assert "ExportTopic" in topics
    assert "SCHEDULE_TOPIC_XXXX" in topics
    ok(await run(cluster, "exportConfigs", "-c", "DefaultCluster", "-f", str(out)))
    configs = json.loads((out / "configs.json").read_text())
    assert configs["clusterScale"] == {
        "namesrvSize": 1,
        "masterBrokerSize": 1,
        "slaveBrokerSize": 0,
    }
    assert configs["brokerConfigs"]["broker-a"]["brokerName"] == "broker-a"


async def test_send_latency_commands_time_real_sends(cluster: Cluster) -> None:
    await cluster.create_topic("RtTopic", 2)
    rt = json.loads(ok(await run(cluster, "checkMsgSendRT", "-t", "RtTopic", "-a", "4", "--json")))
    assert [(s["queueId"], s["ok"]) for s in rt["sends"]] == [(0, True), (1, True)] * 2
    assert rt["avgRtMs"] > 0
    status = ok(await run(cluster, "sendMsgStatus", "-b", "broker-a", "-c", "3", "-s", "16"))
    assert len(status.splitlines()) == 3
    assert all(line.startswith("rt=") and "SEND_OK" in line for line in status.splitlines())
    table = ok(await run(cluster, "clusterRT", "-a", "2", "-c", "DefaultCluster")).splitlines()
    assert table[1].split()[:2] == ["DefaultCluster", "broker-a"]
    assert table[1].split()[3:5] == ["2", "0"]
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 10)  # the queue is read next
    stored = store.get_max_offset_in_queue("broker-a", 0)
    assert stored == 3 + 1 + 2  # sendMsgStatus warms up with one more send


async def test_print_msg_by_queue_prints_and_counts_by_tag(cluster: Cluster) -> None:
    await cluster.create_topic("ByQueue", 1)
    async with Producer("MaintProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for tags in ("TagA", "TagB", "TagA"):
            await producer.send(Message("ByQueue", tags.encode(), tags=tags))
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 10)
    argv = ["printMsgByQueue", "-t", "ByQueue", "-a", "broker-a", "-i", "0"]
    counted = ok(await run(cluster, *argv, "-f", "true")).splitlines()
    assert [line.split() for line in counted] == [
        ["Tag:", "TagA", "Count:", "2"],
        ["Tag:", "TagB", "Count:", "1"],
    ]
    printed = json.loads(ok(await run(cluster, *argv, "-p", "true", "-s", "TagB", "--json")))
    assert [m["Tags"] for m in printed] == ["[TagB]"]
    assert ok(await run(cluster, *argv)) == ""


async def test_topic_and_group_lists_from_a_file(cluster: Cluster, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(
        json.dumps(
            [
                {"topicName": "ListA", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6},
                {"topicName": "ListB", "readQueueNums": 3, "writeQueueNums": 3, "perm": 4},
            ]
        )
    )
    done = ok(await run(cluster, "updateTopicList", "-c", "DefaultCluster", "-f", str(topics)))
    assert f"to {cluster.broker_addr} success" in done
    manager = cluster.broker.topic_config_manager
    b = manager.select_topic_config("ListB")
    assert b is not None
    assert (b.write_queue_nums, b.perm) == (3, 4)
    assert manager.select_topic_config("ListA") is not None
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps([{"groupName": "ListGroup", "retryMaxTimes": 3}]))
    ok(await run(cluster, "updateSubGroupList", "-b", cluster.broker_addr, "-f", str(groups)))
    table = cluster.broker.subscription_group_manager.subscription_group_table
    assert table["ListGroup"].retry_max_times == 3
    groups.write_text("{}")
    bad = await run(cluster, "updateSubGroupList", "-b", cluster.broker_addr, "-f", str(groups))
    assert bad.exit_code == 2
    assert "no JSON array" in bad.output


async def test_export_metrics_writes_each_masters_quota_and_the_totals(
    cluster: Cluster, tmp_path: Path
) -> None:
    await _topic_with_messages(cluster, "MetricsTopic", 2)
    ok(await run(cluster, "exportMetrics", "-c", "DefaultCluster", "-f", str(tmp_path)))
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    quota = metrics["evaluateReport"]["broker-a"]["runtimeQuota"]
    assert quota["topicSize"] >= 1
    assert quota["tps"]["normalInTps"] >= 0.0
    assert set(quota["oneDayNum"]) == {
        "normalOneDayInNum",
        "normalOneDayOutNum",
        "transOneDayInNum",
        "scheduleOneDayInNum",
    }
    totals = metrics["totalData"]["totalTps"]
    assert totals["totalNormalInTps"] == quota["tps"]["normalInTps"]
    assert metrics["evaluateReport"]["broker-a"]["runtimeVersion"]["rocketmqVersion"]


async def test_broker_consume_stats_lists_every_groups_lag_on_the_broker(
    cluster: Cluster,
) -> None:
    await _topic_with_messages(cluster, "LagTopic", 4)
    mq = MessageQueue("LagTopic", "broker-a", 0)
    async with AsyncAdminClient(cluster.addr) as admin:
        await admin.update_consume_offset(cluster.broker_addr, "LagGroupA", mq, 1)
        await admin.update_consume_offset(cluster.broker_addr, "LagGroupB", mq, 3)
    argv = ["brokerConsumeStats", "-b", cluster.broker_addr, "--json"]
    rows = json.loads(ok(await run(cluster, *argv)))
    lag = {(r["Topic"], r["Group"]): r["Diff"] for r in rows}
    assert lag == {("LagTopic", "LagGroupA"): 3, ("LagTopic", "LagGroupB"): 1}
    rows = json.loads(ok(await run(cluster, *argv, "-l", "2")))
    assert [r["Group"] for r in rows] == ["LagGroupA"]
