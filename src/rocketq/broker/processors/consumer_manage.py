"""ConsumerManageProcessor (offsets) and the queue-offset queries of AdminBrokerProcessor:
QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET,
SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME.

QUERY_CONSUMER_OFFSET for a group with no committed offset answers 0 when the queue still
starts at 0 and its first message is not yet "on disk" (so a new C++ group, which always asks
CONSUME_FROM_LAST_OFFSET, reads a young queue from the start), else QUERY_NOT_FOUND.
"""

from __future__ import annotations

import asyncio

from rocketq.broker.broker_context import BrokerContext
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from rocketq.response_code import ResponseCode


def _ok(**fields: int) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, ext_fields={k: str(v) for k, v in fields.items()}
    )


class ConsumerManageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_fast_processor(RequestCode.QUERY_CONSUMER_OFFSET, self.query_consumer_offset)
        s.register_fast_processor(RequestCode.UPDATE_CONSUMER_OFFSET, self.update_consumer_offset)
        s.register_fast_processor(RequestCode.GET_MAX_OFFSET, self.get_max_offset)
        s.register_fast_processor(RequestCode.GET_MIN_OFFSET, self.get_min_offset)
        s.register_processor(
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, self.search_offset_by_timestamp
        )
        s.register_processor(
            RequestCode.GET_EARLIEST_MSG_STORETIME, self.get_earliest_msg_storetime
        )

    def query_consumer_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """On the reader (no task): the offset table, else the queue's bounds; the "on disk"
        check reads no file (``check_in_disk_by_consume_offset``: everything is mapped)."""
        h = QueryConsumerOffsetRequestHeader.from_ext_fields(request.ext_fields)
        offset = self.broker.consumer_offset_manager.query_offset(
            h.consumer_group, h.topic, h.queue_id
        )
        if offset >= 0:
            return _ok(offset=offset)
        store = self.broker.message_store
        min_offset = store.get_min_offset_in_queue(h.topic, h.queue_id)
        if min_offset <= 0 and not store.check_in_disk_by_consume_offset(h.topic, h.queue_id, 0):
            return _ok(offset=0)
        return RemotingCommand.create_response(
            ResponseCode.QUERY_NOT_FOUND,
            "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first",
        )

    def update_consumer_offset(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = UpdateConsumerOffsetRequestHeader.from_ext_fields(request.ext_fields)
        self.broker.consumer_offset_manager.commit_offset(
            channel.remote_addr, h.consumer_group, h.topic, h.queue_id, h.commit_offset
        )
        if self.broker.config.enable_controller_mode:
            # persisted within 50 ms: a master with no live slave, killed -9, keeps what it
            # answered (the 5 s flushConsumerOffsetInterval replayed seconds after a failover)
            self.broker.pop_service.note_offset_commit()
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    def get_max_offset(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        h = GetMaxOffsetRequestHeader.from_ext_fields(request.ext_fields)
        return _ok(offset=self.broker.message_store.get_max_offset_in_queue(h.topic, h.queue_id))

    def get_min_offset(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        h = GetMinOffsetRequestHeader.from_ext_fields(request.ext_fields)
        return _ok(offset=self.broker.message_store.get_min_offset_in_queue(h.topic, h.queue_id))

    async def search_offset_by_timestamp(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = SearchOffsetRequestHeader.from_ext_fields(request.ext_fields)
        offset = await asyncio.to_thread(
            self.broker.message_store.get_offset_in_queue_by_time, h.topic, h.queue_id, h.timestamp
        )
        return _ok(offset=offset)

    async def get_earliest_msg_storetime(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = GetEarliestMsgStoretimeRequestHeader.from_ext_fields(request.ext_fields)
        ts = await asyncio.to_thread(
            self.broker.message_store.get_earliest_message_time, h.topic, h.queue_id
        )
        return _ok(timestamp=ts)
