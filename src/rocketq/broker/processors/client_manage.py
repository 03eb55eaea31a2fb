"""ClientManageProcessor: HEART_BEAT, UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG, plus the
consumer-group queries GET_CONSUMER_LIST_BY_GROUP, LOCK_BATCH_MQ and UNLOCK_BATCH_MQ.

A consumer heartbeat auto-creates the subscription group and ``%RETRY%<group>`` (and, when the
retry topic is new, registers with the name servers at once: the C++ push consumer routes it).
"""

from __future__ import annotations

import logging

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.client_manager import ClientChannelInfo
from rocketq.broker.property_filter import compile_selector, property_filter_disabled_remark
from rocketq.broker.proxied_channel import client_channel, client_language
from rocketq.common.topic import retry_topic
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.errors import FilterExpressionError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.bodies import (
    CheckClientRequestBody,
    ConsumerListBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    MessageQueueData,
    UnlockBatchRequestBody,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    GetConsumerListByGroupRequestHeader,
    UnregisterClientRequestHeader,
)
from rocketq.remoting.protocol.subscription import is_tag_type
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


def ok(body: bytes = b"") -> RemotingCommand:
    return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)


def error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


class ClientManageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        """Each answers from memory: fast processors, no task per request."""
        server = self.broker.remoting_server
        server.register_fast_processor(RequestCode.HEART_BEAT, self.heart_beat)
        server.register_fast_processor(RequestCode.UNREGISTER_CLIENT, self.unregister_client)
        server.register_fast_processor(RequestCode.CHECK_CLIENT_CONFIG, self.check_client_config)
        server.register_fast_processor(
            RequestCode.GET_CONSUMER_LIST_BY_GROUP, self.get_consumer_list_by_group
        )
        server.register_fast_processor(RequestCode.LOCK_BATCH_MQ, self.lock_batch_mq)
        server.register_fast_processor(RequestCode.UNLOCK_BATCH_MQ, self.unlock_batch_mq)

    def heart_beat(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        data = HeartbeatData.decode(request.body) if request.body else HeartbeatData(client_id="")
        language = client_language(
            request.ext_fields, getattr(request.language, "name", str(request.language))
        )
        # a proxy's heartbeat for one of its gRPC clients names the client's address
        channel_of_client = client_channel(channel, data.client_id, request.ext_fields)
        for consumer in data.consumer_data_set:
            group_config = self.broker.subscription_group_manager.find_subscription_group_config(
                consumer.group_name
            )
            notify = True
            if group_config is not None:
                notify = group_config.notify_consumer_ids_changed_enable
                self._ensure_retry_topic(consumer.group_name, group_config.retry_queue_nums)
            info = ClientChannelInfo(channel_of_client, data.client_id, language, request.version)
            changed = self.broker.consumer_manager.register_consumer(
                consumer.group_name,
                info,
                consumer.consume_type,
                consumer.message_model,
                consumer.consume_from_where,
                consumer.subscription_data_set,
                is_notify=notify and self.broker.config.notify_consumer_ids_changed_enable,
            )
            if changed:
                log.info(
                    "consumer group %s changed: %s from %s",
                    consumer.group_name,
                    data.client_id,
                    channel.remote_addr,
                )
        for producer in data.producer_data_set:
            info = ClientChannelInfo(channel_of_client, data.client_id, language, request.version)
            self.broker.producer_manager.register_producer(producer.group_name, info)
        return ok()

    def _ensure_retry_topic(self, group: str, queue_nums: int) -> None:
        topic = retry_topic(group)
        if self.broker.topic_config_manager.select_topic_config(topic) is None:
            self.broker.topic_config_manager.create_topic_in_send_message_back_method(
                topic, max(1, queue_nums), PERM_READ | PERM_WRITE
            )
            self.broker.register_broker_all_soon()

    def unregister_client(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = UnregisterClientRequestHeader.from_ext_fields(request.ext_fields)
        client = client_channel(channel, header.client_id, request.ext_fields)
        if header.producer_group:
            self.broker.producer_manager.unregister_producer(header.producer_group, client)
        if header.consumer_group:
            cfg = self.broker.subscription_group_manager.subscription_group_table.get(
                header.consumer_group
            )
            notify = cfg is None or cfg.notify_consumer_ids_changed_enable
            self.broker.consumer_manager.unregister_consumer(
                header.consumer_group, client, is_notify=notify
            )
        return ok()

    def check_client_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """ClientManageProcessor.checkClientConfig: can this broker run the subscription?"""
        body = CheckClientRequestBody.decode(request.body)
        subscription = body.subscription_data
        if is_tag_type(subscription.expression_type):
            return ok()
        if not self.broker.config.enable_property_filter:
            return error(
                ResponseCode.SYSTEM_ERROR,
                property_filter_disabled_remark(subscription.expression_type),
            )
        try:
            compile_selector(subscription)
        except FilterExpressionError as exc:
            return error(ResponseCode.SUBSCRIPTION_PARSE_FAILED, str(exc))
        return ok()

    def get_consumer_list_by_group(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = GetConsumerListByGroupRequestHeader.from_ext_fields(request.ext_fields)
        info = self.broker.consumer_manager.get_consumer_group_info(header.consumer_group)
        ids = info.all_client_ids() if info is not None else []
        if not ids:
            log.warning("getConsumerListByGroup: no consumer for group %s", header.consumer_group)
            return error(
                ResponseCode.SYSTEM_ERROR, f"no consumer for this group, {header.consumer_group}"
            )
        return ok(ConsumerListBody(consumer_id_list=ids).encode())

    def lock_batch_mq(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        body = LockBatchRequestBody.decode(request.body)
        locked = self.broker.rebalance_lock_manager.try_lock_batch(
            body.consumer_group, body.mq_set, body.client_id
        )
        ordered = sorted(locked, key=lambda mq: (mq.topic, mq.broker_name, mq.queue_id))
        return ok(LockBatchResponseBody(lock_ok_mq_set=list[MessageQueueData](ordered)).encode())

    def unlock_batch_mq(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        body = UnlockBatchRequestBody.decode(request.body)
        self.broker.rebalance_lock_manager.unlock_batch(
            body.consumer_group, body.mq_set, body.client_id
        )
        return ok()
