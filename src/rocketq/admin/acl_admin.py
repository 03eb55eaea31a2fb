"""The ACL calls of DefaultMQAdminExt (``rocketq.admin.acl``) on the admin client's own
connections; sign them by giving the client an admin account (``access_key``/``secret_key``)."""

from __future__ import annotations

from rocketq.admin import acl
from rocketq.admin.core import AdminCore
from rocketq.remoting.protocol.acl_bodies import (
    GetBrokerClusterAclConfigResponseBody,
    PlainAccessConfig,
)
from rocketq.remoting.protocol.headers import (
    GetBrokerAclConfigResponseHeader,
)


class AclAdmin(AdminCore):
    async def create_and_update_plain_access_config(
        self, broker_addr: str, config: PlainAccessConfig
    ) -> None:
        """UPDATE_AND_CREATE_ACL_CONFIG (50)."""
        await acl.create_or_update_access_config(self.remoting, broker_addr, config, self.timeout_s)

    async def delete_plain_access_config(self, broker_addr: str, access_key: str) -> None:
        """DELETE_ACL_CONFIG (51)."""
        await acl.delete_access_config(self.remoting, broker_addr, access_key, self.timeout_s)

    async def update_global_white_addr_config(self, broker_addr: str, addrs: list[str]) -> None:
        """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53)."""
        await acl.update_global_white_addrs(
            self.remoting, broker_addr, addrs, timeout_s=self.timeout_s
        )

    async def examine_broker_cluster_acl_version_info(
        self, broker_addr: str
    ) -> tuple[GetBrokerAclConfigResponseHeader, dict[str, int]]:
        """GET_BROKER_CLUSTER_ACL_INFO (52): the broker and its ACL file's data version."""
        return await acl.get_broker_cluster_acl_info(self.remoting, broker_addr, self.timeout_s)

    async def get_broker_cluster_acl_config(
        self, broker_addr: str
    ) -> GetBrokerClusterAclConfigResponseBody:
        """The ACL accounts and global white list of the broker (secrets left out)."""
        return await acl.get_broker_cluster_acl_config(self.remoting, broker_addr, self.timeout_s)
