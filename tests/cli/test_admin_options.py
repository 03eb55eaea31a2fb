"""``rocketq admin`` takes mqadmin's short options (every one RocketMQ 4.9.8's tools module
defines for the issue's commands) and each does what mqadmin's does, against a real name server,
broker and push consumer."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from rocketq.cli.admin import admin
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import FAST_CLIENT, Cluster, collecting_consumer
from rocketq.testing.wait import until

# The short options of each command in apache/rocketmq 4.9.8 tools/command/**/*.java
MQADMIN_4_9_8 = {
    "updateTopic": "b c t r w p o u s",
    "deleteTopic": "t c",
    "topicList": "c",
    "topicRoute": "t l",
    "topicStatus": "t",
    "topicClusterList": "t",
    "updateSubGroup": "b c g s m d q r i w a",
    "deleteSubGroup": "b c g r",
    "consumerProgress": "g s",
    "consumerConnection": "g b",
    "producerConnection": "g t",
    "consumerStatus": "g i b s",
    "queryMsgById": "i g d s u",
    "queryMsgByKey": "t k",
    "queryMsgByUniqueKey": "i g d t a",
    "queryMsgByOffset": "t b i o",
    "printMsg": "t c s b e d",
    "resetOffsetByTime": "g t s f",
    "clusterList": "m i",
    "brokerStatus": "b c",
    "getBrokerConfig": "b c",
    "updateBrokerConfig": "b c k v",
    "wipeWritePerm": "b",
    "addWritePerm": "b",
    "updateKvConfig": "s k v",
    "deleteKvConfig": "s k",
    "sendMessage": "t p k c b i m",
    "consumeMessage": "t b i o g s e c",
    "statsAll": "a t",
}


def test_every_command_takes_mqadmins_short_options() -> None:
    for name, letters in MQADMIN_4_9_8.items():
        command = admin.commands[name]
        shorts = {opt for p in command.params for opt in p.opts if re.fullmatch(r"-\w", opt)}
        wanted = {f"-{letter}" for letter in letters.split()} | {"-n"}
        assert wanted <= shorts, (name, sorted(wanted - shorts))


async def test_topic_options_list_route_filter_status_and_set_unit_flags(
    cluster: Cluster,
) -> None:
    ok(
        await run(
            cluster, "updateTopic", "-c", "DefaultCluster", "-t", "OptTopic", "-w", "3", "-r", "3"
        )
    )
    ok(
        await run(
            cluster,
            "updateTopic",
            "-b",
            cluster.broker.broker_addr,
            "-t",
            "Unit",
            "-u",
            "true",
            "-s",
            "true",
        )
    )
    unit = cluster.broker.topic_config_manager.select_topic_config("Unit")
    assert unit is not None
    assert unit.topic_sys_flag == 3
    table = ok(await run(cluster, "topicRoute", "-t", "OptTopic", "-l")).splitlines()
    assert table[0].split() == [
        "#ClusterName",
        "#BrokerName",
        "#BrokerAddrs",
        "#ReadQueue",
        "#WriteQueue",
        "#Perm",
    ]
    assert table[1].split() == [
        "DefaultCluster",
        "broker-a",
        f"{{0={cluster.broker.broker_addr}}}",
        "3",
        "3",
        "6",
    ]
    assert table[2].split() == ["Total:", "1", "3", "3"]
    status = ok(await run(cluster, "topicStatus", "-t", "OptTopic", "-c", "DefaultCluster"))
    assert len(status.splitlines()) == 4
    other = await run(cluster, "topicStatus", "-t", "OptTopic", "-c", "NoSuchCluster")
    assert other.exit_code == 1
    assert "no cluster named NoSuchCluster" in other.output


async def test_group_and_broker_options_reach_the_broker(cluster: Cluster) -> None:
    addr = cluster.broker.broker_addr
    ok(
        await run(
            cluster,
            "updateSubGroup",
            "-c",
            "DefaultCluster",
            "-g",
            "OptSub",
            "-i",
            "1",
            "-w",
            "2",
            "-a",
            "false",
        )
    )
    config = cluster.broker.subscription_group_manager.subscription_group_table["OptSub"]
    assert (config.broker_id, config.which_broker_when_consume_slowly) == (1, 2)
    assert config.notify_consumer_ids_changed_enable is False
    ok(
        await run(
            cluster,
            "updateBrokerConfig",
            "-c",
            "DefaultCluster",
            "-a",
            "true",
            "-k",
            "brokerPermission",
            "-v",
            "4",
        )
    )
    got = json.loads(ok(await run(cluster, "getBrokerConfig", "-b", addr, "--json")))
    assert got[addr]["brokerPermission"] == "4"
    more = ok(await run(cluster, "clusterList", "-m", "-c", "DefaultCluster")).splitlines()
    assert more[0].split() == [
        "#Cluster",
        "Name",
        "#Broker",
        "Name",
        "#InTotalYest",
        "#OutTotalYest",
        "#InTotalToday",
        "#OutTotalToday",
    ]
    assert more[1].split()[:2] == ["DefaultCluster", "broker-a"]
    missing = await run(cluster, "clusterList", "-c", "NoSuchCluster")
    assert missing.exit_code == 1
    traced = await run(cluster, "sendMessage", "-t", "T", "-p", "x", "-m", "true")
    assert traced.exit_code == 1  # served (tests/client/trace); the broker is read-only here
    assert "no route info" in traced.output
    unit = await run(cluster, "queryMsgById", "-i", "00", "-u", "unit-a")
    assert unit.exit_code == 2


async def test_cluster_list_interval_prints_again_until_stopped(cluster: Cluster) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "rocketq"),
        "admin",
        "clusterList",
        "-n",
        cluster.addr,
        "-i",
        "0.2",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    try:
        headers = 0
        async with asyncio.timeout(60):
            while headers < 2:
                line = (await proc.stdout.readline()).decode()
                assert line, "clusterList -i ended"
                headers += line.startswith("#Cluster Name")
    finally:
        proc.terminate()
        await proc.wait()
    assert headers == 2


async def test_message_options_filter_tags_charset_body_and_time(cluster: Cluster) -> None:
    await cluster.create_topic("OptMsg", 1)
    async with Producer("OptProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await producer.send(Message("OptMsg", "中文".encode("gbk"), tags="TagA", keys="k-a"))
        sent = await producer.send(Message("OptMsg", b"plain", tags="TagB", keys="k-b"))
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 10)
    only_a = json.loads(
        ok(await run(cluster, "printMsg", "-t", "OptMsg", "-s", "TagA", "-c", "GBK", "--json"))
    )
    assert [m["MessageBody"] for m in only_a] == ["中文"]
    no_body = json.loads(
        ok(await run(cluster, "printMsg", "-t", "OptMsg", "-d", "false", "--json"))
    )
    assert len(no_body) == 2
    assert all("MessageBody" not in m for m in no_body)
    bad = await run(cluster, "printMsg", "-t", "OptMsg", "-c", "no-such-charset")
    assert bad.exit_code == 2
    later = json.loads(
        ok(await run(cluster, "consumeMessage", "-t", "OptMsg", "-s", "now", "--json"))
    )
    assert later == []
    since_start = json.loads(
        ok(await run(cluster, "consumeMessage", "-t", "OptMsg", "-s", "0", "-g", "G", "--json"))
    )
    assert len(since_start) == 2
    by_offset = json.loads(
        ok(
            await run(
                cluster,
                "queryMsgByOffset",
                "-t",
                "OptMsg",
                "-b",
                "broker-a",
                "-i",
                "0",
                "-o",
                "0",
                "-f",
                "GBK",
                "--json",
            )
        )
    )
    assert by_offset[0]["MessageBody"] == "中文"
    every = json.loads(
        ok(
            await run(
                cluster, "queryMsgByUniqueKey", "-t", "OptMsg", "-i", sent.msg_id, "-a", "--json"
            )
        )
    )
    assert [m["msgId"] for m in every] == [sent.msg_id]
    offset_id = every[0]["OffsetID"]
    resent = json.loads(
        ok(await run(cluster, "queryMsgById", "-i", offset_id, "-s", "true", "--json"))
    )
    assert resent["status"] == "SEND_OK"
    assert resent["originalMsgId"] == sent.msg_id
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 10)
    keyed = ok(await run(cluster, "queryMsgByKey", "-t", "OptMsg", "-k", "k-b"))
    assert len(keyed.splitlines()) == 3  # the header, the original and the copy


async def test_consumer_options_ask_a_broker_show_stacks_and_consume_directly(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("OptConsume", 1)
    async with Producer("OptProducer", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        sent = await producer.send(Message("OptConsume", b"again"))
    consumer, got = collecting_consumer("OptGroup", cluster.addr, "OptConsume")
    await consumer.start()
    addr = cluster.broker.broker_addr
    try:
        assert await until(lambda: cluster.committed("OptGroup", "OptConsume") == {0: 1}, 30)
        plain = ok(await run(cluster, "consumerProgress", "-g", "OptGroup"))
        assert "#Client IP" not in plain
        assert re.search(r"^OptConsume\s+broker-a\s+0\s+1\s+1\s+0\s", plain, re.M)
        shown = ok(await run(cluster, "consumerProgress", "-g", "OptGroup", "-s", "true"))
        assert re.search(
            r"^OptConsume\s+broker-a\s+0\s+1\s+1\s+127\.0\.0\.1:\d+\s+0\s", shown, re.M
        )
        in_cluster = ok(await run(cluster, "consumerProgress", "-c", "DefaultCluster"))
        assert "OptGroup" in in_cluster
        conn = json.loads(
            ok(await run(cluster, "consumerConnection", "-g", "OptGroup", "-b", addr, "--json"))
        )
        client_id = conn["connectionSet"][0]["clientId"]
        status = ok(await run(cluster, "consumerStatus", "-g", "OptGroup", "-b", addr, "-s"))
        assert "Thread " in status  # the client's stacks (jstack)
        direct = json.loads(
            ok(
                await run(
                    cluster,
                    "queryMsgByUniqueKey",
                    "-t",
                    "OptConsume",
                    "-i",
                    sent.msg_id,
                    "-g",
                    "OptGroup",
                    "-d",
                    client_id,
                    "--json",
                )
            )
        )
        assert direct["consumeResult"] == "CR_SUCCESS"
        assert await until(lambda: len(got) >= 2, 10)  # the listener saw it a second time
        half = await run(cluster, "queryMsgById", "-i", "00", "-g", "OptGroup")
        assert half.exit_code == 2
        assert "go together" in half.output
        reset = ok(
            await run(
                cluster,
                "resetOffsetByTime",
                "-g",
                "OptGroup",
                "-t",
                "OptConsume",
                "-s",
                "0",
                "--cplus",
            )
        )
        assert re.search(r"^broker-a\s+0\s+0$", reset, re.M)
    finally:
        await consumer.shutdown()


async def test_producer_connection_and_write_permission_commands_act(cluster: Cluster) -> None:
    await cluster.create_topic("OptPerm", 1)
    async with Producer("OptPG", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await producer.send(Message("OptPerm", b"x"))
        rows = json.loads(
            ok(await run(cluster, "producerConnection", "-g", "OptPG", "-t", "OptPerm", "--json"))
        )
        every = ok(await run(cluster, "producer", "-b", cluster.broker_addr))
    assert len(rows) == 1
    assert rows[0]["ClientAddr"].startswith("127.0.0.1:")
    # mqadmin producer: GET_ALL_PRODUCER_INFO's groups, in ProducerSubCommand's lines
    line = re.search(
        r"^producer group \(OptPG\) instance : clientId=(\S+),remoteIP=(\S+),", every, re.M
    )
    assert line is not None, every
    assert line[1] == rows[0]["ClientId"]
    assert "language=PYTHON" in every

    async def perm() -> int:
        route = json.loads(ok(await run(cluster, "topicRoute", "-t", "OptPerm")))
        return int(route["queueDatas"][0]["perm"])

    assert await perm() == 6
    ok(await run(cluster, "wipeWritePerm", "-b", "broker-a"))
    assert await perm() == 4  # read only in the name server's route
    ok(await run(cluster, "addWritePerm", "-b", "broker-a"))
    assert await perm() == 6
