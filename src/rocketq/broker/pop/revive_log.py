"""ReviveLog: writes POP records into ``rmq_sys_REVIVE_LOG_<cluster>`` through the timer.

PopMessageProcessor.appendCheckPoint, AckMessageProcessor.appendAck and
ChangeInvisibleTimeProcessor write their ck/ack/bAck messages to the revive topic (a pop's
checkpoint and its acks only when the pop buffer, ``pop_buffer``, did not merge them): each is a
timer message (``TIMER_DELIVER_MS``) that the timer wheel holds until it is due; a ck or ack
whose time already passed goes to the revive topic at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocketq.broker.pop.records import (
    AckMsg,
    PopCheckPoint,
    build_revive_message,
    revive_topic,
)
from rocketq.broker.store_future import await_store_future
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.store.results import PutMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_context import PopContext


class ReviveLog:
    def __init__(self, broker: PopContext) -> None:
        self.broker = broker
        self.topic = revive_topic(broker.config.broker_cluster_name)
        self.queue_num = broker.config.revive_queue_num

    def ensure_topic(self) -> None:
        """The revive topic exists with reviveQueueNum queues (TopicConfigManager's system
        topic ``rmq_sys_REVIVE_LOG_<cluster>``)."""
        self.broker.topic_config_manager.create_topic_in_send_message_back_method(
            self.topic, self.queue_num, PERM_READ | PERM_WRITE
        )

    async def append(
        self,
        record: PopCheckPoint | AckMsg,
        revive_qid: int,
        ack_deliver_ms: int = 0,
        *,
        wait: bool = True,
        cancel: bool = False,
    ) -> PutMessageStatus:
        """Put ``record``; the store's status (PUT_OK, or why not). ``wait=False``: answered
        once appended, without waiting for the flush or the in-sync replicas. ``cancel``: an
        ack that cancels an unanswered pop's check point (records.CANCEL_PROPERTY)."""
        store = self.broker.message_store
        msg = build_revive_message(
            record,
            topic=self.topic,
            revive_qid=revive_qid,
            store_host=self.broker.store_host,
            now_ms=store.now_ms(),
            ack_deliver_ms=ack_deliver_ms,
            cancel=cancel,
        )
        timer = store.timer_message_store  # HookUtils.handleScheduleMessage's timer part
        if timer is None:
            return PutMessageStatus.WHEEL_TIMER_NOT_ENABLE
        refused = timer.transform(msg)
        if refused is not None:
            return refused
        result = await await_store_future(store.async_put_message(msg, wait_store_msg_ok=wait))
        return result.status

    def put_ok(self, status: PutMessageStatus) -> bool:
        """A flush or slave timeout still stored it (AckMessageProcessor.handlePutMessageResult)."""
        return status.is_ok
