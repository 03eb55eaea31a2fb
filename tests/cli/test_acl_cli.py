"""``rocketq acl`` and mqadmin's ACL commands (``rocketq admin updateAclConfig`` ...): an
operator manages accounts and the white list of a running broker; the short names run the
same commands."""

from __future__ import annotations

import asyncio
import json

import yaml
from click.testing import CliRunner, Result

from rocketq.cli.main import cli
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.acl import ADMIN, NORMAL, AclCluster, signed
from rocketq.testing.wire import send_request


async def run_cli(cluster: AclCluster, *args: str, account: tuple[str, str] = ADMIN) -> Result:
    argv = ["acl", "-b", cluster.broker_addr, "--ak", account[0], "--sk", account[1], *args]
    return await asyncio.to_thread(CliRunner().invoke, cli, argv)


async def test_operator_adds_lists_and_deletes_an_account_from_the_command_line(
    acl_cluster: AclCluster,
) -> None:
    added = await run_cli(
        acl_cluster, "update", "-a", "CliUser01", "-s", "CliSecret1", "-t", "TopicA=PUB,TopicB=SUB"
    )
    assert added.exit_code == 0, added.output
    send = send_request("TopicA", b"cli", code=RequestCode.SEND_MESSAGE_V2)
    assert (await acl_cluster.invoke(signed(send, ("CliUser01", "CliSecret1")))).code == 0
    listed = await run_cli(acl_cluster, "list")
    assert listed.exit_code == 0, listed.output
    assert "CliUser01" in listed.output
    assert "CliSecret1" not in listed.output
    stored = yaml.safe_load(acl_cluster.acl_file.read_text())["accounts"][-1]
    assert stored["topicPerms"] == ["TopicA=PUB", "TopicB=SUB"]
    deleted = await run_cli(acl_cluster, "delete", "-a", "CliUser01")
    assert deleted.exit_code == 0, deleted.output
    version = await run_cli(acl_cluster, "version", "--json")
    assert version.exit_code == 0, version.output
    [row] = json.loads(version.output)
    assert (row["Broker Addr"], row["AclConfigVersion"]) == (acl_cluster.broker_addr, 2)


async def test_a_non_admin_operator_gets_a_clear_error_and_changes_nothing(
    acl_cluster: AclCluster,
) -> None:
    before = acl_cluster.acl_file.read_bytes()
    result = await run_cli(acl_cluster, "white", "-g", "*", account=NORMAL)
    assert result.exit_code != 0
    assert "accessKey=RocketMQ is not an admin" in result.output
    assert acl_cluster.acl_file.read_bytes() == before
    unsigned = send_request("TopicA", b"x", code=RequestCode.SEND_MESSAGE_V2)
    assert (await acl_cluster.invoke(unsigned)).code == ResponseCode.NO_PERMISSION


async def test_the_mqadmin_names_and_the_short_names_are_the_same_commands(
    acl_cluster: AclCluster,
) -> None:
    from rocketq.cli.acl import acl
    from rocketq.cli.admin import admin

    for short, long in [
        ("update", "updateAclConfig"),
        ("delete", "deleteAclConfig"),
        ("white", "updateGlobalWhiteAddr"),
        ("version", "clusterAclConfigVersion"),
        ("list", "getAccessConfigSubCommand"),
    ]:
        assert acl.commands[short] is admin.commands[long]
    ak, sk = ADMIN
    argv = ["admin", "updateAclConfig", "-b", acl_cluster.broker_addr, "--ak", ak, "--sk", sk]
    argv += ["--accessKey", "CliAdmin01", "--secretKey", "CliSecret2", "-m", "true"]
    added = await asyncio.to_thread(CliRunner().invoke, cli, argv)
    assert added.exit_code == 0, added.output
    assert f"create or update plain access config to {acl_cluster.broker_addr} success." in (
        added.output
    )
    promoted = await run_cli(
        acl_cluster, "update", "--access-key", "CliAdmin02", "--secret-key", "CliSecret3", "--admin"
    )
    assert promoted.exit_code == 0, promoted.output
    listed = await run_cli(acl_cluster, "list")
    accounts = {
        a["accessKey"]: a["admin"]
        for a in json.loads(listed.output)[acl_cluster.broker_addr]["plainAccessConfigs"]
    }
    assert accounts["CliAdmin01"] is True
    assert accounts["CliAdmin02"] is True
    plain = await run_cli(
        acl_cluster, "update", "-a", "CliAdmin02", "-s", "CliSecret3", "--admin", "--no-admin"
    )
    assert plain.exit_code == 0, plain.output
    in_file = yaml.safe_load(acl_cluster.acl_file.read_text())["accounts"]
    assert {a["accessKey"]: a.get("admin") for a in in_file}["CliAdmin02"] is False


async def test_the_short_names_need_a_broker(acl_cluster: AclCluster) -> None:
    result = await asyncio.to_thread(CliRunner().invoke, cli, ["acl", "list"])
    assert result.exit_code == 2
    assert "-b/--brokerAddr" in result.output
