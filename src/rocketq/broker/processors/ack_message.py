"""AckMessageProcessor: ACK_MESSAGE (200051) and BATCH_ACK_MESSAGE (200151).

An ack names its message by the handle (the extra-info string), the real topic (the POP retry
topic for a retried message; the topic with the handle's mark is accepted too), the queue and
the offset. Java's checks and codes: an unknown topic (TOPIC_NOT_EXIST), a queue id out of
range (MESSAGE_ILLEGAL), an offset outside the queue (NO_MESSAGE "offset is illegal"); a
malformed handle fails as ExtraInfoUtil fails (SYSTEM_ERROR with its message). Beyond the
Java broker (whose proxy does it): a handle whose invisible time is over, or that a change of
invisible time replaced, is refused (NO_MESSAGE "receipt handle is expired"), so an ack
never races the revive of the same message. The ack is written as an ``ack`` (or ``bAck``)
record to the revive topic, due when the checkpoint is; in controller mode it is answered
SUCCESS only once every in-sync replica holds that record, else with the put's code
(FLUSH_SLAVE_TIMEOUT, say), so an answered ack holds across a change of master.

A FIFO handle (reviveQid 999) is acked in the queue's order info instead
(AckMessageProcessor.ackOrderly): when the whole batch is acked the consume offset commits past
it and pops parked on the queue are woken. An offset the batch does not hold answers
MESSAGE_ILLEGAL "offset is illegal"; a handle of an earlier pop of the queue (its batch popped
again since) is refused as expired; an offset already committed past succeeds.
"""

from __future__ import annotations

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.processors.send_results import STATUS_TO_RESPONSE
from rocketq.common.extra_info import (
    ExtraInfo,
    ExtraInfoError,
    parse_extra_info,
    parse_normal_topic,
    real_topic,
)
from rocketq.errors import RemotingCommandError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import AckMessageRequestHeader, decode_batch_ack_body
from rocketq.response_code import ResponseCode
from rocketq.store.results import PutMessageStatus

HANDLE_EXPIRED = "receipt handle is expired"


class AckMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        server = self.broker.remoting_server
        server.register_processor(RequestCode.ACK_MESSAGE, self.ack_message)
        server.register_processor(RequestCode.BATCH_ACK_MESSAGE, self.batch_ack_message)

    async def ack_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = AckMessageRequestHeader.from_ext_fields(request.ext_fields)
        try:
            handle = parse_extra_info(h.extra_info)
            topic = real_topic(
                parse_normal_topic(h.topic, h.consumer_group), h.consumer_group, handle.mark
            )
        except ExtraInfoError as exc:
            return _error(ResponseCode.SYSTEM_ERROR, str(exc))
        refused = check_message(self.broker, topic, h.queue_id, h.offset, inclusive_max=True)
        if refused is not None:
            return refused
        if is_expired(self.broker, handle):
            return _error(ResponseCode.NO_MESSAGE, HANDLE_EXPIRED)
        if handle.is_order:
            return await self._ack_orderly(h.consumer_group, topic, h.queue_id, h.offset, handle)
        handle = _with_queue(handle, h.queue_id)
        accepted = await self.broker.pop_service.ack(h.consumer_group, topic, handle, [h.offset])
        if isinstance(accepted, PutMessageStatus):
            return not_stored(accepted)
        if not accepted:
            return _error(ResponseCode.NO_MESSAGE, HANDLE_EXPIRED)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    async def batch_ack_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        try:
            broker_name, acks = decode_batch_ack_body(request.body or b"")
        except (RemotingCommandError, ValueError) as exc:
            return _error(ResponseCode.SYSTEM_ERROR, f"BatchAckMessageRequestBody: {exc}")
        if not acks:
            return _error(ResponseCode.NO_MESSAGE, "no acks")
        store = self.broker.message_store
        refused = 0
        for b in acks:
            try:
                topic = real_topic(b.topic, b.consumer_group, b.retry)
            except ExtraInfoError as exc:
                return _error(ResponseCode.SYSTEM_ERROR, str(exc))
            handle = ExtraInfo(
                b.start_offset, b.pop_time, b.invisible_time, b.revive_queue_id, b.retry,
                broker_name or self.broker.config.broker_name, b.queue_id, b.start_offset,
            )  # fmt: skip
            low = store.get_min_offset_in_queue(topic, b.queue_id)
            high = store.get_max_offset_in_queue(topic, b.queue_id)
            offsets = [b.start_offset + i for i in b.bit_set if low <= b.start_offset + i <= high]
            if not offsets:
                continue
            if is_expired(self.broker, handle):
                refused += len(offsets)
                continue
            if handle.is_order:
                for offset in offsets:
                    answer = await self._ack_orderly(
                        b.consumer_group, topic, b.queue_id, offset, handle
                    )
                    refused += answer.code != ResponseCode.SUCCESS
                continue
            accepted = await self.broker.pop_service.ack(b.consumer_group, topic, handle, offsets)
            if isinstance(accepted, PutMessageStatus):
                return not_stored(accepted)
            refused += len(offsets) - len(accepted)
        if refused:
            return _error(ResponseCode.NO_MESSAGE, f"{HANDLE_EXPIRED} ({refused} not acked)")
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    async def _ack_orderly(
        self, group: str, topic: str, queue_id: int, offset: int, handle: ExtraInfo
    ) -> RemotingCommand:
        pop = self.broker.pop_service
        next_offset = await pop.ack_orderly(group, topic, queue_id, offset, handle.pop_time)
        if next_offset == -1:
            committed = self.broker.consumer_offset_manager.query_offset(group, topic, queue_id)
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                f"offset is illegal, key:{topic}@{group}@{queue_id}, old:{committed}, "
                f"commit:{offset}, next:{next_offset}",
            )
        if next_offset == -2:
            return _error(ResponseCode.NO_MESSAGE, HANDLE_EXPIRED)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)


def check_message(
    broker: BrokerContext, topic: str, queue_id: int, offset: int, *, inclusive_max: bool
) -> RemotingCommand | None:
    """AckMessageProcessor's / ChangeInvisibleTimeProcessor's checks of the named message."""
    tc = broker.topic_config_manager.select_topic_config(topic)
    if tc is None:
        return _error(
            ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!"
        )
    if not 0 <= queue_id < tc.read_queue_nums:
        return _error(
            ResponseCode.MESSAGE_ILLEGAL,
            f"queueId[{queue_id}] is illegal, topic:[{topic}] "
            f"topicConfig.readQueueNums:[{tc.read_queue_nums}]",
        )
    store = broker.message_store
    low = store.get_min_offset_in_queue(topic, queue_id)
    high = store.get_max_offset_in_queue(topic, queue_id)
    if offset < low or offset > high or (offset == high and not inclusive_max):
        return _error(
            ResponseCode.NO_MESSAGE,
            f"offset is illegal, key:{topic}@{queue_id}, commit:{offset}, store:{low}~{high}",
        )
    return None


def is_expired(broker: BrokerContext, handle: ExtraInfo) -> bool:
    """The proxy's check: ``retrieveTime + invisibleTime <= now``."""
    return handle.next_visible_time <= broker.message_store.now_ms()


def _with_queue(handle: ExtraInfo, queue_id: int) -> ExtraInfo:
    """The header's queue id is the one of the real topic (the handle's may be the origin's)."""
    if handle.queue_id == queue_id:
        return handle
    return ExtraInfo(
        handle.ck_queue_offset, handle.pop_time, handle.invisible_time, handle.revive_qid,
        handle.mark, handle.broker_name, queue_id, handle.queue_offset,
    )  # fmt: skip


def not_stored(status: PutMessageStatus) -> RemotingCommand:
    """An ack whose record was not stored as an answer needs (PopService.stored): the put's
    code (FLUSH_SLAVE_TIMEOUT when an in-sync slave did not confirm it), to be retried."""
    code = STATUS_TO_RESPONSE[status][0]
    return _error(code, f"ack not stored on the in-sync replicas: {status.name}; retry it")


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)
