"""AdminBrokerProcessor's codes answered by a consumer: GET_CONSUMER_RUNNING_INFO (307) and
CONSUME_MESSAGE_DIRECTLY (309) are forwarded to the named client and its answer returned;
INVOKE_BROKER_TO_RESET_OFFSET (222) pushes RESET_CONSUMER_CLIENT_OFFSET (220) to every live
consumer of the group (``Broker2Client``)."""

from __future__ import annotations

import asyncio

from rocketq.broker.broker2client import Broker2Client
from rocketq.broker.broker_context import BrokerContext
from rocketq.common.message_id import decode_message_id
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    ConsumeMessageDirectlyResultRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    ResetOffsetRequestHeader,
)
from rocketq.response_code import ResponseCode


class ClientCallProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self.broker2client = Broker2Client(controller)

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, self.get_consumer_running_info)
        s.register_processor(RequestCode.CONSUME_MESSAGE_DIRECTLY, self.consume_message_directly)
        s.register_processor(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, self.reset_offset)

    async def get_consumer_running_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(request.ext_fields)
        return await self.broker2client.call_consumer(
            RequestCode.GET_CONSUMER_RUNNING_INFO, request, h.consumer_group, h.client_id
        )

    async def consume_message_directly(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ConsumeMessageDirectlyResultRequestHeader.from_ext_fields(request.ext_fields)
        if not h.client_id or not h.msg_id:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, "CONSUME_MESSAGE_DIRECTLY needs clientId and msgId"
            )
        try:
            _host, offset = decode_message_id(h.msg_id)
        except ValueError as exc:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"the msgId {h.msg_id} is not an offset msgId: {exc}"
            )
        record = await asyncio.to_thread(
            self.broker.message_store.select_one_message_by_offset, offset
        )
        if record is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"can not find message by the msgId {h.msg_id}"
            )
        request.ext_fields["brokerName"] = self.broker.config.broker_name
        request.body = record
        return await self.broker2client.call_consumer(
            RequestCode.CONSUME_MESSAGE_DIRECTLY, request, h.consumer_group, h.client_id
        )

    async def reset_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ResetOffsetRequestHeader.from_ext_fields(request.ext_fields)
        return await self.broker2client.reset_offset(h.topic, h.group, h.timestamp, h.is_force)
