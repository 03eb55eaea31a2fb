"""ChangeInvisibleTimeProcessor: CHANGE_MESSAGE_INVISIBLETIME (200053).

A new one-message checkpoint from now with the new invisible time, then an ack of the old
handle (ChangeInvisibleTimeProcessor.appendCheckPointThenAckOrigin). The reply's
ChangeInvisibleTimeResponseHeader (popTime = now, invisibleTime, reviveQid) makes the new
handle: ``offset popTime invisibleTime reviveQid mark brokerName queueId offset``. Checks as
the ack's (``ack_message``), except that the offset must lie in [min, max) (NO_MESSAGE); an
expired or replaced handle is refused with NO_MESSAGE "receipt handle is expired".

A FIFO handle (reviveQid 999) moves the message's next visible time in the queue's order info
(processChangeInvisibleTimeForOrder): the reply keeps the handle's popTime, its invisibleTime
is the new next visible time - popTime. A message already acked, or of an earlier pop of the
queue, is refused as expired.
"""

from __future__ import annotations

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.processors.ack_message import HANDLE_EXPIRED, check_message, is_expired
from rocketq.common.extra_info import (
    ExtraInfo,
    ExtraInfoError,
    parse_extra_info,
    parse_normal_topic,
    real_topic,
)
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader,
)
from rocketq.response_code import ResponseCode


class ChangeInvisibleTimeProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        self.broker.remoting_server.register_processor(
            RequestCode.CHANGE_MESSAGE_INVISIBLETIME, self.change_invisible_time
        )

    async def change_invisible_time(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ChangeInvisibleTimeRequestHeader.from_ext_fields(request.ext_fields)
        try:
            handle = parse_extra_info(h.extra_info)
            group = h.consumer_group
            topic = real_topic(parse_normal_topic(h.topic, group), group, handle.mark)
        except ExtraInfoError as exc:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(exc))
        refused = check_message(self.broker, topic, h.queue_id, h.offset, inclusive_max=False)
        if refused is not None:
            return refused
        if h.invisible_time < 0:
            return RemotingCommand.create_response(
                ResponseCode.INVALID_PARAMETER, f"invisibleTime is illegal: {h.invisible_time}"
            )
        if is_expired(self.broker, handle):
            return RemotingCommand.create_response(ResponseCode.NO_MESSAGE, HANDLE_EXPIRED)
        handle = ExtraInfo(
            handle.ck_queue_offset, handle.pop_time, handle.invisible_time, handle.revive_qid,
            handle.mark, handle.broker_name, h.queue_id, h.offset,
        )  # fmt: skip
        pop = self.broker.pop_service
        if handle.is_order:
            invisible = await pop.change_invisible_time_orderly(
                group, topic, handle, h.invisible_time
            )
            pop_time = None if invisible is None else handle.pop_time
        else:
            invisible = h.invisible_time
            pop_time = await pop.change_invisible_time(group, topic, handle, h.invisible_time)
        if pop_time is None or invisible is None:
            return RemotingCommand.create_response(ResponseCode.NO_MESSAGE, HANDLE_EXPIRED)
        header = ChangeInvisibleTimeResponseHeader(
            pop_time=pop_time, invisible_time=invisible, revive_qid=handle.revive_qid
        )
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, None, ext_fields=header.to_ext_fields()
        )
