"""``rocketq acl``: an operator manages accounts and the white list of a running broker."""

from __future__ import annotations

import asyncio

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
    version = await run_cli(acl_cluster, "version")
    assert '"counter": 2' in version.output


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
