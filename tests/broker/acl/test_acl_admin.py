"""The ACL admin codes rewrite plain_acl.yml atomically and take effect at once; hand edits
of the file are picked up by the watcher; a broken file never opens or closes the broker."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rocketq.admin import AsyncAdminClient
from rocketq.errors import BrokerResponseError, ConfigError, NoPermissionError
from rocketq.remoting.protocol.acl_bodies import PlainAccessConfig
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker, until
from rocketq.testing.acl import (
    ACCOUNTS,
    ADMIN,
    NORMAL,
    PUB_ONLY,
    WAIT_S,
    AclCluster,
    signed,
    write_acl,
)
from rocketq.testing.wire import send_request

NEW = ("NewcomerAK", "NewcomerSK")


def send_as(account: tuple[str, str] | None, topic: str = "TopicA") -> RemotingCommand:
    cmd = send_request(topic, b"x", code=RequestCode.SEND_MESSAGE_V2)
    return cmd if account is None else signed(cmd, account)


def admin_client(account: tuple[str, str] | None = ADMIN) -> AsyncAdminClient:
    """Broker calls only: no name server."""
    if account is None:
        return AsyncAdminClient()
    return AsyncAdminClient(access_key=account[0], secret_key=account[1])


def file_accounts(path: Path) -> dict[str, dict[str, object]]:
    data = yaml.safe_load(path.read_text())
    return {str(a["accessKey"]): a for a in data["accounts"]}


def file_counter(path: Path) -> int:
    return int(yaml.safe_load(path.read_text())["dataVersion"][0]["counter"])


async def test_admin_creates_an_account_that_works_at_once_and_is_in_the_file(
    acl_cluster: AclCluster,
) -> None:
    assert (await acl_cluster.invoke(send_as(NEW))).code == ResponseCode.NO_PERMISSION
    account = PlainAccessConfig(
        access_key=NEW[0],
        secret_key=NEW[1],
        default_topic_perm="DENY",
        topic_perms=["TopicA=PUB"],
        group_perms=["GroupA=SUB"],
    )
    async with admin_client() as admin:
        await admin.create_and_update_plain_access_config(acl_cluster.broker_addr, account)
        _, version = await admin.examine_broker_cluster_acl_version_info(acl_cluster.broker_addr)
    assert (await acl_cluster.invoke(send_as(NEW))).code == ResponseCode.SUCCESS
    refused = await acl_cluster.invoke(send_as(NEW, "TopicB"))
    assert refused.code == ResponseCode.NO_PERMISSION
    assert "topic:TopicB" in (refused.remark or "")
    stored = file_accounts(acl_cluster.acl_file)[NEW[0]]
    assert stored["topicPerms"] == ["TopicA=PUB"]
    assert stored["groupPerms"] == ["GroupA=SUB"]
    assert version["counter"] == file_counter(acl_cluster.acl_file) == 1
    assert not acl_cluster.acl_file.with_name("plain_acl.yml.tmp").exists()
    backup = yaml.safe_load(acl_cluster.acl_file.with_name("plain_acl.yml.bak").read_text())
    assert NEW[0] not in {a["accessKey"] for a in backup["accounts"]}


async def test_admin_updates_an_account_keeping_the_other_accounts(acl_cluster: AclCluster) -> None:
    changed = PlainAccessConfig(
        access_key=PUB_ONLY[0], secret_key=PUB_ONLY[1], topic_perms=["TopicB=PUB"]
    )
    async with admin_client() as admin:
        await admin.create_and_update_plain_access_config(acl_cluster.broker_addr, changed)
    assert (await acl_cluster.invoke(send_as(PUB_ONLY, "TopicB"))).code == ResponseCode.SUCCESS
    assert (await acl_cluster.invoke(send_as(PUB_ONLY))).code == ResponseCode.NO_PERMISSION
    accounts = file_accounts(acl_cluster.acl_file)
    assert set(accounts) == {str(a["accessKey"]) for a in ACCOUNTS}
    assert accounts[PUB_ONLY[0]]["defaultTopicPerm"] == "DENY"  # kept: not in the update


async def test_deleted_account_is_refused_and_deleting_it_again_fails(
    acl_cluster: AclCluster,
) -> None:
    async with admin_client() as admin:
        await admin.delete_plain_access_config(acl_cluster.broker_addr, NORMAL[0])
        with pytest.raises(BrokerResponseError) as again:
            await admin.delete_plain_access_config(acl_cluster.broker_addr, NORMAL[0])
    assert again.value.response_code == ResponseCode.DELETE_ACL_CONFIG_FAILED
    response = await acl_cluster.invoke(send_as(NORMAL))
    assert response.code == ResponseCode.NO_PERMISSION
    assert "No acl config for accessKey=RocketMQ" in (response.remark or "")
    assert NORMAL[0] not in file_accounts(acl_cluster.acl_file)


async def test_global_white_address_lets_unsigned_requests_in_until_removed(
    acl_cluster: AclCluster,
) -> None:
    addr = acl_cluster.broker_addr
    assert (await acl_cluster.invoke(send_as(None))).code == ResponseCode.NO_PERMISSION
    async with admin_client() as admin:
        await admin.update_global_white_addr_config(addr, ["10.0.0.*", "127.0.0.1"])
        assert (await acl_cluster.invoke(send_as(None))).code == ResponseCode.SUCCESS
        body = await admin.get_broker_cluster_acl_config(addr)
        assert body.global_white_addrs == ["10.0.0.*", "127.0.0.1"]
        with pytest.raises(BrokerResponseError) as foreign:
            await admin.update_global_white_addr_config(addr, ["*"], "/etc/passwd")
        assert foreign.value.response_code == ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
        await admin.update_global_white_addr_config(addr, [])
    assert (await acl_cluster.invoke(send_as(None))).code == ResponseCode.NO_PERMISSION


async def test_acl_listing_is_admin_only_and_never_shows_a_secret(acl_cluster: AclCluster) -> None:
    addr = acl_cluster.broker_addr
    async with admin_client() as admin:
        body = await admin.get_broker_cluster_acl_config(addr)
    assert {c.access_key for c in body.plain_access_configs} == {a["accessKey"] for a in ACCOUNTS}
    assert all(c.secret_key is None for c in body.plain_access_configs)
    raw = body.encode()
    for account in ACCOUNTS:
        assert str(account["secretKey"]).encode() not in raw
    async with admin_client(NORMAL) as normal:
        with pytest.raises(NoPermissionError):
            await normal.get_broker_cluster_acl_config(addr)
        header, _ = await normal.examine_broker_cluster_acl_version_info(addr)
    assert header.broker_name == acl_cluster.broker.config.broker_name


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"secret_key": "short"}, "longer than 6"),
        ({"topic_perms": ["TopicA=WRITE"]}, "expected permissions"),
        ({"white_remote_address": "300.1.2.3"}, "address pattern"),
    ],
)
async def test_an_invalid_update_is_refused_and_leaves_the_file_as_it_was(
    acl_cluster: AclCluster, change: dict[str, object], reason: str
) -> None:
    before = acl_cluster.acl_file.read_bytes()
    fields: dict[str, object] = {"access_key": NEW[0], "secret_key": NEW[1]} | change
    async with admin_client() as admin:
        with pytest.raises(BrokerResponseError) as refused:
            await admin.create_and_update_plain_access_config(
                acl_cluster.broker_addr,
                PlainAccessConfig(**fields),  # type: ignore[arg-type]
            )
    assert refused.value.response_code == ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
    assert reason in refused.value.remark
    assert acl_cluster.acl_file.read_bytes() == before


async def test_a_non_admin_cannot_change_the_acl_and_the_file_stays_unchanged(
    acl_cluster: AclCluster,
) -> None:
    before = acl_cluster.acl_file.read_bytes()
    grant = PlainAccessConfig(access_key=NORMAL[0], secret_key=NORMAL[1], admin=True)
    async with admin_client(NORMAL) as normal:
        with pytest.raises(NoPermissionError, match="accessKey=RocketMQ is not an admin"):
            await normal.create_and_update_plain_access_config(acl_cluster.broker_addr, grant)
        with pytest.raises(NoPermissionError):
            await normal.update_global_white_addr_config(acl_cluster.broker_addr, ["*"])
        with pytest.raises(NoPermissionError):
            await normal.delete_plain_access_config(acl_cluster.broker_addr, ADMIN[0])
    assert acl_cluster.acl_file.read_bytes() == before


async def test_hand_edits_are_reloaded_and_a_broken_or_missing_file_keeps_the_old_accounts(
    acl_cluster: AclCluster,
) -> None:
    manager = acl_cluster.broker.access_validator.manager  # type: ignore[union-attr]
    write_acl(acl_cluster.acl_file, [*ACCOUNTS, {"accessKey": NEW[0], "secretKey": NEW[1]}])
    assert await until(lambda: NEW[0] in manager.config.accounts, timeout_s=WAIT_S)
    # the new account exists; its default topic permission is DENY
    assert (await acl_cluster.invoke(send_as(NEW))).code == ResponseCode.NO_PERMISSION
    acl_cluster.acl_file.write_text("accounts: [ {accessKey: broken\n")
    assert await until(lambda: manager.last_load_error is not None, timeout_s=WAIT_S)
    assert "not valid YAML" in (manager.last_load_error or "")
    assert (await acl_cluster.invoke(send_as(NORMAL))).code == ResponseCode.SUCCESS
    acl_cluster.acl_file.unlink()
    assert await until(lambda: "is missing" in (manager.last_load_error or ""), timeout_s=WAIT_S)
    assert (await acl_cluster.invoke(send_as(NORMAL))).code == ResponseCode.SUCCESS
    write_acl(acl_cluster.acl_file, [a for a in ACCOUNTS if a["accessKey"] != NORMAL[0]])
    assert await until(lambda: NORMAL[0] not in manager.config.accounts, timeout_s=WAIT_S)
    assert (await acl_cluster.invoke(send_as(NORMAL))).code == ResponseCode.NO_PERMISSION
    assert manager.last_load_error is None


async def test_acl_admin_codes_are_refused_when_acl_is_disabled(tmp_path: Path) -> None:
    async with run_broker(tmp_path / "store") as broker, admin_client(None) as client:
        account = PlainAccessConfig(access_key=NEW[0], secret_key=NEW[1], admin=True)
        with pytest.raises(BrokerResponseError, match="aclEnable=false") as refused:
            await client.create_and_update_plain_access_config(broker.broker_addr, account)
        assert refused.value.response_code == ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
    assert not (tmp_path / "store" / "config" / "plain_acl.yml").exists()


async def test_a_broker_with_a_broken_acl_file_does_not_start(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_acl(root / "config" / "plain_acl.yml", [{"accessKey": "short", "secretKey": "x"}])
    with pytest.raises(ConfigError, match="accessKey=short"):
        async with run_broker(root, acl_enable=True):
            pass


async def test_concurrent_admin_updates_each_land_in_the_file_none_lost(
    acl_cluster: AclCluster,
) -> None:
    import asyncio

    names = [(f"Concurrent{i:02d}", f"ConcurrentSK{i:02d}") for i in range(12)]
    async with admin_client() as admin:

        async def add(account: tuple[str, str]) -> None:
            entry = PlainAccessConfig(
                access_key=account[0], secret_key=account[1], default_topic_perm="PUB"
            )
            await admin.create_and_update_plain_access_config(acl_cluster.broker_addr, entry)

        await asyncio.gather(*(add(a) for a in names))
    in_file = file_accounts(acl_cluster.acl_file)
    assert {a for a, _ in names} <= set(in_file)
    assert set(in_file) >= {str(a["accessKey"]) for a in ACCOUNTS}  # the others kept
    assert file_counter(acl_cluster.acl_file) == len(names)  # one version per rewrite
    for account in names:
        assert (await acl_cluster.invoke(send_as(account))).code == ResponseCode.SUCCESS
