"""Reviver: puts one un-acked popped message back (PopReviveService.reviveRetry), to the POP
retry topic or, past the group's ``retryMaxTimes``, to ``%DLQ%<group>``.

The message is read again by its queue offset (and checked to be that offset: apache/rocketmq
#7724). Its properties are copied, reconsumeTimes + 1, ``1ST_POP_TIME`` set on the first retry,
the born and store hosts become the broker's. A message whose reconsumeTimes already reached
``retryMaxTimes`` was delivered ``retryMaxTimes + 1`` times: it goes to the DLQ with
``DLQ_ORIGIN_TOPIC`` (the topic it was popped under) and ``DLQ_ORIGIN_MESSAGE_ID`` (its
UNIQ_KEY, else the first copy's offset id, kept in ``ORIGIN_MESSAGE_ID`` through the retries).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from rocketq.broker.message_inner import copy_message
from rocketq.broker.pop.records import REVIVE_GROUP, PopCheckPoint
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.extra_info import (
    PROPERTY_DLQ_ORIGIN_MESSAGE_ID,
    PROPERTY_DLQ_ORIGIN_TOPIC,
    PROPERTY_FIRST_POP_TIME,
    build_pop_retry_topic,
    parse_normal_topic,
)
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX, dlq_topic
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.store.results import PutMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)


class Reviver:
    def __init__(self, broker: PopContext) -> None:
        self.broker = broker

    def read_message(self, topic: str, queue_id: int, offset: int) -> MessageExt | None:
        result = self.broker.message_store.get_message(
            REVIVE_GROUP, topic, queue_id, offset, 1, None
        )
        if not result.message_buffers or result.message_queue_offsets[:1] != [offset]:
            return None
        return decode_message(result.message_buffers[0], check_crc=False)

    async def revive_message(self, ck: PopCheckPoint, offset: int) -> PutMessageStatus | None:
        """Put the message at ``offset`` back; the put's status, None if nothing to revive."""
        normal_topic = parse_normal_topic(ck.topic, ck.cid)
        tcm = self.broker.topic_config_manager
        if tcm.select_topic_config(normal_topic) is None:
            return None
        cfg = self.broker.subscription_group_manager.find_subscription_group_config(ck.cid)
        if cfg is None:
            return None
        orig = await asyncio.to_thread(self.read_message, ck.topic, ck.queue_id, offset)
        if orig is None:
            log.warning("revive: %s@%d offset %d is gone", ck.topic, ck.queue_id, offset)
            return None
        props = dict(orig.properties)
        props.pop(mc.PROPERTY_TIMER_DELIVER_MS, None)
        # the first copy's id, through every retry (as CONSUMER_SEND_MSG_BACK keeps it)
        origin_id = props.setdefault(mc.PROPERTY_ORIGIN_MESSAGE_ID, orig.uniq_key or orig.msg_id)
        if orig.reconsume_times >= cfg.retry_max_times:
            topic = dlq_topic(ck.cid)
            tcm.create_topic_in_send_message_back_method(topic, 1, PERM_READ | PERM_WRITE)
            props[PROPERTY_DLQ_ORIGIN_TOPIC] = normal_topic
            props[PROPERTY_DLQ_ORIGIN_MESSAGE_ID] = origin_id
        else:
            if ck.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                topic = ck.topic
            else:
                v2 = self.broker.config.enable_retry_topic_v2
                topic = build_pop_retry_topic(ck.topic, ck.cid, v2)
            tcm.create_topic_in_send_message_back_method(topic, 1, PERM_READ | PERM_WRITE)
            if orig.reconsume_times == 0 or PROPERTY_FIRST_POP_TIME not in props:
                props[PROPERTY_FIRST_POP_TIME] = str(ck.pop_time)
        msg = copy_message(
            orig,
            topic=topic,
            queue_id=0,
            properties=props,
            store_host=self.broker.store_host,
            reconsume_times=orig.reconsume_times + 1,
        )
        msg.born_host = self.broker.store_host
        result = await await_store_future(self.broker.message_store.async_put_message(msg))
        return result.status
