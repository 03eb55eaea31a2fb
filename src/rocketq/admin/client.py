"""AsyncAdminClient: DefaultMQAdminExt in Python, on asyncio.

One object holding every admin call, grouped by where it goes: name servers
(``NamesrvAdmin``), brokers (``BrokerAdmin``), consumers through brokers
(``ConsumerAdmin``), messages (``MessageAdmin``), ACL accounts (``AclAdmin``),
controllers (``ControllerAdmin``) and maintenance (``MaintenanceAdmin``)::

    async with AsyncAdminClient("127.0.0.1:9876") as admin:
        stats = await admin.examine_consume_stats("group")
        print(stats.compute_total_diff())

Results are typed dataclasses (the remoting body classes, ``QueryResult``, ``MessageExt``);
failures raise ``rocketq.errors`` exceptions (a broker's refusal: the BrokerResponseError of
its code, with its remark). ``AdminClient`` in ``rocketq.admin.blocking`` is the same API for
threads and scripts.
"""

from __future__ import annotations

from rocketq.admin.acl import AclAdmin
from rocketq.admin.broker import BrokerAdmin
from rocketq.admin.consumer import ConsumerAdmin
from rocketq.admin.controller import ControllerAdmin
from rocketq.admin.maintenance import MaintenanceAdmin
from rocketq.admin.namesrv import NamesrvAdmin
from rocketq.admin.stats import StatsAdmin
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import ClientError
from rocketq.remoting.protocol.topic_route import MASTER_ID


class AsyncAdminClient(
    MaintenanceAdmin,
    StatsAdmin,
    ConsumerAdmin,
    NamesrvAdmin,
    BrokerAdmin,
    AclAdmin,
    ControllerAdmin,
):
    async def __aenter__(self) -> AsyncAdminClient:
        return self

    async def master_addrs_of_cluster(self, cluster: str) -> dict[str, str]:
        """broker name -> master address of every broker of ``cluster`` (CommandUtil)."""
        info = await self.examine_broker_cluster_info()
        names = info.cluster_addr_table.get(cluster)
        if not names:
            raise ClientError(f"the cluster {cluster} has no broker")
        masters = {
            name: info.broker_addr_table[name].broker_addrs[MASTER_ID]
            for name in sorted(names)
            if name in info.broker_addr_table
            and MASTER_ID in info.broker_addr_table[name].broker_addrs
        }
        if not masters:
            raise ClientError(f"the cluster {cluster} has no master broker")
        return masters

    async def fetch_broker_names_of_cluster(self, cluster: str) -> list[str]:
        """The broker names of ``cluster`` (CommandUtil.fetchBrokerNameByClusterName)."""
        names = (await self.examine_broker_cluster_info()).cluster_addr_table.get(cluster)
        if not names:
            raise ClientError(f"the cluster {cluster} has no broker")
        return sorted(names)

    async def fetch_master_and_slave_addrs(
        self, *, cluster: str | None = None, broker_name: str | None = None
    ) -> list[str]:
        """Every replica's address of ``broker_name``, or of every broker of ``cluster``
        (CommandUtil.fetchMasterAndSlaveAddrByBrokerName / ByClusterName)."""
        info = await self.examine_broker_cluster_info()
        if broker_name is not None:
            names = [broker_name]
        elif cluster is not None:
            names = sorted(info.cluster_addr_table.get(cluster) or ())
        else:
            raise ValueError("give a cluster or a broker name")
        addrs = [
            addr
            for name in names
            if name in info.broker_addr_table
            for _, addr in sorted(info.broker_addr_table[name].broker_addrs.items())
        ]
        if not addrs:
            raise ClientError(f"no broker of {broker_name or cluster} is registered")
        return addrs

    async def create_and_update_topic_config_in_cluster(
        self, cluster: str, config: TopicConfig
    ) -> list[str]:
        """``mqadmin updateTopic -c``: the topic on every master of ``cluster``; returns them."""
        masters = list((await self.master_addrs_of_cluster(cluster)).values())
        for addr in masters:
            await self.create_and_update_topic_config(addr, config)
        return masters

    async def delete_topic(self, topic: str, cluster: str) -> None:
        """``mqadmin deleteTopic -c``: from every master of ``cluster``, then the name servers."""
        masters = list((await self.master_addrs_of_cluster(cluster)).values())
        await self.delete_topic_in_broker(masters, topic)
        await self.delete_topic_in_namesrv(topic, cluster)
