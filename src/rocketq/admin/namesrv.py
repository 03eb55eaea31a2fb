"""DefaultMQAdminExt's name-server calls: topic list, routes, the queues a topic is read from,
cluster info, KV config, write permission of a broker, deleting a topic's route, topics of a
cluster."""

from __future__ import annotations

from rocketq.admin.core import AdminCore
from rocketq.client.aio.instance import subscribe_info_of
from rocketq.common.message import MessageQueue
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol import namesrv_headers as nh
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.topic_route import ClusterInfo, KVTable, TopicList
from rocketq.response_code import ResponseCode


class NamesrvAdmin(AdminCore):
    async def fetch_all_topic_list(self) -> set[str]:
        """GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)."""
        response = await self.call(None, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
        return TopicList.decode(response.body).topic_list

    async def fetch_topics_by_cluster(self, cluster: str) -> set[str]:
        """GET_TOPICS_BY_CLUSTER (224)."""
        header = h.GetTopicsByClusterRequestHeader(cluster=cluster)
        response = await self.call(None, RequestCode.GET_TOPICS_BY_CLUSTER, header)
        return TopicList.decode(response.body).topic_list

    async def fetch_subscribe_message_queues(self, topic: str) -> set[MessageQueue]:
        """The readable queues of ``topic`` from its route (MQAdminImpl
        .fetchSubscribeMessageQueues); TopicNotExistError when the topic has no route."""
        return subscribe_info_of(topic, await self.examine_topic_route_info(topic))

    async def examine_broker_cluster_info(self) -> ClusterInfo:
        """GET_BROKER_CLUSTER_INFO (106)."""
        response = await self.call(None, RequestCode.GET_BROKER_CLUSTER_INFO)
        return ClusterInfo.decode(response.body)

    async def put_kv_config(self, namespace: str, key: str, value: str) -> None:
        """PUT_KV_CONFIG (100) on every name server, as createAndUpdateKvConfig does."""
        header = nh.PutKVConfigRequestHeader(namespace=namespace, key=key, value=value)
        for addr in self.remoting.get_namesrv_addr_list():
            await self.call(addr, RequestCode.PUT_KV_CONFIG, header)

    async def get_kv_config(self, namespace: str, key: str) -> str | None:
        """GET_KV_CONFIG (101); None when the name server has no such item."""
        header = nh.GetKVConfigRequestHeader(namespace=namespace, key=key)
        response = await self.call(
            None, RequestCode.GET_KV_CONFIG, header, accept=(ResponseCode.QUERY_NOT_FOUND,)
        )
        if response.code == ResponseCode.QUERY_NOT_FOUND:
            return None
        return nh.GetKVConfigResponseHeader.from_ext_fields(response.ext_fields).value

    async def delete_kv_config(self, namespace: str, key: str) -> None:
        """DELETE_KV_CONFIG (102) on every name server."""
        header = nh.DeleteKVConfigRequestHeader(namespace=namespace, key=key)
        for addr in self.remoting.get_namesrv_addr_list():
            await self.call(addr, RequestCode.DELETE_KV_CONFIG, header)

    async def get_kv_list_by_namespace(self, namespace: str) -> dict[str, str]:
        """GET_KVLIST_BY_NAMESPACE (219); empty when the namespace has no item."""
        header = nh.GetKVListByNamespaceRequestHeader(namespace=namespace)
        response = await self.call(
            None,
            RequestCode.GET_KVLIST_BY_NAMESPACE,
            header,
            accept=(ResponseCode.QUERY_NOT_FOUND,),
        )
        if response.code == ResponseCode.QUERY_NOT_FOUND:
            return {}
        return KVTable.decode(response.body).table

    async def wipe_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> int:
        """WIPE_WRITE_PERM_OF_BROKER (205): the number of topics whose write perm was removed."""
        header = nh.WipeWritePermOfBrokerRequestHeader(broker_name=broker_name)
        response = await self.call(namesrv_addr, RequestCode.WIPE_WRITE_PERM_OF_BROKER, header)
        rh = nh.WipeWritePermOfBrokerResponseHeader.from_ext_fields(response.ext_fields)
        return rh.wipe_topic_count

    async def add_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> int:
        """ADD_WRITE_PERM_OF_BROKER (327): the number of topics made writable again."""
        header = nh.AddWritePermOfBrokerRequestHeader(broker_name=broker_name)
        response = await self.call(namesrv_addr, RequestCode.ADD_WRITE_PERM_OF_BROKER, header)
        return nh.AddWritePermOfBrokerResponseHeader.from_ext_fields(
            response.ext_fields
        ).add_topic_count

    async def delete_topic_in_namesrv(self, topic: str, cluster: str | None = None) -> None:
        """DELETE_TOPIC_IN_NAMESRV (216) on every name server."""
        header = h.DeleteTopicFromNamesrvRequestHeader(topic=topic, cluster_name=cluster)
        for addr in self.remoting.get_namesrv_addr_list():
            await self.call(addr, RequestCode.DELETE_TOPIC_IN_NAMESRV, header)
