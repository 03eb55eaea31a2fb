"""ControllerAdmin: DefaultMQAdminExt's controller calls (RocketMQ 5's ``MQClientAPIImpl``
``getControllerMetaData``, ``getInSyncStateData``, ``getBrokerEpochCache``, ``electMaster``,
``getControllerConfig``, ``updateControllerConfig``, ``cleanControllerBrokerData``).

A controller address is any controller of the group (mqadmin's ``-a``): the calls that read or
change the replicated state ask it for the leader (CONTROLLER_GET_METADATA_INFO) and go there,
as RocketMQ does; the config calls go to each address given, since each controller has its own.
A refusal raises the ``BrokerResponseError`` of its code (e.g. CONTROLLER_MASTER_STILL_EXIST,
2011, with RocketMQ's remark).
"""

from __future__ import annotations

from rocketq.admin.core import AdminCore
from rocketq.common.java_properties import parse_properties
from rocketq.errors import ClientError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.controller_bodies import (
    BrokerMemberGroup,
    BrokerNameList,
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    EpochEntryCache,
)
from rocketq.remoting.protocol.controller_headers import (
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
)


class ControllerAdmin(AdminCore):
    async def get_controller_meta_data(self, controller_addr: str) -> GetMetaDataResponseHeader:
        """CONTROLLER_GET_METADATA_INFO (1005): the group, its leader and its peers."""
        response = await self.call(controller_addr, RequestCode.CONTROLLER_GET_METADATA_INFO)
        return GetMetaDataResponseHeader.from_ext_fields(response.ext_fields)

    async def controller_leader_addr(self, controller_addr: str) -> str:
        """The leader's address, as the controller at ``controller_addr`` knows it."""
        meta = await self.get_controller_meta_data(controller_addr)
        if not meta.controller_leader_address:
            raise ClientError(f"controller {controller_addr} knows no leader of {meta.group}")
        return meta.controller_leader_address

    async def get_in_sync_state_data(
        self, controller_addr: str, broker_names: list[str]
    ) -> BrokerReplicasInfo:
        """CONTROLLER_GET_SYNC_STATE_DATA (1006): each broker set's master, epochs and
        replicas in and out of the SyncStateSet (mqadmin getSyncStateSet)."""
        leader = await self.controller_leader_addr(controller_addr)
        body = BrokerNameList(list(broker_names)).encode()
        response = await self.call(leader, RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, body=body)
        return BrokerReplicasInfo.decode(response.body)

    async def get_broker_epoch_cache(self, broker_addr: str) -> EpochEntryCache:
        """GET_BROKER_EPOCH_CACHE (1007), asked of a broker: its epoch entries and max offset.
        A broker not in controller mode refuses (RocketMQ: SYSTEM_ERROR)."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_EPOCH_CACHE)
        return EpochEntryCache.decode(response.body)

    async def elect_master(
        self, controller_addr: str, cluster: str, broker_name: str, broker_id: int
    ) -> tuple[ElectMasterResponseHeader, BrokerMemberGroup | None]:
        """CONTROLLER_ELECT_MASTER (1002) with ``designateElect``: make ``broker_id`` the
        master of ``broker_name`` (mqadmin electMaster); the new master and the members."""
        leader = await self.controller_leader_addr(controller_addr)
        header = ElectMasterRequestHeader(
            cluster_name=cluster, broker_name=broker_name, broker_id=broker_id, designate_elect=True
        )
        response = await self.call(leader, RequestCode.CONTROLLER_ELECT_MASTER, header)
        body = ElectMasterResponseBody.decode(response.body) if response.body else None
        members = body.broker_member_group if body is not None else None
        return ElectMasterResponseHeader.from_ext_fields(response.ext_fields), members

    async def get_controller_config(self, controller_addrs: list[str]) -> dict[str, dict[str, str]]:
        """GET_CONTROLLER_CONFIG (1010) of each controller: address -> its properties."""
        configs = {}
        for addr in controller_addrs:
            response = await self.call(addr, RequestCode.GET_CONTROLLER_CONFIG)
            configs[addr] = parse_properties(response.body.decode("utf-8"))
        return configs

    async def update_controller_config(
        self, properties: dict[str, str], controller_addrs: list[str]
    ) -> None:
        """UPDATE_CONTROLLER_CONFIG (1009) on each controller; a black-listed key is refused
        (NoPermissionError)."""
        text = "".join(f"{k}={v}\n" for k, v in properties.items())
        for addr in controller_addrs:
            await self.call(addr, RequestCode.UPDATE_CONTROLLER_CONFIG, body=text.encode())

    async def clean_controller_broker_data(
        self,
        controller_addr: str,
        cluster: str | None,
        broker_name: str,
        broker_controller_ids_to_clean: str | None = None,
        is_clean_living_broker: bool = False,
    ) -> None:
        """CLEAN_BROKER_DATA (1011): forget some ids (``1;2``) or the whole broker set
        (mqadmin cleanBrokerMetadata)."""
        leader = await self.controller_leader_addr(controller_addr)
        header = CleanControllerBrokerDataRequestHeader(
            cluster_name=cluster,
            broker_name=broker_name,
            broker_controller_ids_to_clean=broker_controller_ids_to_clean,
            is_clean_living_broker=is_clean_living_broker,
        )
        await self.call(leader, RequestCode.CLEAN_BROKER_DATA, header)
