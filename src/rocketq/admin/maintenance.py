"""DefaultMQAdminExt's maintenance calls behind mqadmin's getNamesrvConfig,
updateNamesrvConfig, updateTopicPerm, updateOrderConf, cloneGroupOffset, getConsumerConfig,
allocateMQ and exportMetadata/exportConfigs."""

from __future__ import annotations

import dataclasses
from typing import Any

from rocketq.admin.broker import BrokerAdmin
from rocketq.admin.consumer import ConsumerAdmin
from rocketq.admin.namesrv import NamesrvAdmin
from rocketq.client.allocate_strategy import allocate_strategy
from rocketq.common.java_properties import parse_properties
from rocketq.common.message import MessageQueue
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import ClientError, TopicNotExistError
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol.admin_bodies import ConsumeStats, CreateTopicListRequestBody
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.json_body import to_json

#: the name server's KV namespace of ordered topics (NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG)
NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


class MaintenanceAdmin(ConsumerAdmin, NamesrvAdmin, BrokerAdmin):
    async def get_namesrv_config(self) -> dict[str, dict[str, str]]:
        """GET_NAMESRV_CONFIG (319) of every name server: address -> its properties."""
        configs = {}
        for addr in self.remoting.get_namesrv_addr_list():
            response = await self.call(addr, RequestCode.GET_NAMESRV_CONFIG)
            configs[addr] = parse_properties(response.body.decode("utf-8"))
        return configs

    async def update_namesrv_config(self, properties: dict[str, str]) -> list[str]:
        """UPDATE_NAMESRV_CONFIG (318) on every name server; returns their addresses."""
        body = "".join(f"{k}={v}\n" for k, v in properties.items()).encode()
        addrs = self.remoting.get_namesrv_addr_list()
        for addr in addrs:
            await self.call(addr, RequestCode.UPDATE_NAMESRV_CONFIG, body=body)
        return addrs

    async def update_topic_perm(self, broker_addrs: list[str], topic: str, perm: int) -> list[str]:
        """UpdateTopicPermSubCommand: the topic's perm on each broker that has it; returns the
        brokers changed. TopicNotExistError when none of them has the topic."""
        changed = []
        for addr in broker_addrs:
            config = await self.examine_topic_config(addr, topic)
            if config is None:
                continue
            await self.create_and_update_topic_config(addr, dataclasses.replace(config, perm=perm))
            changed.append(addr)
        if not changed:
            raise TopicNotExistError(f"topic {topic} is on none of {', '.join(broker_addrs)}")
        return changed

    async def create_and_update_topic_config_list(
        self, broker_addr: str, configs: list[TopicConfig]
    ) -> None:
        """updateTopicList: every topic on one broker in one UPDATE_AND_CREATE_TOPIC_LIST (18)
        (RocketMQ 5's createAndUpdateTopicConfigList); each config's ``attributes`` is its
        attribute change (``{"+message.type": "FIFO"}``), as with updateTopic."""
        if not configs:
            return
        body = CreateTopicListRequestBody(topic_config_list=list(configs)).encode()
        await self.call(broker_addr, RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, body=body)

    async def create_and_update_subscription_group_config_list(
        self, broker_addr: str, configs: list[SubscriptionGroupConfig]
    ) -> None:
        """updateSubGroupList: each group on one broker (mqadmin's one
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225) is one request per group here)."""
        for config in configs:
            await self.create_and_update_subscription_group_config(broker_addr, config)

    async def update_order_conf(self, topic: str, order_conf: str | None, method: str) -> str:
        """UpdateOrderConfCommand: ``put`` (``brokerName:queueNum;...``), ``get`` or ``delete``
        the ordered-topic KV item of ``topic``; returns what the name server holds after."""
        if method == "put":
            if not order_conf:
                raise ClientError("put needs the order conf, brokerName:queueNum;...")
            await self.put_kv_config(NAMESPACE_ORDER_TOPIC_CONFIG, topic, order_conf)
        elif method == "delete":
            await self.delete_kv_config(NAMESPACE_ORDER_TOPIC_CONFIG, topic)
        elif method != "get":
            raise ClientError(f"method must be get, put or delete, not {method!r}")
        return await self.get_kv_config(NAMESPACE_ORDER_TOPIC_CONFIG, topic) or ""

    async def clone_group_offset(
        self, src_group: str, dest_group: str, topic: str
    ) -> dict[MessageQueue, int]:
        """cloneGroupOffset: ``dest_group`` takes ``src_group``'s committed offset of every
        queue of ``topic``. mqadmin asks each broker with CLONE_GROUP_OFFSET (314); rocketq's
        broker has no processor for it, so each offset is written with UPDATE_CONSUMER_OFFSET."""
        header = h.GetConsumeStatsRequestHeader(consumer_group=src_group, topic=topic)
        cloned: dict[MessageQueue, int] = {}
        for addr in (await self.master_addrs_of_topic(topic)).values():
            response = await self.call(addr, RequestCode.GET_CONSUME_STATS, header)
            for data, wrapper in ConsumeStats.decode(response.body).offset_table.items():
                if wrapper.consumer_offset < 0:
                    continue
                mq = MessageQueue(data.topic, data.broker_name, data.queue_id)
                await self.update_consume_offset(addr, dest_group, mq, wrapper.consumer_offset)
                cloned[mq] = wrapper.consumer_offset
        return dict(sorted(cloned.items()))

    async def fetch_consume_stats_in_broker(
        self, broker_addr: str, *, is_order: bool = False
    ) -> dict[str, ConsumeStats]:
        """brokerConsumeStats: every group's consume stats on one broker (group -> stats), of
        the orderly groups only with ``is_order``. mqadmin asks GET_BROKER_CONSUME_STATS (317),
        which rocketq's broker does not serve; the groups come from its committed offsets
        (GET_ALL_CONSUMER_OFFSET) and each group's stats from GET_CONSUME_STATS."""
        offsets = await self.get_all_consumer_offset(broker_addr)
        groups = sorted({key.partition("@")[2] for key in offsets.offset_table})
        if is_order:
            table = (await self.get_all_subscription_group(broker_addr)).subscription_group_table
            groups = [g for g in groups if g in table and table[g].orderly]
        found = {}
        for group in groups:
            header = h.GetConsumeStatsRequestHeader(consumer_group=group, topic=None)
            response = await self.call(broker_addr, RequestCode.GET_CONSUME_STATS, header)
            found[group] = ConsumeStats.decode(response.body)
        return found

    async def get_consumer_config(
        self, group: str, broker_addrs: dict[str, str]
    ) -> dict[str, SubscriptionGroupConfig]:
        """GetConsumerConfigSubCommand: ``group``'s subscription group config on each broker
        (name -> address) that has it."""
        found = {}
        for name, addr in broker_addrs.items():
            table = (await self.get_all_subscription_group(addr)).subscription_group_table
            if group in table:
                found[name] = table[group]
        return found

    async def allocate_mq(self, topic: str, ip_list: list[str]) -> dict[str, list[MessageQueue]]:
        """AllocateMQSubCommand: which queues of ``topic`` each client (by IP) would take with
        AllocateMessageQueueAveragely."""
        queues = sorted(await self.fetch_subscribe_message_queues(topic))
        clients = sorted(ip_list)
        average = allocate_strategy("AVG")
        return {ip: average.allocate("", ip, queues, clients) for ip in clients}

    async def export_metadata(self, broker_addr: str) -> dict[str, dict[str, Any]]:
        """ExportMetadataCommand of one broker: its topic configs and subscription groups."""
        topics = await self.get_all_topic_config(broker_addr)
        groups = await self.get_all_subscription_group(broker_addr)
        return {
            "topicConfigTable": {n: to_json(c) for n, c in topics.topic_config_table.items()},
            "subscriptionGroupTable": {
                n: to_json(c) for n, c in groups.subscription_group_table.items()
            },
        }
