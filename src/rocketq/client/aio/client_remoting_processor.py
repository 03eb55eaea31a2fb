"""ClientRemotingProcessor: requests a broker sends to this client (ClientRemotingProcessor.java).

GET_CONSUMER_RUNNING_INFO (307) answers the named group's ConsumerRunningInfo;
CONSUME_MESSAGE_DIRECTLY (309) runs the group's listener on the record in the body and answers
a ConsumeMessageDirectlyResult; RESET_CONSUMER_CLIENT_OFFSET (220, oneway) moves the group's
queues of the topic to the offsets in the body; PUSH_REPLY_MESSAGE_TO_CLIENT (326) completes
a waiting ``Producer.request``. A group this client does not have is answered SYSTEM_ERROR
"The Consumer Group <g> not exist in this consumer", as the Java client answers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from rocketq.client.aio.consumer_member import ConsumerMember
from rocketq.client.aio.request_reply import RequestFutureHolder
from rocketq.common.message import MessageQueue
from rocketq.common.message_decoder import decode_message
from rocketq.errors import DecodeError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import (
    PROP_CLIENT_VERSION,
    PROP_CONSUME_TYPE,
    PROP_NAMESERVER_ADDR,
    ResetOffsetBody,
)
from rocketq.remoting.protocol.headers import (
    ConsumeMessageDirectlyResultRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    ResetOffsetRequestHeader,
)
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

CLIENT_VERSION_DESC = "V4_9_8"


def _no_group(group: str) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer"
    )


class ClientRemotingProcessor:
    """Takes the instance's parts (its connection, its live consumer table, its request
    futures), not the instance, so the instance can build it without an import loop."""

    def __init__(
        self,
        remoting: RemotingClient,
        consumers: Mapping[str, ConsumerMember],
        request_futures: RequestFutureHolder,
    ) -> None:
        self.remoting = remoting
        self.consumers = consumers
        self.request_futures = request_futures

    def register(self) -> None:
        remoting = self.remoting
        remoting.register_processor(
            RequestCode.GET_CONSUMER_RUNNING_INFO, self.get_consumer_running_info
        )
        remoting.register_processor(
            RequestCode.CONSUME_MESSAGE_DIRECTLY, self.consume_message_directly
        )
        remoting.register_processor(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, self.reset_offset)
        remoting.register_processor(
            RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT,
            self.request_futures.on_push_reply_message,
        )

    def _consumer(self, group: str) -> ConsumerMember | None:
        return self.consumers.get(group)

    async def get_consumer_running_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(request.ext_fields)
        consumer = self._consumer(h.consumer_group)
        if consumer is None:
            return _no_group(h.consumer_group)
        info = await consumer.consumer_running_info(with_jstack=h.jstack_enable)
        info.properties[PROP_NAMESERVER_ADDR] = ";".join(self.remoting.get_namesrv_addr_list())
        info.properties[PROP_CONSUME_TYPE] = consumer.consume_type.name
        info.properties[PROP_CLIENT_VERSION] = CLIENT_VERSION_DESC
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=info.encode())

    async def consume_message_directly(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ConsumeMessageDirectlyResultRequestHeader.from_ext_fields(request.ext_fields)
        consumer = self._consumer(h.consumer_group)
        if consumer is None:
            return _no_group(h.consumer_group)
        try:
            msg = decode_message(request.body, check_crc=False, decompress=True)
        except DecodeError as exc:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"the message in the body does not decode: {exc}"
            )
        result = await consumer.consume_message_directly(msg, h.broker_name)
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=result.encode())

    async def reset_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        h = ResetOffsetRequestHeader.from_ext_fields(request.ext_fields)
        consumer = self._consumer(h.group)
        if consumer is None:
            log.info("reset offset for group %s that this client does not have", h.group)
            return None
        body = ResetOffsetBody.decode(request.body)
        offsets = {
            MessageQueue(mq.topic, mq.broker_name, mq.queue_id): offset
            for mq, offset in body.offset_table.items()
        }
        await consumer.reset_offset(h.topic, offsets)
        return None
