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
from rocketq.broker.pop.pop_codec import read_batch_ack_body
from rocketq.broker.pop.pop_service import PendingAck
from rocketq.broker.processors.send_results import STATUS_TO_RESPONSE
from rocketq.common.extra_info import (
    NORMAL_TOPIC,
    POP_ORDER_REVIVE_QUEUE,
    ExtraInfo,
    ExtraInfoError,
    parse_extra_info,
    parse_normal_topic,
    real_topic,
)
from rocketq.errors import RemotingCommandError
from rocketq.remoting.channel import FastResult, RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    AckMessageRequestHeader,
    BatchAck,
)
from rocketq.response_code import ResponseCode
from rocketq.store.results import PutMessageStatus

HANDLE_EXPIRED = "receipt handle is expired"


class AckMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        server = self.broker.remoting_server
        server.register_processor(RequestCode.ACK_MESSAGE, self.ack_message)
        server.register_fast_processor(RequestCode.BATCH_ACK_MESSAGE, self.batch_ack_message)

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

    def batch_ack_message(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        """On the connection's reader: the checkpoints whose acks need no write (held by the
        pop buffer, or repeated) are acked here; from the first that needs a record (or a
        FIFO queue's lock) on, the rest of the batch goes on in a task, in the same order."""
        try:
            broker_name, acks = read_batch_ack_body(request.body or b"")
        except (RemotingCommandError, ValueError) as exc:
            return _error(ResponseCode.SYSTEM_ERROR, f"BatchAckMessageRequestBody: {exc}")
        if not acks:
            return _error(ResponseCode.NO_MESSAGE, "no acks")
        broker_name = broker_name or self.broker.config.broker_name
        pop = self.broker.pop_service
        refused = 0
        for i, b in enumerate(acks):
            if self._ack_held_pop(b, broker_name):
                continue
            found = self._batch_item(b, broker_name)
            if isinstance(found, RemotingCommand):
                return found
            if isinstance(found, int):
                refused += found
                continue
            topic, handle, offsets = found
            if not offsets:
                continue
            group = b.consumer_group
            done = None if handle.is_order else pop.ack_now(group, topic, handle, offsets)
            if isinstance(done, list):
                refused += len(offsets) - len(done)
                continue
            return self._batch_ack_rest(acks, i, found, done, broker_name, refused)
        return _batch_answer(refused)

    def _ack_held_pop(self, b: BatchAck, broker_name: str) -> bool:
        """The common BatchAck in one pass: a whole live pop of a normal topic, all in its
        queue, whose checkpoint the pop buffer holds (``PopService.ack_held_pop``); no handle
        object, no offsets list. False, with nothing changed, for anything else (then
        ``_batch_item`` and ``ack_now`` decide it)."""
        bits = b.bit_set
        n = len(bits)
        # the bits as decoded are ascending and distinct: first 0 and last n - 1 is all of them
        if not n or bits[0] != 0 or bits[-1] != n - 1 or b.retry != NORMAL_TOPIC:
            return False
        if b.revive_queue_id == POP_ORDER_REVIVE_QUEUE:
            return False
        store = self.broker.message_store
        if b.pop_time + b.invisible_time <= store.now_ms():  # expired: refused by the rest
            return False
        cq = store.find_consume_queue(b.topic, b.queue_id, create=False)
        start = b.start_offset
        if (
            cq is None
            or start < cq.get_min_offset_in_queue()
            or start + n - 1 > cq.get_max_offset_in_queue()
        ):
            return False
        return self.broker.pop_service.ack_held_pop(
            b.consumer_group, b.topic, b.queue_id, start, n, b.pop_time, broker_name
        )

    def _batch_item(
        self, b: BatchAck, broker_name: str
    ) -> tuple[str, ExtraInfo, list[int]] | int | RemotingCommand:
        """One BatchAck's (real topic, handle, offsets in the queue); else the count refused
        (expired) or an error."""
        try:
            topic = real_topic(b.topic, b.consumer_group, b.retry)
        except ExtraInfoError as exc:
            return _error(ResponseCode.SYSTEM_ERROR, str(exc))
        handle = ExtraInfo(
            b.start_offset, b.pop_time, b.invisible_time, b.revive_queue_id, b.retry,
            broker_name, b.queue_id, b.start_offset,
        )  # fmt: skip
        # the queue's bounds (MessageStore.get_min/max_offset_in_queue: 0 without a queue)
        cq = self.broker.message_store.find_consume_queue(topic, b.queue_id, create=False)
        low = cq.get_min_offset_in_queue() if cq is not None else 0
        high = cq.get_max_offset_in_queue() if cq is not None else 0
        start, bits = b.start_offset, b.bit_set
        n = len(bits)
        if n and bits[0] == 0 and bits[-1] == n - 1 and low <= start and start + n - 1 <= high:
            # a whole pop acked at once (the bits as decoded: ascending, distinct): its range
            offsets = list(range(start, start + n))
        else:
            offsets = [start + i for i in bits if low <= start + i <= high]
        if offsets and is_expired(self.broker, handle):
            return len(offsets)
        return topic, handle, offsets

    async def _batch_ack_rest(
        self,
        acks: list[BatchAck],
        first: int,
        first_found: tuple[str, ExtraInfo, list[int]],
        pending: PendingAck | None,
        broker_name: str,
        refused: int,
    ) -> RemotingCommand:
        """The batch from ``acks[first]`` on (read already as ``first_found``; its ack
        ``pending`` to write, None: FIFO). The first is not read again: ``ack_now`` has
        marked its offsets, so its record must be written whatever the clock says now."""
        pop = self.broker.pop_service
        for i in range(first, len(acks)):
            b = acks[i]
            found = first_found if i == first else self._batch_item(b, broker_name)
            if isinstance(found, RemotingCommand):
                return found
            if isinstance(found, int):
                refused += found
                continue
            topic, handle, offsets = found
            if not offsets:
                continue
            if handle.is_order:
                for offset in offsets:
                    answer = await self._ack_orderly(
                        b.consumer_group, topic, b.queue_id, offset, handle
                    )
                    refused += answer.code != ResponseCode.SUCCESS
                continue
            if i > first or pending is None:
                done = pop.ack_now(b.consumer_group, topic, handle, offsets)
            else:
                done = pending
            accepted = await pop.write_ack(done) if isinstance(done, PendingAck) else done
            if isinstance(accepted, PutMessageStatus):
                return not_stored(accepted)
            refused += len(offsets) - len(accepted)
        return _batch_answer(refused)

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


def _batch_answer(refused: int) -> RemotingCommand:
    if refused:
        return _error(ResponseCode.NO_MESSAGE, f"{HANDLE_EXPIRED} ({refused} not acked)")
    return RemotingCommand.create_response(ResponseCode.SUCCESS)


def not_stored(status: PutMessageStatus) -> RemotingCommand:
    """An ack whose record was not stored as an answer needs (PopService.stored): the put's
    code (FLUSH_SLAVE_TIMEOUT when an in-sync slave did not confirm it), to be retried."""
    code = STATUS_TO_RESPONSE[status][0]
    return _error(code, f"ack not stored on the in-sync replicas: {status.name}; retry it")


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)
