"""ReplyMessageProcessor: SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325).

A consumer answers a request (``Producer.request``) by sending a reply message to
``<cluster>_REPLY_TOPIC`` with the requester's client id in REPLY_TO_CLIENT. The broker pushes
it to that client at once (PUSH_REPLY_MESSAGE_TO_CLIENT, 326, on the requester's producer
channel, known from its heartbeat) and, when ``storeReplyMessageEnable`` (default true), also
stores it in the reply topic. The answer is SUCCESS (msgId "0", queue offset 0) when the push
succeeded, else SYSTEM_ERROR saying why, as 4.9.8 answers.
"""

from __future__ import annotations

import logging
import random

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.client_manager import ClientChannel
from rocketq.broker.message_inner import message_from_request
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.clock import now_ms
from rocketq.common.properties import decode_properties, properties_to_string
from rocketq.errors import RemotingError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    ReplyMessageRequestHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)
from rocketq.response_code import ResponseCode

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()

log = logging.getLogger(__name__)

PUSH_REPLY_TIMEOUT_S = 3.0


class ReplyMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_processor(RequestCode.SEND_REPLY_MESSAGE, self.process_request)
        s.register_processor(RequestCode.SEND_REPLY_MESSAGE_V2, self.process_request)

    def find_producer_channel(self, client_id: str) -> ClientChannel | None:
        """ProducerManager.findChannel: a live channel of the client ``client_id``."""
        for table in list(self.broker.producer_manager.group_channel_table.values()):
            for channel, info in list(table.items()):
                if info.client_id == client_id and not channel.is_closed:
                    return channel
        return None

    async def process_request(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        if request.code == RequestCode.SEND_REPLY_MESSAGE_V2:
            h = SendMessageRequestHeaderV2.decode_as_v1(request.ext_fields)
        else:
            h = SendMessageRequestHeader.from_ext_fields(request.ext_fields)
        tc = self.broker.topic_config_manager.select_topic_config(h.topic)
        if tc is None:
            return RemotingCommand.create_response(
                ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist, apply first please!"
            )
        queue_id = h.queue_id if h.queue_id >= 0 else _random.randrange(tc.write_queue_nums)
        props = decode_properties((h.properties or "").encode())
        pushed, remark = await self._push_reply(channel, h, props, request.body)
        if pushed:
            header = SendMessageResponseHeader(msg_id="0", queue_id=queue_id, queue_offset=0)
            response = RemotingCommand.create_response(
                ResponseCode.SUCCESS, ext_fields=header.to_ext_fields()
            )
        else:
            response = RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, remark)
        if self.broker.config.store_reply_message_enable:
            await self._store(channel, h, props, request.body, queue_id)
        return response

    async def _push_reply(
        self,
        channel: RemotingChannel,
        h: SendMessageRequestHeader,
        props: dict[str, str],
        body: bytes,
    ) -> tuple[bool, str]:
        sender = props.get(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT)
        if sender is None:
            return False, f"reply message properties[{mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT}] is null"
        target = self.find_producer_channel(sender)
        if target is None:
            return False, f"push reply message fail, channel of <{sender}> not found."
        pushed = dict(props)
        pushed[mc.PROPERTY_PUSH_REPLY_TIME] = str(now_ms())
        header = ReplyMessageRequestHeader(
            producer_group=h.producer_group,
            topic=h.topic,
            default_topic=h.default_topic,
            default_topic_queue_nums=h.default_topic_queue_nums,
            queue_id=h.queue_id,
            sys_flag=h.sys_flag,
            born_timestamp=h.born_timestamp,
            flag=h.flag,
            properties=properties_to_string(pushed),
            reconsume_times=h.reconsume_times,
            unit_mode=h.unit_mode,
            born_host=channel.remote_addr,
            store_host=self.broker.broker_addr,
            store_timestamp=now_ms(),
        )
        push = RemotingCommand.create_request(
            RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, header.to_ext_fields(), body
        )
        try:
            answer = await target.invoke(push, PUSH_REPLY_TIMEOUT_S)
        except (RemotingError, OSError) as exc:
            log.warning("push reply message to <%s> failed: %s", sender, exc)
            return False, f"push reply message to {sender}fail."
        if answer.code != ResponseCode.SUCCESS:
            log.warning("push reply message to <%s> answered %s", sender, answer.remark)
            return False, f"push reply message to {sender}fail."
        return True, ""

    async def _store(
        self,
        channel: RemotingChannel,
        h: SendMessageRequestHeader,
        props: dict[str, str],
        body: bytes,
        queue_id: int,
    ) -> None:
        msg = message_from_request(
            h,
            channel.remote_addr,
            self.broker.store_host,
            topic=h.topic,
            queue_id=queue_id,
            body=bytes(body),
            properties=dict(props),
        )
        result = await await_store_future(self.broker.message_store.async_put_message(msg))
        if not result.is_ok:
            log.warning("reply message to %s not stored: %s", h.topic, result.status.name)
