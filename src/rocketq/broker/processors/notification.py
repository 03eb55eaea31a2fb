"""NotificationProcessor: NOTIFICATION (200054), "is there anything to pop?".

Answers ``hasMsg=true`` at once when the (group, topic)'s queues or its POP retry topic hold
messages past the group's committed offsets (NotificationProcessor.hasMsgFromTopic), else
parks the request like a pop (``PopLongPollingService``) until a message arrives (true) or the
poll time passes (false); a full park list answers ``pollingFull=true``. For a FIFO request
(``order``, or a group with ``consumeMessageOrderly``) the retry topic and the queues blocked by
an unfinished FIFO batch do not count (NotificationProcessor.hasMsgFromQueue).
"""

from __future__ import annotations

import logging

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.pop.pop_long_polling import PollingResult, PopRequest
from rocketq.common.extra_info import build_pop_retry_topic
from rocketq.errors import RemotingError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    INIT_MODE_MAX,
    NotificationRequestHeader,
    NotificationResponseHeader,
)
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


class NotificationProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        self.broker.remoting_server.register_processor(RequestCode.NOTIFICATION, self.notification)

    async def notification(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        h = NotificationRequestHeader.from_ext_fields(request.ext_fields)
        tc = self.broker.topic_config_manager.select_topic_config(h.topic)
        if tc is None:
            return RemotingCommand.create_response(
                ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist, apply first please!"
            )
        if self.has_msg(h.consumer_group, h.topic, h.queue_id, h.order, h.attempt_id):
            return _answer(has_msg=True)
        parked = self.broker.pop_service.long_polling.polling(
            PopRequest(
                channel=channel,
                topic=h.topic,
                group=h.consumer_group,
                queue_id=h.queue_id,
                timeout_ms=h.poll_time,
                wakeup=lambda: self._wakeup(channel, request, h),
            )
        )
        if parked is PollingResult.POLLING_SUC:
            return None
        return _answer(has_msg=False, polling_full=parked is PollingResult.POLLING_FULL)

    def has_msg(
        self,
        group: str,
        topic: str,
        queue_id: int,
        order: bool | None = False,
        attempt_id: str | None = None,
    ) -> bool:
        pop = self.broker.pop_service
        reader, store = pop.reader, self.broker.message_store
        sgc = self.broker.subscription_group_manager.find_subscription_group_config(group)
        order = bool(order) or (sgc is not None and sgc.orderly)
        retry = build_pop_retry_topic(topic, group, self.broker.config.enable_retry_topic_v2)
        targets = [(topic, queue_id)] if order else [(topic, queue_id), (retry, -1)]
        for t, qid in targets:
            tc = self.broker.topic_config_manager.select_topic_config(t)
            if tc is None:
                continue
            queues = [qid] if qid >= 0 else range(tc.read_queue_nums)
            for q in queues:
                if order and pop.order_info.check_block(attempt_id, t, group, q, 0):
                    continue
                offset = reader.pop_offset(group, t, q, INIT_MODE_MAX, commit=False)
                if store.get_max_offset_in_queue(t, q) > offset:
                    return True
        return False

    async def _wakeup(
        self, channel: RemotingChannel, request: RemotingCommand, h: NotificationRequestHeader
    ) -> None:
        found = self.has_msg(h.consumer_group, h.topic, h.queue_id, h.order, h.attempt_id)
        response = _answer(has_msg=found)
        if channel.is_closed:
            return
        response.response_to(request)
        try:
            await channel.send(response)
        except (RemotingError, OSError) as exc:
            log.info("answering parked notification to %s failed: %s", channel.remote_addr, exc)


def _answer(*, has_msg: bool, polling_full: bool = False) -> RemotingCommand:
    header = NotificationResponseHeader(has_msg=has_msg, polling_full=polling_full)
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, None, ext_fields=header.to_ext_fields()
    )
