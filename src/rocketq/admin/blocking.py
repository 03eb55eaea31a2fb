"""AdminClient: the blocking face of ``AsyncAdminClient`` for scripts, threads and Spark.

Each method runs the coroutine of the same name on the client's private loop thread
(``LoopThread``) and returns its result; see ``AsyncAdminClient`` for what each call does.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from rocketq.admin.client import AsyncAdminClient
from rocketq.admin.core import DEFAULT_TIMEOUT_S
from rocketq.admin.messages import MAX_TIMESTAMP, QueryResult
from rocketq.client.loop_thread import LoopThread
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import IllegalStateError
from rocketq.remoting.protocol.acl_bodies import (
    GetBrokerClusterAclConfigResponseBody,
    PlainAccessConfig,
)
from rocketq.remoting.protocol.admin_bodies import (
    ConsumerConnection,
    ConsumeStats,
    GroupList,
    ProducerConnection,
    TopicStatsTable,
)
from rocketq.remoting.protocol.consumer_bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
)
from rocketq.remoting.protocol.group_bodies import (
    ConsumerOffsetSerializeWrapper,
    DelayOffsetSerializeWrapper,
    QueryConsumeQueueResponseBody,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
)
from rocketq.remoting.protocol.headers import (
    GetBrokerAclConfigResponseHeader,
)
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper
from rocketq.remoting.protocol.stats_bodies import BrokerStatsData
from rocketq.remoting.protocol.topic_route import ClusterInfo, TopicRouteData

T = TypeVar("T")


class AdminClient:
    def __init__(
        self,
        namesrv_addr: str = "",
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        access_key: str = "",
        secret_key: str = "",
    ) -> None:
        self._namesrv_addr = namesrv_addr
        self._timeout_s = timeout_s
        self._credentials = (access_key, secret_key)
        self._loop: LoopThread | None = None
        self._impl: AsyncAdminClient | None = None

    def start(self) -> None:
        if self._loop is not None:
            raise IllegalStateError("the AdminClient is already started")
        self._loop = LoopThread.acquire()
        access_key, secret_key = self._credentials
        self._impl = AsyncAdminClient(
            self._namesrv_addr,
            timeout_s=self._timeout_s,
            access_key=access_key,
            secret_key=secret_key,
        )

    def shutdown(self) -> None:
        loop, impl, self._loop, self._impl = self._loop, self._impl, None, None
        if loop is None or impl is None:
            return
        try:
            loop.run(impl.close())
        finally:
            LoopThread.release()

    def __enter__(self) -> AdminClient:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    @property
    def impl(self) -> AsyncAdminClient:
        if self._impl is None:
            raise IllegalStateError("the AdminClient is not started")
        return self._impl

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coro.close()
            raise IllegalStateError("the AdminClient is not started")
        return self._loop.run(coro)

    # ------------------------------------------------------------------ name server

    def fetch_all_topic_list(self) -> set[str]:
        return self._run(self.impl.fetch_all_topic_list())

    def fetch_topics_by_cluster(self, cluster: str) -> set[str]:
        return self._run(self.impl.fetch_topics_by_cluster(cluster))

    def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        return self._run(self.impl.examine_topic_route_info(topic))

    def examine_broker_cluster_info(self) -> ClusterInfo:
        return self._run(self.impl.examine_broker_cluster_info())

    def put_kv_config(self, namespace: str, key: str, value: str) -> None:
        self._run(self.impl.put_kv_config(namespace, key, value))

    def get_kv_config(self, namespace: str, key: str) -> str | None:
        return self._run(self.impl.get_kv_config(namespace, key))

    def delete_kv_config(self, namespace: str, key: str) -> None:
        self._run(self.impl.delete_kv_config(namespace, key))

    def get_kv_list_by_namespace(self, namespace: str) -> dict[str, str]:
        return self._run(self.impl.get_kv_list_by_namespace(namespace))

    def wipe_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> int:
        return self._run(self.impl.wipe_write_perm_of_broker(namesrv_addr, broker_name))

    def add_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> int:
        return self._run(self.impl.add_write_perm_of_broker(namesrv_addr, broker_name))

    def delete_topic_in_namesrv(self, topic: str, cluster: str | None = None) -> None:
        self._run(self.impl.delete_topic_in_namesrv(topic, cluster))

    # ------------------------------------------------------------------ brokers

    def create_and_update_topic_config(self, broker_addr: str, config: TopicConfig) -> None:
        self._run(self.impl.create_and_update_topic_config(broker_addr, config))

    def master_addrs_of_cluster(self, cluster: str) -> dict[str, str]:
        return self._run(self.impl.master_addrs_of_cluster(cluster))

    def create_and_update_topic_config_in_cluster(
        self, cluster: str, config: TopicConfig
    ) -> list[str]:
        return self._run(self.impl.create_and_update_topic_config_in_cluster(cluster, config))

    def delete_topic(self, topic: str, cluster: str) -> None:
        self._run(self.impl.delete_topic(topic, cluster))

    def delete_topic_in_broker(self, broker_addrs: list[str], topic: str) -> None:
        self._run(self.impl.delete_topic_in_broker(broker_addrs, topic))

    def get_all_topic_config(self, broker_addr: str) -> TopicConfigSerializeWrapper:
        return self._run(self.impl.get_all_topic_config(broker_addr))

    def create_and_update_subscription_group_config(
        self, broker_addr: str, config: SubscriptionGroupConfig
    ) -> None:
        self._run(self.impl.create_and_update_subscription_group_config(broker_addr, config))

    def delete_subscription_group(
        self, broker_addr: str, group: str, *, remove_offset: bool = False
    ) -> None:
        self._run(
            self.impl.delete_subscription_group(broker_addr, group, remove_offset=remove_offset)
        )

    def get_all_subscription_group(self, broker_addr: str) -> SubscriptionGroupWrapper:
        return self._run(self.impl.get_all_subscription_group(broker_addr))

    def fetch_broker_runtime_stats(self, broker_addr: str) -> dict[str, str]:
        return self._run(self.impl.fetch_broker_runtime_stats(broker_addr))

    def get_broker_config(self, broker_addr: str) -> dict[str, str]:
        return self._run(self.impl.get_broker_config(broker_addr))

    def update_broker_config(self, broker_addr: str, properties: dict[str, str]) -> None:
        self._run(self.impl.update_broker_config(broker_addr, properties))

    def get_all_consumer_offset(self, broker_addr: str) -> ConsumerOffsetSerializeWrapper:
        return self._run(self.impl.get_all_consumer_offset(broker_addr))

    def get_all_delay_offset(self, broker_addr: str) -> DelayOffsetSerializeWrapper:
        return self._run(self.impl.get_all_delay_offset(broker_addr))

    def query_consume_queue(
        self,
        broker_addr: str,
        topic: str,
        queue_id: int,
        index: int,
        count: int,
        consumer_group: str | None = None,
    ) -> QueryConsumeQueueResponseBody:
        return self._run(
            self.impl.query_consume_queue(
                broker_addr, topic, queue_id, index, count, consumer_group
            )
        )

    # ------------------------------------------------------------------ consumers

    def examine_consume_stats(self, group: str, topic: str | None = None) -> ConsumeStats:
        return self._run(self.impl.examine_consume_stats(group, topic))

    def examine_topic_stats(self, topic: str) -> TopicStatsTable:
        return self._run(self.impl.examine_topic_stats(topic))

    def examine_consumer_connection_info(
        self, group: str, broker_addr: str | None = None
    ) -> ConsumerConnection:
        return self._run(self.impl.examine_consumer_connection_info(group, broker_addr))

    def examine_producer_connection_info(self, group: str, topic: str) -> ProducerConnection:
        return self._run(self.impl.examine_producer_connection_info(group, topic))

    def query_topic_consume_by_who(self, topic: str) -> GroupList:
        return self._run(self.impl.query_topic_consume_by_who(topic))

    def get_consumer_running_info(
        self, group: str, client_id: str, *, jstack: bool = False, broker_addr: str | None = None
    ) -> ConsumerRunningInfo:
        return self._run(
            self.impl.get_consumer_running_info(
                group, client_id, jstack=jstack, broker_addr=broker_addr
            )
        )

    def consume_message_directly(
        self, group: str, client_id: str, topic: str, msg_id: str
    ) -> ConsumeMessageDirectlyResult:
        return self._run(self.impl.consume_message_directly(group, client_id, topic, msg_id))

    def reset_offset_by_timestamp(
        self, topic: str, group: str, timestamp_ms: int, *, is_force: bool = True
    ) -> dict[MessageQueue, int]:
        return self._run(
            self.impl.reset_offset_by_timestamp(topic, group, timestamp_ms, is_force=is_force)
        )

    # ------------------------------------------------------------------ messages

    def view_message(self, msg_id: str, topic: str | None = None) -> MessageExt:
        return self._run(self.impl.view_message(msg_id, topic))

    def query_message(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
    ) -> QueryResult:
        return self._run(self.impl.query_message(topic, key, max_num, begin_ms, end_ms))

    def query_message_by_uniq_key(self, topic: str, uniq_key: str) -> MessageExt | None:
        return self._run(self.impl.query_message_by_uniq_key(topic, uniq_key))

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return self._run(self.impl.search_offset(mq, timestamp_ms))

    def max_offset(self, mq: MessageQueue) -> int:
        return self._run(self.impl.max_offset(mq))

    def min_offset(self, mq: MessageQueue) -> int:
        return self._run(self.impl.min_offset(mq))

    def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return self._run(self.impl.earliest_msg_store_time(mq))

    # ------------------------------------------------------------------ ACL

    def create_and_update_plain_access_config(
        self, broker_addr: str, config: PlainAccessConfig
    ) -> None:
        self._run(self.impl.create_and_update_plain_access_config(broker_addr, config))

    def delete_plain_access_config(self, broker_addr: str, access_key: str) -> None:
        self._run(self.impl.delete_plain_access_config(broker_addr, access_key))

    def update_global_white_addr_config(self, broker_addr: str, addrs: list[str]) -> None:
        self._run(self.impl.update_global_white_addr_config(broker_addr, addrs))

    def examine_broker_cluster_acl_version_info(
        self, broker_addr: str
    ) -> tuple[GetBrokerAclConfigResponseHeader, dict[str, int]]:
        return self._run(self.impl.examine_broker_cluster_acl_version_info(broker_addr))

    def get_broker_cluster_acl_config(
        self, broker_addr: str
    ) -> GetBrokerClusterAclConfigResponseBody:
        return self._run(self.impl.get_broker_cluster_acl_config(broker_addr))

    # ------------------------------------------------------------------ operations (issue 12)

    def view_broker_stats_data(
        self, broker_addr: str, stats_name: str, stats_key: str
    ) -> BrokerStatsData:
        return self._run(self.impl.view_broker_stats_data(broker_addr, stats_name, stats_key))

    def messages_of_queue(
        self, mq: MessageQueue, begin_offset: int, count: int
    ) -> list[MessageExt]:
        return self._run(self.impl.messages_of_queue(mq, begin_offset, count))

    def query_msg_by_offset(self, mq: MessageQueue, offset: int) -> MessageExt:
        return self._run(self.impl.query_msg_by_offset(mq, offset))

    # ------------------------------------------------------------------ Spark (issue 17)

    def master_addrs_of_topic(self, topic: str) -> dict[str, str]:
        return self._run(self.impl.master_addrs_of_topic(topic))

    def fetch_subscribe_message_queues(self, topic: str) -> set[MessageQueue]:
        return self._run(self.impl.fetch_subscribe_message_queues(topic))

    def update_consume_offset(
        self, broker_addr: str, group: str, mq: MessageQueue, offset: int
    ) -> None:
        self._run(self.impl.update_consume_offset(broker_addr, group, mq, offset))

    def register_consumer_group(
        self, group: str, topics: Sequence[str], client_id: str
    ) -> list[str]:
        return self._run(self.impl.register_consumer_group(group, topics, client_id))
