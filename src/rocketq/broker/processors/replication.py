"""What a slave copies from its master every 10 s (AdminBrokerProcessor's GET_ALL_* codes).

GET_ALL_CONSUMER_OFFSET (43) answers ConsumerOffsetSerializeWrapper ``{"offsetTable": ...}``,
GET_ALL_DELAY_OFFSET (45) the text of ``delayOffset.json``, GET_ALL_SUBSCRIPTIONGROUP_CONFIG
(201) SubscriptionGroupWrapper ``{"subscriptionGroupTable": ..., "dataVersion": ...}``, all
as fastjson text (integer map keys bare), as RocketMQ's broker writes them.
GET_ALL_TOPIC_CONFIG (21) is the admin processor's.
"""

from __future__ import annotations

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.config_manager import to_fastjson
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.codes import RequestCode, ResponseCode
from rocketq.remoting.command import RemotingCommand


class ReplicationAdminProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.c = controller

    def register(self) -> None:
        s = self.c.remoting_server
        s.register_processor(RequestCode.GET_ALL_CONSUMER_OFFSET, self.get_all_consumer_offset)
        s.register_processor(RequestCode.GET_ALL_DELAY_OFFSET, self.get_all_delay_offset)
        s.register_processor(
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, self.get_all_subscription_group
        )

    async def get_all_consumer_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        body = to_fastjson(self.c.consumer_offset_manager.encode()).encode()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)

    async def get_all_delay_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        service = self.c.schedule_message_service
        if service is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, "No delay offset in this broker"
            )
        table = dict(sorted(service.offset_table.items()))  # delayOffset.json's content
        body = to_fastjson({"offsetTable": table}).encode()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)

    async def get_all_subscription_group(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        body = to_fastjson(self.c.subscription_group_manager.encode()).encode()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)
