"""``rocketq admin``: mqadmin's commands against a real name server and broker, run through
click in a worker thread (the servers live on the test's loop): tables, --json, errors and
exit codes, and an example in every command's --help."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from click.testing import CliRunner

from rocketq.cli.admin import admin
from rocketq.cli.table import format_table
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import Cluster, collecting_consumer
from rocketq.testing.wait import until


def test_tables_align_columns_and_right_align_numbers() -> None:
    text = format_table(["Topic", "#QID"], [("a", 1), ("long-name", 12)])
    assert text.splitlines() == ["#Topic     #QID", "a             1", "long-name    12"]


def test_every_command_has_an_example_in_its_help() -> None:
    runner = CliRunner()
    for name in admin.commands:
        out = runner.invoke(admin, [name, "--help"]).output
        assert "Example:" in out, name
        assert f"rocketq admin {name}" in out, name
        assert "-n, --namesrvAddr" in out


async def test_topic_commands_create_list_route_and_show_status(cluster: Cluster) -> None:
    out = ok(
        await run(
            cluster, "updateTopic", "-c", "DefaultCluster", "-t", "CliTopic", "-r", "2", "-w", "2"
        )
    )
    assert f"create topic to {cluster.broker.broker_addr} success." in out
    assert "CliTopic" in ok(await run(cluster, "topicList")).split()
    route = json.loads(ok(await run(cluster, "topicRoute", "-t", "CliTopic")))
    assert route["queueDatas"][0]["readQueueNums"] == 2
    status = ok(await run(cluster, "topicStatus", "-t", "CliTopic")).splitlines()
    assert status[0].split()[:4] == ["#Broker", "Name", "#QID", "#Min"]
    assert len(status) == 3
    rows = json.loads(ok(await run(cluster, "topicStatus", "-t", "CliTopic", "--json")))
    assert [r["QID"] for r in rows] == [0, 1]
    assert ok(await run(cluster, "topicClusterList", "-t", "CliTopic")).strip() == "DefaultCluster"
    ok(await run(cluster, "deleteTopic", "-c", "DefaultCluster", "-t", "CliTopic"))
    assert "CliTopic" not in ok(await run(cluster, "topicList")).split()


async def test_send_then_find_the_message_by_key_uniq_key_id_and_offset(cluster: Cluster) -> None:
    await cluster.create_topic("CliMsg", 1)
    sent = json.loads(
        ok(
            await run(
                cluster,
                "sendMessage",
                "-t",
                "CliMsg",
                "-p",
                "hello cli",
                "-k",
                "order-42",
                "-c",
                "TagA",
                "--json",
            )
        )
    )
    assert sent[0]["Send Result"] == "SEND_OK"
    msg_id = sent[0]["MsgId"]
    store = cluster.broker.message_store
    assert await until(lambda: store.dispatch_behind_bytes() == 0, 5)
    by_key = ok(await run(cluster, "queryMsgByKey", "-t", "CliMsg", "-k", "order-42"))
    assert msg_id in by_key
    uniq = json.loads(
        ok(await run(cluster, "queryMsgByUniqueKey", "-t", "CliMsg", "-i", msg_id, "--json"))
    )
    assert uniq[0]["MessageBody"] == "hello cli"
    assert uniq[0]["Tags"] == "[TagA]"
    offset_id = uniq[0]["OffsetID"]
    text = ok(await run(cluster, "queryMsgById", "-i", offset_id))
    assert re.search(r"^Message Body:\s+hello cli$", text, re.M)
    at = json.loads(
        ok(
            await run(
                cluster,
                "queryMsgByOffset",
                "-t",
                "CliMsg",
                "-b",
                "broker-a",
                "-i",
                "0",
                "-o",
                "0",
                "--json",
            )
        )
    )
    assert at[0]["msgId"] == msg_id
    printed = json.loads(ok(await run(cluster, "printMsg", "-t", "CliMsg", "--json")))
    assert [m["MessageBody"] for m in printed] == ["hello cli"]
    consumed = json.loads(
        ok(
            await run(
                cluster,
                "consumeMessage",
                "-t",
                "CliMsg",
                "-b",
                "broker-a",
                "-i",
                "0",
                "-o",
                "0",
                "-c",
                "5",
                "--json",
            )
        )
    )
    assert len(consumed) == 1


async def test_group_commands_show_progress_connections_and_reset(cluster: Cluster) -> None:
    await cluster.create_topic("CliGroupTopic", 1)
    for i in range(4):
        ok(await run(cluster, "sendMessage", "-t", "CliGroupTopic", "-p", f"m{i}"))
    consumer, got = collecting_consumer("CliGroup", cluster.addr, "CliGroupTopic")
    await consumer.start()
    try:
        assert await until(lambda: cluster.committed("CliGroup", "CliGroupTopic") == {0: 4}, 30)
        progress = ok(await run(cluster, "consumerProgress", "-g", "CliGroup", "-s", "true"))
        assert "Diff Total: 0" in progress
        assert "#Client IP" in progress.splitlines()[0]
        assert re.search(
            r"^CliGroupTopic\s+broker-a\s+0\s+4\s+4\s+127\.0\.0\.1:\d+\s+0\s", progress, re.M
        )
        conn = ok(await run(cluster, "consumerConnection", "-g", "CliGroup"))
        assert "CliGroupTopic" in conn
        assert "MessageModel: CLUSTERING" in conn
        status = ok(await run(cluster, "consumerStatus", "-g", "CliGroup"))
        assert "#Consumer:" in status
        everyone = json.loads(ok(await run(cluster, "consumerProgress", "--json")))
        assert {"Group": "CliGroup", "Count": 1}.items() <= everyone[0].items()
        reset = json.loads(
            ok(
                await run(
                    cluster,
                    "resetOffsetByTime",
                    "-g",
                    "CliGroup",
                    "-t",
                    "CliGroupTopic",
                    "-s",
                    "0",
                    "--json",
                )
            )
        )
        assert reset == [{"brokerName": "broker-a", "queueId": 0, "offset": 0}]
        assert await until(lambda: len(got) >= 8, 30)  # everything again after the reset
    finally:
        await consumer.shutdown()


async def test_broker_commands_show_status_config_stats_and_change_permissions(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("CliStats", 1)
    ok(await run(cluster, "sendMessage", "-t", "CliStats", "-p", "x"))
    addr = cluster.broker.broker_addr
    clusters = ok(await run(cluster, "clusterList"))
    assert re.search(
        rf"^DefaultCluster\s+broker-a\s+0\s+{re.escape(addr)}\s+V4_9_8", clusters, re.M
    )
    status = ok(await run(cluster, "brokerStatus", "-b", addr))
    assert re.search(r"^msgPutTotalTodayNow\s*: 1$", status, re.M)
    config = json.loads(ok(await run(cluster, "getBrokerConfig", "-b", addr, "--json")))
    assert config[addr]["brokerName"] == "broker-a"
    stats = json.loads(ok(await run(cluster, "statsAll", "-t", "CliStats", "--json")))
    assert stats[0]["InMsg24Hour"] == 1
    wipe = ok(await run(cluster, "wipeWritePerm", "-b", "broker-a"))
    assert "wipe write perm of broker[broker-a]" in wipe
    ok(await run(cluster, "addWritePerm", "-b", "broker-a"))
    ok(await run(cluster, "updateKvConfig", "-s", "NS", "-k", "k", "-v", "v"))
    assert cluster.namesrv.kv_config_manager.get_kv_config("NS", "k") == "v"
    ok(await run(cluster, "deleteKvConfig", "-s", "NS", "-k", "k"))
    assert cluster.namesrv.kv_config_manager.get_kv_config("NS", "k") is None
    ok(await run(cluster, "updateSubGroup", "-b", addr, "-g", "CliSub", "-r", "3"))
    groups = cluster.broker.subscription_group_manager.subscription_group_table
    assert groups["CliSub"].retry_max_times == 3
    ok(await run(cluster, "deleteSubGroup", "-b", addr, "-g", "CliSub"))
    assert "CliSub" not in groups


async def test_errors_exit_non_zero_with_one_clear_line(cluster: Cluster) -> None:
    down = await asyncio.to_thread(CliRunner().invoke, admin, ["topicList", "-n", "127.0.0.1:1"])
    assert down.exit_code == 1
    assert "cannot connect to the name server 127.0.0.1:1" in down.output
    unknown = await run(cluster, "topicRoute", "-t", "NoSuchTopic")
    assert unknown.exit_code == 1
    assert "NoSuchTopic" in unknown.output
    usage = await run(cluster, "updateTopic", "-t", "X")
    assert usage.exit_code == 2
    assert "exactly one of -c/--clusterName or -b/--brokerAddr" in usage.output
    bad_time = await run(cluster, "resetOffsetByTime", "-g", "G", "-t", "T", "-s", "yesterday")
    assert bad_time.exit_code == 2
    assert "is not a time" in bad_time.output


@pytest.mark.parametrize("name", ["NAMESRV_ADDR"])
async def test_the_name_server_comes_from_namesrv_addr(
    cluster: Cluster, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, cluster.addr)
    await cluster.create_topic("EnvTopic", 1)
    result = await asyncio.to_thread(CliRunner().invoke, admin, ["topicList"])
    assert "EnvTopic" in ok(result).split()
