"""AdminBrokerProcessor's consumer and group codes: who is connected
(203, 204, 300), how far groups are (208, 43), queue stats (202, 321), delay progress (45),
and the subscription groups (200, 201, 207). Each answers as 4.9.8's AdminBrokerProcessor:
compact fastjson (43, 45 and 201 are also what a slave copies from its master every 10 s).
"""

from __future__ import annotations

import asyncio

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.client_manager import ClientChannelInfo
from rocketq.broker.consume_stats import consume_stats, topic_consumed_by
from rocketq.broker.metadata_acks import CHECK_POINT_FLOOR
from rocketq.common.attribute import AttributeRefusedError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.admin_bodies import (
    Connection,
    ConsumerConnection,
    GroupList,
    ProducerConnection,
    ProducerInfo,
    ProducerTableInfo,
    TopicOffset,
    TopicStatsTable,
)
from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.group_bodies import (
    ConsumeQueueData,
    ConsumerOffsetSerializeWrapper,
    DelayOffsetSerializeWrapper,
    QueryConsumeQueueResponseBody,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
)
from rocketq.remoting.protocol.headers import (
    DeleteSubscriptionGroupRequestHeader,
    GetConsumerConnectionListRequestHeader,
    GetConsumeStatsRequestHeader,
    GetProducerConnectionListRequestHeader,
    GetTopicStatsInfoRequestHeader,
    QueryConsumeQueueRequestHeader,
    QueryTopicConsumeByWhoRequestHeader,
)
from rocketq.response_code import ResponseCode

# Java reads at most to the end of one consume queue file (300,000 units by default)
MAX_QUERY_CONSUME_QUEUE_UNITS = 300_000


def ok(body: bytes = b"") -> RemotingCommand:
    return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)


def error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


def connection_of(info: ClientChannelInfo) -> Connection:
    return Connection(
        client_id=info.client_id,
        client_addr=info.channel.remote_addr,
        language=info.language,
        version=info.version,
    )


class ConsumerAdminProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        s = self.broker.remoting_server
        for code, handler in (
            (RequestCode.GET_CONSUMER_CONNECTION_LIST, self.get_consumer_connection_list),
            (RequestCode.GET_PRODUCER_CONNECTION_LIST, self.get_producer_connection_list),
            (RequestCode.GET_ALL_PRODUCER_INFO, self.get_all_producer_info),
            (RequestCode.GET_CONSUME_STATS, self.get_consume_stats),
            (RequestCode.GET_TOPIC_STATS_INFO, self.get_topic_stats_info),
            (RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, self.query_topic_consume_by_who),
            (RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, self.update_subscription_group),
            (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, self.get_all_subscription_group),
            (RequestCode.DELETE_SUBSCRIPTIONGROUP, self.delete_subscription_group),
            (RequestCode.GET_ALL_CONSUMER_OFFSET, self.get_all_consumer_offset),
            (RequestCode.GET_ALL_DELAY_OFFSET, self.get_all_delay_offset),
            (RequestCode.QUERY_CONSUME_QUEUE, self.query_consume_queue),
        ):
            s.register_processor(code, handler)

    def _mq(self, topic: str, queue_id: int) -> MessageQueueData:
        return MessageQueueData(
            topic=topic, broker_name=self.broker.config.broker_name, queue_id=queue_id
        )

    # ------------------------------------------------------------------ connections

    async def get_consumer_connection_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetConsumerConnectionListRequestHeader.from_ext_fields(request.ext_fields)
        gi = self.broker.consumer_manager.get_consumer_group_info(h.consumer_group)
        if gi is None:
            return error(
                ResponseCode.CONSUMER_NOT_ONLINE,
                f"the consumer group[{h.consumer_group}] not online",
            )
        body = ConsumerConnection(
            connection_set=[connection_of(i) for i in list(gi.channel_info_table.values())],
            subscription_table=dict(gi.subscription_table),
            consume_type=gi.consume_type,
            message_model=gi.message_model,
            consume_from_where=gi.consume_from_where,
        )
        return ok(body.encode())

    async def get_producer_connection_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetProducerConnectionListRequestHeader.from_ext_fields(request.ext_fields)
        table = self.broker.producer_manager.group_channel_table.get(h.producer_group)
        if table is None:
            return error(
                ResponseCode.SYSTEM_ERROR, f"the producer group[{h.producer_group}] not exist"
            )
        body = ProducerConnection(connection_set=[connection_of(i) for i in list(table.values())])
        return ok(body.encode())

    async def get_all_producer_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """Every producer group and its producers (RocketMQ 5's AdminBrokerProcessor
        #getAllProducerInfo over ProducerManager#getProducerTable)."""
        table = self.broker.producer_manager.group_channel_table
        body = ProducerTableInfo(
            data={
                group: [
                    ProducerInfo(
                        client_id=i.client_id,
                        remote_ip=i.channel.remote_addr,
                        language=i.language,
                        version=i.version,
                        last_update_timestamp=i.last_update_timestamp_ms,
                    )
                    for i in list(infos.values())
                ]
                for group, infos in list(table.items())
            }
        )
        return ok(body.encode())

    async def query_topic_consume_by_who(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = QueryTopicConsumeByWhoRequestHeader.from_ext_fields(request.ext_fields)
        groups = topic_consumed_by(self.broker, h.topic)
        return ok(GroupList(group_list=sorted(groups)).encode())

    # ------------------------------------------------------------------ stats

    async def get_consume_stats(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetConsumeStatsRequestHeader.from_ext_fields(request.ext_fields)
        group = h.consumer_group
        if h.topic:
            topics = {h.topic}
        else:
            topics = self.broker.consumer_offset_manager.which_topic_by_consumer(group)
        stats = await asyncio.to_thread(consume_stats, self.broker, group, topics)
        return ok(stats.encode())

    async def get_topic_stats_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetTopicStatsInfoRequestHeader.from_ext_fields(request.ext_fields)
        tc = self.broker.topic_config_manager.select_topic_config(h.topic)
        if tc is None:
            return error(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
        table = await asyncio.to_thread(self._topic_stats, h.topic, tc.write_queue_nums)
        return ok(table.encode())

    def _topic_stats(self, topic: str, queues: int) -> TopicStatsTable:
        store = self.broker.message_store
        table = TopicStatsTable()
        for qid in range(queues):
            low = store.get_min_offset_in_queue(topic, qid)
            high = max(0, store.get_max_offset_in_queue(topic, qid))
            ts = store.get_message_store_timestamp(topic, qid, high - 1) if high > 0 else 0
            table.offset_table[self._mq(topic, qid)] = TopicOffset(
                min_offset=low, max_offset=high, last_update_timestamp=max(0, ts)
            )
        return table

    async def query_consume_queue(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = QueryConsumeQueueRequestHeader.from_ext_fields(request.ext_fields)
        count = min(h.count, MAX_QUERY_CONSUME_QUEUE_UNITS)
        found = await asyncio.to_thread(
            self.broker.message_store.query_consume_queue, h.topic, h.queue_id, h.index, count
        )
        if found is None:
            return error(ResponseCode.SYSTEM_ERROR, f"{h.queue_id}@{h.topic} is not exist!")
        low, high, units = found
        body = QueryConsumeQueueResponseBody(min_queue_index=low, max_queue_index=high)
        if h.consumer_group is not None:
            sub = self.broker.consumer_manager.find_subscription_data(h.consumer_group, h.topic)
            body.subscription_data = sub
            if sub is None:
                body.filter_data = f"{h.consumer_group}@{h.topic} is not online!"
            else:  # JSON.toJSONString(filterData, true): "null" for a tag subscription
                manager = self.broker.consumer_manager
                body.filter_data = fastjson.dumps_pretty(
                    manager.consumer_filter_data(h.consumer_group, h.topic)
                )
        if not units:
            response = ok(body.encode())
            response.remark = f"Index {h.index} of {h.queue_id}@{h.topic} is not exist!"
            return response
        body.queue_data = [
            ConsumeQueueData(physic_offset=off, physic_size=size, tags_code=code)
            for off, size, code in units
        ]
        return ok(body.encode())

    # ------------------------------------------------------------------ offsets

    async def get_all_consumer_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        table = self.broker.consumer_offset_manager.encode()["offsetTable"]
        body = ConsumerOffsetSerializeWrapper(offset_table=table).encode()
        if self.broker.config.enable_controller_mode:
            # beyond RocketMQ, read in the same step as the table: the check points whose
            # pops the table may lack lie at or past this commitlog offset (a slave's new
            # master reads them back, controller_mode/pop_offsets.py; a Java slave ignores it)
            floor = self.broker.pop_service.check_point_floor()
            body = body[:-1] + b',"%s":%d}' % (CHECK_POINT_FLOOR.encode(), floor)
        return ok(body)

    async def get_all_delay_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        service = self.broker.schedule_message_service
        if service is None:
            return error(ResponseCode.SYSTEM_ERROR, "No delay offset in this broker")
        table = dict(sorted(service.offset_table.items()))
        return ok(DelayOffsetSerializeWrapper(offset_table=table).encode())

    # ------------------------------------------------------------------ subscription groups

    async def update_subscription_group(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        if not request.body:
            return error(ResponseCode.SYSTEM_ERROR, "the subscription group config body is empty")
        cfg = SubscriptionGroupConfig.decode(request.body)
        if not cfg.group_name:
            return error(
                ResponseCode.SYSTEM_ERROR, "the subscription group config has no groupName"
            )
        manager = self.broker.subscription_group_manager
        try:
            await asyncio.to_thread(manager.update_subscription_group_config_by_request, cfg)
        except AttributeRefusedError as exc:  # the RuntimeException of AttributeUtil in Java
            return error(ResponseCode.SYSTEM_ERROR, str(exc))
        return ok()

    async def get_all_subscription_group(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        manager = self.broker.subscription_group_manager
        obj = manager.encode()
        wrapper = SubscriptionGroupWrapper(
            subscription_group_table=dict(manager.subscription_group_table),
            data_version=DataVersion.from_json(obj["dataVersion"]),
        )
        return ok(wrapper.encode())

    async def delete_subscription_group(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = DeleteSubscriptionGroupRequestHeader.from_ext_fields(request.ext_fields)
        manager = self.broker.subscription_group_manager
        await asyncio.to_thread(manager.delete_subscription_group_config, h.group_name)
        if h.remove_offset:
            self.broker.consumer_offset_manager.remove_offset(h.group_name)
        return ok()
