"""A name server and a broker with ``aclEnable=true`` on 127.0.0.1 port 0, and the accounts.

The accounts cover each kind of principal of RocketMQ's plain ACL (``PlainAccessValidator``):
an admin, a publish-only and a subscribe-only account, a normal one, and one trusted by its
white remote address.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml

from rocketq.remoting.acl import sign_request
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.store import MIB, small_store_properties

WAIT_S = 10.0

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


class AclCluster(Cluster):
    """A cluster whose broker has ``aclEnable=true`` and the accounts above."""

    @property
    def acl_file(self) -> Path:
        return self.store_root / "config" / "plain_acl.yml"

    async def invoke(self, cmd: RemotingCommand) -> RemotingCommand:
        return await self.client.invoke(self.broker_addr, cmd, WAIT_S)


@contextlib.asynccontextmanager
async def run_acl_cluster(
    tmp: Path, accounts: list[dict[str, Any]], **broker_overrides: Any
) -> AsyncIterator[AclCluster]:
    """A cluster under ``tmp`` whose broker reads ``accounts`` from its plain_acl.yml."""
    write_acl(tmp / "store" / "config" / "plain_acl.yml", accounts)
    async with run_cluster(
        tmp,
        store_properties=small_store_properties(4 * MIB),
        acl_enable=True,
        **broker_overrides,
    ) as cluster:
        yield AclCluster(cluster.namesrv, cluster.broker, cluster.client, cluster.store_root)
