"""The ACL admin codes (AdminBrokerProcessor's ACL handlers, 4.9.x).

UPDATE_AND_CREATE_ACL_CONFIG 50, DELETE_ACL_CONFIG 51, UPDATE_GLOBAL_WHITE_ADDRS_CONFIG 53
rewrite ``plain_acl.yml`` atomically (``PlainPermissionManager``) and answer SUCCESS, or their
failure codes 209 / 210 / 211 with the reason. GET_BROKER_CLUSTER_ACL_INFO 52 answers the
file's dataVersion; GET_BROKER_CLUSTER_ACL_CONFIG 54 the accounts without their secrets. The
ACL hook has already required an admin account for 50, 51, 53 and 54. With ``aclEnable=false``
every code is refused with its failure code and a remark saying so: nobody may write an ACL
file that a later ``aclEnable=true`` would trust.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from rocketq.broker.acl.access_validator import PlainAccessValidator
from rocketq.broker.acl.plain_acl_config import CONFIG_ACCOUNTS, check_keys, text_of
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.broker.config import BrokerConfig
from rocketq.errors import ConfigError, RemotingCommandError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.acl_bodies import (
    GetBrokerClusterAclConfigResponseBody,
    PlainAccessConfig,
    split_list,
)
from rocketq.remoting.protocol.acl_headers import (
    CreateAccessConfigRequestHeader,
    DeleteAccessConfigRequestHeader,
    GetBrokerAclConfigResponseHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

ACL_DISABLED = "ACL is not enabled on this broker (aclEnable=false)"


def _response(code: int, remark: str | None = None, **kw: Any) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark, **kw)


def account_entry(h: CreateAccessConfigRequestHeader) -> dict[str, Any]:
    """The YAML keys an update sets (PlainPermissionManager.createAclAccessConfigMap)."""
    access_key, secret_key = check_keys(h.access_key, h.secret_key)
    entry: dict[str, Any] = {"accessKey": access_key, "secretKey": secret_key}
    if h.white_remote_address is not None:
        entry["whiteRemoteAddress"] = h.white_remote_address
    entry["admin"] = h.admin
    if h.default_topic_perm:
        entry["defaultTopicPerm"] = h.default_topic_perm
    if h.default_group_perm:
        entry["defaultGroupPerm"] = h.default_group_perm
    if h.topic_perms is not None:
        entry["topicPerms"] = split_list(h.topic_perms)
    if h.group_perms is not None:
        entry["groupPerms"] = split_list(h.group_perms)
    return entry


def shown_account(raw: dict[str, Any]) -> PlainAccessConfig:
    """An account of the file as GET_BROKER_CLUSTER_ACL_CONFIG shows it: no secretKey."""
    return PlainAccessConfig(
        access_key=text_of(raw.get("accessKey")) or "",
        white_remote_address=text_of(raw.get("whiteRemoteAddress")),
        admin=text_of(raw.get("admin")) == "true",
        default_topic_perm=text_of(raw.get("defaultTopicPerm")),
        default_group_perm=text_of(raw.get("defaultGroupPerm")),
        topic_perms=[str(p) for p in raw.get("topicPerms") or []],
        group_perms=[str(p) for p in raw.get("groupPerms") or []],
    )


class AclBroker(Protocol):
    """What the ACL admin processor uses of the broker (the BrokerContext has it all)."""

    config: BrokerConfig
    remoting_server: RemotingServer
    access_validator: PlainAccessValidator | None

    @property
    def broker_addr(self) -> str: ...


class AclAdminProcessor:
    def __init__(self, controller: AclBroker) -> None:
        self.broker = controller

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_processor(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, self.update_access_config)
        s.register_processor(RequestCode.DELETE_ACL_CONFIG, self.delete_access_config)
        s.register_processor(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, self.update_white)
        s.register_processor(RequestCode.GET_BROKER_CLUSTER_ACL_INFO, self.get_acl_version)
        s.register_processor(RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG, self.get_acl_config)

    @property
    def manager(self) -> PlainPermissionManager | None:
        validator = self.broker.access_validator
        return None if validator is None else validator.manager

    async def _change(
        self,
        failed: int,
        what: str,
        change: Callable[[PlainPermissionManager], Awaitable[str | None]],
    ) -> RemotingCommand:
        """SUCCESS when ``change`` returns None; ``failed`` with its refusal, with ``what``
        failed and why when it raises, or saying ACL is off."""
        manager = self.manager
        if manager is None:
            return _response(failed, ACL_DISABLED)
        try:
            refusal = await change(manager)
        except (ConfigError, OSError, RemotingCommandError) as exc:
            return _response(failed, f"{what} failed: {exc}")
        return _response(ResponseCode.SUCCESS if refusal is None else failed, refusal)

    async def update_access_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        async def change(manager: PlainPermissionManager) -> str | None:
            h = CreateAccessConfigRequestHeader.from_ext_fields(request.ext_fields)
            await manager.update_access_config(account_entry(h))
            return None

        failed = ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
        return await self._change(failed, "updating the ACL account", change)

    async def delete_access_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        async def change(manager: PlainPermissionManager) -> str | None:
            key = DeleteAccessConfigRequestHeader.from_ext_fields(request.ext_fields).access_key
            if not await manager.delete_access_config(key):
                return f"The accesskey[{key}] has no account to delete."
            return None

        failed = ResponseCode.DELETE_ACL_CONFIG_FAILED
        return await self._change(failed, "deleting the ACL account", change)

    async def update_white(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        async def change(manager: PlainPermissionManager) -> str | None:
            h = UpdateGlobalWhiteAddrsConfigRequestHeader.from_ext_fields(request.ext_fields)
            target = h.acl_file_full_path
            if target and not await asyncio.to_thread(_same_file, Path(target), manager.path):
                return f"{target} is not this broker's ACL file"
            await manager.update_global_white_addrs(split_list(h.global_white_addrs) or [])
            return None

        failed = ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
        return await self._change(failed, "updating globalWhiteRemoteAddresses", change)

    async def get_acl_version(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        manager = self.manager
        if manager is None:
            return _response(ResponseCode.SYSTEM_ERROR, ACL_DISABLED)
        data_version = manager.config.data_version.to_json()
        version = json.dumps(data_version, separators=(",", ":"), sort_keys=True)
        header = GetBrokerAclConfigResponseHeader(
            version=version,
            all_acl_file_version=json.dumps({str(manager.path): data_version}),
            broker_name=self.broker.config.broker_name,
            broker_addr=self.broker.broker_addr,
            cluster_name=self.broker.config.broker_cluster_name,
        )
        return _response(ResponseCode.SUCCESS, ext_fields=header.to_ext_fields())

    async def get_acl_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        manager = self.manager
        if manager is None:
            return _response(ResponseCode.SYSTEM_ERROR, ACL_DISABLED)
        raw = manager.config.raw
        body = GetBrokerClusterAclConfigResponseBody(
            global_white_addrs=list(manager.config.global_white_addrs),
            plain_access_configs=[
                shown_account(a) for a in raw.get(CONFIG_ACCOUNTS) or [] if isinstance(a, dict)
            ],
        )
        return _response(ResponseCode.SUCCESS, body=body.encode())


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (resolve() stats the disk: off the loop)."""
    return a.resolve() == b.resolve()
