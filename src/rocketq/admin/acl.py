"""AclAdmin: DefaultMQAdminExt's ACL calls (MQClientAPIImpl's ACL requests, codes 50-54).

They go to one broker on the admin client's own connections; sign them by giving the client
an admin account (``AsyncAdminClient(..., access_key=..., secret_key=...)``). A refusal
raises the response's ``BrokerResponseError`` (``NoPermissionError`` for a non-admin).
"""

from __future__ import annotations

import json

from rocketq.admin.core import AdminCore
from rocketq.remoting.protocol import acl_headers as ah
from rocketq.remoting.protocol.acl_bodies import (
    GetBrokerClusterAclConfigResponseBody,
    PlainAccessConfig,
)
from rocketq.remoting.protocol.acl_headers import GetBrokerAclConfigResponseHeader
from rocketq.remoting.protocol.codes import RequestCode


class AclAdmin(AdminCore):
    async def create_and_update_plain_access_config(
        self, broker_addr: str, config: PlainAccessConfig
    ) -> None:
        """UPDATE_AND_CREATE_ACL_CONFIG (50)."""
        header = ah.CreateAccessConfigRequestHeader(
            access_key=config.access_key,
            secret_key=config.secret_key,
            white_remote_address=config.white_remote_address,
            admin=config.admin,
            default_topic_perm=config.default_topic_perm,
            default_group_perm=config.default_group_perm,
            topic_perms=",".join(config.topic_perms) or None,
            group_perms=",".join(config.group_perms) or None,
        )
        await self.call(broker_addr, RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, header)

    async def delete_plain_access_config(self, broker_addr: str, access_key: str) -> None:
        """DELETE_ACL_CONFIG (51)."""
        header = ah.DeleteAccessConfigRequestHeader(access_key=access_key)
        await self.call(broker_addr, RequestCode.DELETE_ACL_CONFIG, header)

    async def update_global_white_addr_config(
        self, broker_addr: str, addrs: list[str], acl_file_full_path: str | None = None
    ) -> None:
        """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53); the broker refuses a file not its own."""
        header = ah.UpdateGlobalWhiteAddrsConfigRequestHeader(
            global_white_addrs=",".join(addrs), acl_file_full_path=acl_file_full_path
        )
        await self.call(broker_addr, RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, header)

    async def examine_broker_cluster_acl_version_info(
        self, broker_addr: str
    ) -> tuple[GetBrokerAclConfigResponseHeader, dict[str, int]]:
        """GET_BROKER_CLUSTER_ACL_INFO (52): the broker and its ACL file's data version
        (``counter``, ``timestamp``)."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_CLUSTER_ACL_INFO)
        header = GetBrokerAclConfigResponseHeader.from_ext_fields(response.ext_fields)
        return header, json.loads(header.version)

    async def get_broker_cluster_acl_config(
        self, broker_addr: str
    ) -> GetBrokerClusterAclConfigResponseBody:
        """GET_BROKER_CLUSTER_ACL_CONFIG (54): the accounts (secrets left out) and white list."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG)
        return GetBrokerClusterAclConfigResponseBody.decode(response.body)
