"""A name server and a broker with ``aclEnable=true`` on 127.0.0.1 port 0, and the accounts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from rocketq.broker import BrokerController
from rocketq.namesrv import NamesrvController
from rocketq.remoting.acl import sign_request
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.testing import run_broker, run_namesrv

WAIT_S = 10.0
SMALL_STORE = {"mapedFileSizeCommitLog": str(4 * 1024 * 1024), "mapedFileSizeConsumeQueue": "6000"}

ADMIN = ("AdminAK01", "AdminSK01")
PUB_ONLY = ("PubOnlyAK", "PubOnlySK")
SUB_ONLY = ("SubOnlyAK", "SubOnlySK")
NORMAL = ("RocketMQ", "12345678")
WHITE = ("WhiteAK01", "WhiteSK01")

ACCOUNTS: list[dict[str, Any]] = [
    {"accessKey": ADMIN[0], "secretKey": ADMIN[1], "admin": True},
    {
        "accessKey": PUB_ONLY[0],
        "secretKey": PUB_ONLY[1],
        "defaultTopicPerm": "DENY",
        "defaultGroupPerm": "DENY",
        "topicPerms": ["TopicA=PUB"],
    },
    {
        "accessKey": SUB_ONLY[0],
        "secretKey": SUB_ONLY[1],
        "defaultTopicPerm": "DENY",
        "defaultGroupPerm": "DENY",
        "topicPerms": ["TopicA=SUB"],
        "groupPerms": ["GroupA=SUB"],
    },
    {
        "accessKey": NORMAL[0],
        "secretKey": int(NORMAL[1]),  # YAML reads 12345678 as a number; RocketMQ as text
        "whiteRemoteAddress": None,
        "admin": False,
        "defaultTopicPerm": "PUB|SUB",
        "defaultGroupPerm": "SUB",
        "topicPerms": ["Forbidden=DENY"],
    },
    {
        "accessKey": WHITE[0],
        "secretKey": WHITE[1],
        "whiteRemoteAddress": "127.0.0.*",
        "defaultTopicPerm": "DENY",
    },
]


def write_acl(path: Path, accounts: list[dict[str, Any]], white: list[str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"globalWhiteRemoteAddresses": white or [], "accounts": accounts}
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def signed(cmd: RemotingCommand, account: tuple[str, str]) -> RemotingCommand:
    sign_request(cmd, account[0], account[1])
    return cmd


@dataclass
class AclCluster:
    namesrv: NamesrvController
    broker: BrokerController
    client: RemotingClient
    store_root: Path

    @property
    def broker_addr(self) -> str:
        return self.broker.broker_addr

    @property
    def acl_file(self) -> Path:
        return self.store_root / "config" / "plain_acl.yml"

    async def invoke(self, cmd: RemotingCommand) -> RemotingCommand:
        return await self.client.invoke(self.broker_addr, cmd, WAIT_S)


@pytest.fixture
async def acl_cluster(tmp_path: Path) -> AsyncIterator[AclCluster]:
    root = tmp_path / "store"
    write_acl(root / "config" / "plain_acl.yml", ACCOUNTS)
    async with (
        run_namesrv() as ns,
        run_broker(
            root,
            namesrv_addr=ns.addr,
            store_properties=dict(SMALL_STORE),
            acl_enable=True,
            acl_watch_interval_ms=100,
        ) as broker,
        RemotingClient() as client,
    ):
        yield AclCluster(ns, broker, client, root)
