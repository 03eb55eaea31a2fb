"""RecallMessageProcessor: RECALL_MESSAGE (370), take back a timer message before its time
(RocketMQ 5.3.2's RecallMessageProcessor).

The handle (``common/recall_message_handle``) names the real topic, the broker, the slot time
+ 1 and the message's UNIQ_KEY. The broker checks it (this broker, the header's topic, a time
still ahead and within ``timerMaxDelaySec``) and puts a delete marker: a message to the topic
with ``TIMER_DELIVER_MS`` = that time and ``TIMER_DEL_UNIQKEY`` = ``<topic>+<uniqKey>``, which
the timer hook sends into the same wheel slot, where the dequeue drops the marked message.
A recall after the time is refused ("recall failed, timestamp invalid"); a recall of a
message already delivered within the last precision tick is answered SUCCESS but cannot
undo the delivery, as in RocketMQ.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rocketq.broker.message_inner import born_host
from rocketq.broker.processors.send_kinds import apply_timer
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.recall_message_handle import RecallHandleError, decode_handle
from rocketq.common.topic_config import PERM_WRITE
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    RecallMessageRequestHeader,
    RecallMessageResponseHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.store.config import BrokerRole
from rocketq.store.timer.timer_hook import build_delete_key

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

log = logging.getLogger(__name__)

RECALL_MESSAGE_TAG = "_RECALL_TAG_"
REGION_ID = "DefaultRegion"


def _answer(code: int, remark: str | None) -> RemotingCommand:
    response = RemotingCommand.create_response(code, remark)
    response.ext_fields[mc.PROPERTY_MSG_REGION] = REGION_ID
    return response


class RecallMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        self.broker.remoting_server.register_processor(
            RequestCode.RECALL_MESSAGE, self.recall_message
        )

    async def recall_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = RecallMessageRequestHeader.from_ext_fields(request.ext_fields)
        store = self.broker.message_store
        if store.config.broker_role is BrokerRole.SLAVE:
            return _answer(
                ResponseCode.SLAVE_NOT_AVAILABLE, "recall failed, broker service not available"
            )
        if not self.broker.config.broker_permission & PERM_WRITE:
            return _answer(
                ResponseCode.SERVICE_NOT_AVAILABLE, "recall failed, broker service not available"
            )
        if self.broker.topic_config_manager.select_topic_config(h.topic) is None:
            return _answer(
                ResponseCode.TOPIC_NOT_EXIST, f"recall failed, the topic[{h.topic}] not exist"
            )
        try:
            handle = decode_handle(h.recall_handle)
        except RecallHandleError as exc:
            return _answer(ResponseCode.ILLEGAL_OPERATION, str(exc))
        if h.topic != handle.topic:
            return _answer(ResponseCode.ILLEGAL_OPERATION, "recall failed, topic not match")
        if self.broker.config.broker_name != handle.broker_name:
            return _answer(
                ResponseCode.ILLEGAL_OPERATION, "recall failed, broker service not available"
            )
        try:
            timestamp = int(handle.timestamp_str)
        except ValueError:
            timestamp = -1
        time_left = timestamp - store.now_ms()
        if time_left <= 0 or time_left >= store.config.timer_max_delay_sec * 1000:
            return _answer(ResponseCode.ILLEGAL_OPERATION, "recall failed, timestamp invalid")
        msg = self._build_message(channel, h, handle.topic, handle.timestamp_str, handle.message_id)
        if apply_timer(msg, store) is not None:
            return _answer(ResponseCode.SYSTEM_ERROR, "recall failed, execute error")
        result = await await_store_future(store.async_put_message(msg))
        if not result.is_ok:
            return _answer(ResponseCode.SYSTEM_ERROR, "recall failed, execute error")
        response = _answer(ResponseCode.SUCCESS, None)
        response.ext_fields.update(
            RecallMessageResponseHeader(msg_id=handle.message_id).to_ext_fields()
        )
        return response

    def _build_message(
        self,
        channel: RemotingChannel,
        h: RecallMessageRequestHeader,
        topic: str,
        timestamp_str: str,
        message_id: str,
    ) -> MessageExt:
        """RecallMessageProcessor.buildMessage: the delete marker."""
        now = self.broker.message_store.now_ms()
        props = {
            mc.PROPERTY_TAGS: RECALL_MESSAGE_TAG,
            mc.PROPERTY_TIMER_DEL_UNIQKEY: build_delete_key(topic, message_id),
            mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: message_id,
            mc.PROPERTY_TIMER_DELIVER_MS: timestamp_str,
            "BORN_TIMESTAMP": str(now),
            "TRACE_CONTEXT": "",
        }
        if h.producer_group is not None:
            props[mc.PROPERTY_PRODUCER_GROUP] = h.producer_group
        return MessageExt(
            topic=topic,
            queue_id=0,
            body=b"0",
            properties=props,
            born_timestamp=now,
            born_host=born_host(channel.remote_addr),
            store_host=self.broker.store_host,
        )
