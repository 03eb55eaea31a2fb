"""CONSUMER_SEND_MSG_BACK (36; SendMessageProcessor#asyncConsumerSendMsgBack): a consumer hands
back a message it could not consume. It goes to ``%RETRY%<group>`` with a delay level (3 + its
reconsume times unless the request names one), or to ``%DLQ%<group>`` past the group's
``retryMaxTimes`` (or the request's, from version 121) or with a negative delay level.
"""

from __future__ import annotations

import asyncio
import random

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.message_inner import copy_message
from rocketq.broker.processors.send_kinds import apply_delay, max_delay_level
from rocketq.broker.processors.send_results import STATUS_TO_RESPONSE
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.topic import dlq_topic, retry_topic
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import ConsumerSendMsgBackRequestHeader
from rocketq.response_code import ResponseCode

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()


class ConsumerSendMsgBackProcessor:
    """CONSUMER_SEND_MSG_BACK (registered by SendMessageProcessor)."""

    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    async def consumer_send_msg_back(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ConsumerSendMsgBackRequestHeader.from_ext_fields(request.ext_fields)
        cfg = self.broker.subscription_group_manager.find_subscription_group_config(h.group)
        if cfg is None:
            return RemotingCommand.create_response(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group not exist, {h.group}",
            )
        if not self.broker.config.broker_permission & PERM_WRITE:
            return RemotingCommand.create_response(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.broker.broker_addr}] sending message is forbidden",
            )
        if cfg.retry_queue_nums <= 0:
            return RemotingCommand.create_response(ResponseCode.SUCCESS)
        topic = retry_topic(h.group)
        queue_id = _random.randrange(cfg.retry_queue_nums)
        tc = self.broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            tc = self.broker.topic_config_manager.create_topic_in_send_message_back_method(
                topic, cfg.retry_queue_nums, PERM_READ | PERM_WRITE
            )
            self.broker.register_broker_all_soon()
        if not tc.writeable:
            return RemotingCommand.create_response(
                ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden"
            )
        orig = await asyncio.to_thread(self.broker.message_store.look_message_by_offset, h.offset)
        if orig is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {h.offset}"
            )
        props = dict(orig.properties)
        props.setdefault(mc.PROPERTY_RETRY_TOPIC, orig.topic)
        props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
        max_times = cfg.retry_max_times
        if request.version >= 121 and h.max_reconsume_times is not None:
            max_times = h.max_reconsume_times
        delay_level = h.delay_level
        if orig.reconsume_times >= max_times or delay_level < 0:
            topic, queue_id = dlq_topic(h.group), 0
            self.broker.topic_config_manager.create_topic_in_send_message_back_method(
                topic, 1, PERM_WRITE | PERM_READ
            )
            self.broker.register_broker_all_soon()
            props.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        else:
            if delay_level == 0:
                delay_level = 3 + orig.reconsume_times
            props[mc.PROPERTY_DELAY_TIME_LEVEL] = str(delay_level)
        props.setdefault(mc.PROPERTY_ORIGIN_MESSAGE_ID, h.origin_msg_id or orig.msg_id)
        msg = copy_message(
            orig,
            topic=topic,
            queue_id=queue_id,
            properties=props,
            store_host=self.broker.store_host,
            reconsume_times=orig.reconsume_times + 1,
        )
        apply_delay(msg, max_delay_level(self.broker.message_store))
        store = self.broker.message_store
        result = await await_store_future(store.async_put_message(msg))
        self.broker.broker_stats_manager.record_send_back(h.group, orig.topic)
        if result.is_ok:  # a flush or slave timeout still stored it
            return RemotingCommand.create_response(ResponseCode.SUCCESS)
        code, remark = STATUS_TO_RESPONSE[result.status]
        return RemotingCommand.create_response(code, remark)
