"""Broker2Client: requests the broker starts towards its clients (Broker2Client.java).

``call_client`` forwards an admin request (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY)
to one consumer's channel and returns its answer. ``reset_offset`` (INVOKE_BROKER_TO_RESET_OFFSET)
computes, for each write queue of the topic, the offset at ``timestamp`` (-1: the max offset),
keeps the group's committed offset when it is smaller unless ``is_force``, and sends
RESET_CONSUMER_CLIENT_OFFSET oneway to every live consumer of the group, which moves its
queues there and commits; the broker's own offsets change through those commits, as in 4.9.8.
C++ consumers read the body as a list (ResetOffsetBodyForC), so they get that form.
"""

from __future__ import annotations

import asyncio
import logging

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.client_manager import ClientChannel
from rocketq.errors import RemotingError, RemotingTimeoutError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.remoting.protocol.codes import VERSION_V3_1_8, RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import ResetOffsetBody
from rocketq.remoting.protocol.headers import ResetOffsetRequestHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

CALL_CLIENT_TIMEOUT_S = 10.0


class Broker2Client:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    async def call_client(
        self, channel: ClientChannel, request: RemotingCommand
    ) -> RemotingCommand:
        return await channel.invoke(request, CALL_CLIENT_TIMEOUT_S)

    async def call_consumer(
        self, code: int, request: RemotingCommand, group: str, client_id: str
    ) -> RemotingCommand:
        """AdminBrokerProcessor.callConsumer: forward to the consumer ``client_id`` of ``group``."""
        gi = self.broker.consumer_manager.get_consumer_group_info(group)
        info = gi.find_channel(client_id) if gi is not None else None
        if info is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"The Consumer <{group}> <{client_id}> not online"
            )
        if 0 < info.version < VERSION_V3_1_8:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR,
                f"The Consumer <{client_id}> Version <{info.version}> too low to finish, "
                "please upgrade it to V3_1_8_SNAPSHOT",
            )
        forward = RemotingCommand.create_request(code, dict(request.ext_fields), request.body)
        try:
            return await self.call_client(info.channel, forward)
        except RemotingTimeoutError as exc:
            return RemotingCommand.create_response(
                ResponseCode.CONSUME_MSG_TIMEOUT, f"consumer <{group}> <{client_id}> Timeout: {exc}"
            )
        except (RemotingError, OSError) as exc:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR,
                f"invoke consumer <{group}> <{client_id}> Exception: {exc}",
            )

    def compute_reset_offsets(
        self, topic: str, group: str, timestamp: int, is_force: bool
    ) -> dict[MessageQueueData, int] | str:
        """The offsets to reset to, or the reason there are none (a RocketMQ remark)."""
        tc = self.broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return f"[reset-offset] reset offset failed, no topic in this broker. topic={topic}"
        store = self.broker.message_store
        table: dict[MessageQueueData, int] = {}
        for qid in range(tc.write_queue_nums):
            mq = MessageQueueData(
                topic=topic, broker_name=self.broker.config.broker_name, queue_id=qid
            )
            consumer_offset = self.broker.consumer_offset_manager.query_offset(group, topic, qid)
            if consumer_offset == -1:
                return f"THe consumer group <{group}> not exist"
            if timestamp == -1:
                target = store.get_max_offset_in_queue(topic, qid)
            else:
                target = store.get_offset_in_queue_by_time(topic, qid, timestamp)
            target = max(0, target)
            table[mq] = target if is_force or target < consumer_offset else consumer_offset
        return table

    async def reset_offset(
        self, topic: str, group: str, timestamp: int, is_force: bool
    ) -> RemotingCommand:
        table = await asyncio.to_thread(
            self.compute_reset_offsets, topic, group, timestamp, is_force
        )
        if isinstance(table, str):
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, table)
        gi = self.broker.consumer_manager.get_consumer_group_info(group)
        infos = list(gi.channel_info_table.values()) if gi is not None else []
        if not infos:
            return RemotingCommand.create_response(
                ResponseCode.CONSUMER_NOT_ONLINE,
                "Consumer not online, so can not reset offset, "
                f"Group: {group} Topic: {topic} Timestamp: {timestamp}",
            )
        header = ResetOffsetRequestHeader(
            topic=topic, group=group, timestamp=timestamp, is_force=is_force
        ).to_ext_fields()
        body = ResetOffsetBody(offset_table=table)
        for info in infos:
            data = fastjson.dumps(body.to_json_for_c()) if info.language == "CPP" else body.encode()
            request = RemotingCommand.create_request(
                RequestCode.RESET_CONSUMER_CLIENT_OFFSET, dict(header), data
            )
            try:
                await info.channel.invoke_oneway(request)
                log.info("[reset-offset] %s %s sent to %s", topic, group, info.client_id)
            except (RemotingError, OSError):
                log.exception("[reset-offset] %s %s to %s failed", topic, group, info.client_id)
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body.encode())
