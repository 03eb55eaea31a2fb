"""Reviver: puts the un-acked popped messages of a checkpoint back (PopReviveService.reviveRetry),
to the POP retry topic or, past the group's ``retryMaxTimes``, to ``%DLQ%<group>``.

The messages are read again by their queue offsets (each checked to be that offset:
apache/rocketmq #7724), in one store-thread hop for the checkpoint, and put in one
``async_put_each`` (one commitlog lock hold, one reput wake-up), not one read and put each.
Their properties are copied, reconsumeTimes + 1, ``1ST_POP_TIME`` set on the first retry, the
born and store hosts become the broker's. A message whose reconsumeTimes already reached
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
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext

log = logging.getLogger(__name__)

READ_MAX = 32  # messages a read asks for (a checkpoint holds at most 32)


class Reviver:
    def __init__(self, broker: PopContext) -> None:
        self.broker = broker

    def read_messages(self, topic: str, queue_id: int, offsets: list[int]) -> dict[int, MessageExt]:
        """The messages at ``offsets`` by queue offset (a store thread): the range they span,
        read in as few reads as the store allows. An offset missing from the answer is gone,
        and one the store answers with another message is not taken (apache/rocketmq #7724)."""
        store = self.broker.message_store
        wanted = set(offsets)
        found: dict[int, MessageExt] = {}
        offset, last = min(offsets), max(offsets)
        while offset <= last:
            result = store.get_message(
                REVIVE_GROUP, topic, queue_id, offset, min(last - offset + 1, READ_MAX), None
            )
            if not result.message_buffers and result.next_begin_offset <= offset:
                return found
            for buf, queue_offset in zip(
                result.message_buffers, result.message_queue_offsets, strict=True
            ):
                if queue_offset in wanted:
                    found[queue_offset] = decode_message(buf, check_crc=False)
            offset = max(result.next_begin_offset, offset + 1)
        return found

    async def revive_messages(
        self, ck: PopCheckPoint, offsets: list[int]
    ) -> list[PutMessageStatus | None]:
        """Put the messages at ``offsets`` back, all in one store call; each one's put status
        (None: nothing to revive, the message, its topic or its group is gone)."""
        normal_topic = parse_normal_topic(ck.topic, ck.cid)
        tcm = self.broker.topic_config_manager
        if not offsets or tcm.select_topic_config(normal_topic) is None:
            return [None] * len(offsets)
        cfg = self.broker.subscription_group_manager.find_subscription_group_config(ck.cid)
        if cfg is None:
            return [None] * len(offsets)
        found = await asyncio.to_thread(self.read_messages, ck.topic, ck.queue_id, offsets)
        puts: list[PutRequest] = []
        slots: list[int] = []
        for i, offset in enumerate(offsets):
            orig = found.get(offset)
            if orig is None:
                log.warning("revive: %s@%d offset %d is gone", ck.topic, ck.queue_id, offset)
                continue
            retry = self._retry_message(ck, normal_topic, orig, cfg.retry_max_times)
            puts.append(PutRequest(retry))
            slots.append(i)
        statuses: list[PutMessageStatus | None] = [None] * len(offsets)
        if not puts:
            return statuses
        each = self.broker.message_store.async_put_each(puts)
        for i, result in zip(slots, each.results, strict=True):
            statuses[i] = result.status
        if each.durable is not None:
            durable = await await_store_future(each.durable)
            for waiting in each.waiting:
                statuses[slots[waiting]] = durable
        return statuses

    def _retry_message(
        self, ck: PopCheckPoint, normal_topic: str, orig: MessageExt, retry_max_times: int
    ) -> MessageExt:
        """The copy of ``orig`` for the POP retry topic, or for the DLQ past the retries."""
        tcm = self.broker.topic_config_manager
        props = dict(orig.properties)
        props.pop(mc.PROPERTY_TIMER_DELIVER_MS, None)
        # the first copy's id, through every retry (as CONSUMER_SEND_MSG_BACK keeps it)
        origin_id = props.setdefault(mc.PROPERTY_ORIGIN_MESSAGE_ID, orig.uniq_key or orig.msg_id)
        if orig.reconsume_times >= retry_max_times:
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
        return msg
