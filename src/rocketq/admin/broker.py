"""DefaultMQAdminExt's broker calls: topics, subscription groups, runtime info, broker config,
and the offset tables (GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET, QUERY_CONSUME_QUEUE)."""

from __future__ import annotations

import json

from rocketq.admin.core import AdminCore
from rocketq.common.attribute import TopicMessageType, parse_to_string
from rocketq.common.java_properties import parse_properties
from rocketq.common.topic import AUTO_CREATE_TOPIC_KEY_TOPIC
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.group_bodies import (
    ConsumerOffsetSerializeWrapper,
    DelayOffsetSerializeWrapper,
    QueryConsumeQueueResponseBody,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
)
from rocketq.remoting.protocol.headers import (
    DeleteSubscriptionGroupRequestHeader,
    QueryConsumeQueueRequestHeader,
)
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper
from rocketq.remoting.protocol.topic_route import KVTable


class BrokerAdmin(AdminCore):
    async def create_and_update_topic_config(self, broker_addr: str, config: TopicConfig) -> None:
        """UPDATE_AND_CREATE_TOPIC (17); the broker registers the topic with the name servers.

        As in RocketMQ 5's DefaultMQAdminExt, ``config.attributes`` is the attribute change
        (``{"+message.type": "FIFO", "-reserve.time": ""}``, ``common.attribute.parse_to_map``
        of updateTopic's ``-a``); the broker applies it to the topic's stored attributes."""
        header = h.CreateTopicRequestHeader(
            topic=config.topic_name,
            default_topic=AUTO_CREATE_TOPIC_KEY_TOPIC,
            read_queue_nums=config.read_queue_nums,
            write_queue_nums=config.write_queue_nums,
            perm=config.perm,
            topic_filter_type=config.topic_filter_type,
            topic_sys_flag=config.topic_sys_flag,
            order=config.order,
            attributes=parse_to_string(config.attributes) or None,
        )
        await self.call(broker_addr, RequestCode.UPDATE_AND_CREATE_TOPIC, header)

    async def delete_topic_in_broker(self, broker_addrs: list[str], topic: str) -> None:
        """DELETE_TOPIC_IN_BROKER (215) on each address."""
        for addr in broker_addrs:
            await self.call(
                addr, RequestCode.DELETE_TOPIC_IN_BROKER, h.DeleteTopicRequestHeader(topic=topic)
            )

    async def get_all_topic_config(self, broker_addr: str) -> TopicConfigSerializeWrapper:
        """GET_ALL_TOPIC_CONFIG (21)."""
        response = await self.call(broker_addr, RequestCode.GET_ALL_TOPIC_CONFIG)
        return TopicConfigSerializeWrapper.decode(response.body)

    async def examine_topic_config(self, broker_addr: str, topic: str) -> TopicConfig | None:
        """The broker's config of ``topic`` (queues, perm, attributes), None when it has none
        (RocketMQ 5's examineTopicConfig, read here from GET_ALL_TOPIC_CONFIG)."""
        wrapper = await self.get_all_topic_config(broker_addr)
        return wrapper.topic_config_table.get(topic)

    async def examine_topic_message_types(self, topic: str) -> dict[str, TopicMessageType | None]:
        """broker name -> the ``message.type`` of ``topic`` on that master (None when the
        broker has no config of it), for every broker in the topic's route."""
        types: dict[str, TopicMessageType | None] = {}
        for name, addr in (await self.master_addrs_of_topic(topic)).items():
            tc = await self.examine_topic_config(addr, topic)
            types[name] = None if tc is None else tc.topic_message_type
        return types

    async def create_and_update_subscription_group_config(
        self, broker_addr: str, config: SubscriptionGroupConfig
    ) -> None:
        """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200); ``config.attributes`` is a change
        (signed keys), as for topics."""
        await self.call(
            broker_addr, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=config.encode()
        )

    async def delete_subscription_group(
        self, broker_addr: str, group: str, *, remove_offset: bool = False
    ) -> None:
        """DELETE_SUBSCRIPTIONGROUP (207); ``remove_offset`` also drops its consumer offsets."""
        header = DeleteSubscriptionGroupRequestHeader(group_name=group, remove_offset=remove_offset)
        await self.call(broker_addr, RequestCode.DELETE_SUBSCRIPTIONGROUP, header)

    async def get_all_subscription_group(self, broker_addr: str) -> SubscriptionGroupWrapper:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)."""
        response = await self.call(broker_addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
        return SubscriptionGroupWrapper.decode(response.body)

    async def fetch_broker_runtime_stats(self, broker_addr: str) -> dict[str, str]:
        """GET_BROKER_RUNTIME_INFO (28): the broker's KVTable."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return KVTable.decode(response.body).table

    async def get_broker_config(self, broker_addr: str) -> dict[str, str]:
        """GET_BROKER_CONFIG (26): the broker's settings as camelCase properties."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_CONFIG)
        return parse_properties(response.body.decode("utf-8"))

    async def get_broker_config_version(self, broker_addr: str) -> dict[str, int]:
        """The configuration's data version (GET_BROKER_CONFIG's ``version`` field)."""
        response = await self.call(broker_addr, RequestCode.GET_BROKER_CONFIG)
        version = json.loads(response.ext_fields.get("version") or "{}")
        return {str(k): int(v) for k, v in version.items()}

    async def update_broker_config(self, broker_addr: str, properties: dict[str, str]) -> None:
        """UPDATE_BROKER_CONFIG (25); a key the broker does not apply raises with its name."""
        text = "".join(f"{k}={v}\n" for k, v in properties.items())
        await self.call(broker_addr, RequestCode.UPDATE_BROKER_CONFIG, body=text.encode())

    async def get_all_consumer_offset(self, broker_addr: str) -> ConsumerOffsetSerializeWrapper:
        """GET_ALL_CONSUMER_OFFSET (43): every ``topic@group`` offset table of the broker."""
        response = await self.call(broker_addr, RequestCode.GET_ALL_CONSUMER_OFFSET)
        return ConsumerOffsetSerializeWrapper.decode(response.body)

    async def get_all_delay_offset(self, broker_addr: str) -> DelayOffsetSerializeWrapper:
        """GET_ALL_DELAY_OFFSET (45): the schedule service's progress per delay level."""
        response = await self.call(broker_addr, RequestCode.GET_ALL_DELAY_OFFSET)
        return DelayOffsetSerializeWrapper.decode(response.body)

    async def query_consume_queue(
        self,
        broker_addr: str,
        topic: str,
        queue_id: int,
        index: int,
        count: int,
        consumer_group: str | None = None,
    ) -> QueryConsumeQueueResponseBody:
        """QUERY_CONSUME_QUEUE (321): ``count`` units of a consume queue from ``index``."""
        header = QueryConsumeQueueRequestHeader(
            topic=topic, queue_id=queue_id, index=index, count=count, consumer_group=consumer_group
        )
        response = await self.call(broker_addr, RequestCode.QUERY_CONSUME_QUEUE, header)
        return QueryConsumeQueueResponseBody.decode(response.body)
