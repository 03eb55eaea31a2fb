"""EndTransactionProcessor: END_TRANSACTION (37), commit or roll back a half message.

The broker needs only the header: ``commitLogOffset`` finds the half, whose PGROUP, queue
offset (``tranStateTableOffset``) and commitlog offset must match the header
(``checkPrepareMessage``), so any client of the producer group can end a half that another
client sent (a Spark driver ends what its executors sent). Commit re-puts the half to its real
topic and queue (same UNIQ_KEY, TRAN_MSG and REAL_* cleared, sysFlag COMMIT_TYPE,
PREPARED_TX_OFFSET = the half's commitlog offset), then writes the op message; rollback writes
only the op message.

Answers: SUCCESS when ended (or already ended the same way in this broker run: ends are
idempotent); SYSTEM_ERROR with RocketMQ's remark when the half is not found or does not match,
or when the transaction was already ended the other way; SYSTEM_BUSY while another end of the
same transaction is in progress; SLAVE_NOT_AVAILABLE on a slave. RocketMQ gives no response to
``commitOrRollback`` = NOT_TYPE (a check answered UNKNOWN, normally oneway); a two-way request
of that kind is answered SUCCESS with a remark, never left unanswered.

A batch half (rocketq's extension, ``transaction_batch``) is ended as a whole, by
END_TRANSACTION_BATCH (91037: END_TRANSACTION's header plus ``batchCount``, which must match
the half; registered only while ``transactionBatchEnable`` is on) or by END_TRANSACTION (the
answer to its check-back): a commit puts its messages as one batch append.

RESUME_CHECK_HALF_MESSAGE (323, an admin call) puts a half discarded to
TRANS_CHECK_MAX_TIME_TOPIC (named by its offset msgId) back into the half queue with
TRANSACTION_CHECK_TIMES reset to 0, so the check-back asks about it again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from rocketq.broker.config import BrokerRole
from rocketq.broker.message_inner import copy_message
from rocketq.broker.processors.send_kinds import apply_delay, apply_timer, max_delay_level
from rocketq.broker.processors.send_results import STATUS_TO_RESPONSE
from rocketq.broker.store_future import await_store_future
from rocketq.broker.transaction import first_queue_offset
from rocketq.broker.transaction_batch import batch_count, committed_messages
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_id import decode_message_id
from rocketq.common.topic import TRANS_HALF_TOPIC
from rocketq.errors import DecodeError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    EndTransactionBatchRequestHeader,
    EndTransactionRequestHeader,
    ResumeCheckHalfMessageRequestHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.store.results import PutMessageResult, PutMessageStatus

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

log = logging.getLogger(__name__)

COMMIT = MessageSysFlag.TRANSACTION_COMMIT_TYPE
ROLLBACK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
_NAMES = {COMMIT: "committed", ROLLBACK: "rolled back"}


def _answer(code: int, remark: str | None = None) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


def check_prepare_message(
    half: MessageExt, h: EndTransactionRequestHeader
) -> RemotingCommand | None:
    """checkPrepareMessage: the header must name this half exactly; None when it does."""
    if half.properties.get(mc.PROPERTY_PRODUCER_GROUP) != h.producer_group:
        return _answer(ResponseCode.SYSTEM_ERROR, "The producer group wrong")
    if half.queue_offset != h.tran_state_table_offset:
        return _answer(ResponseCode.SYSTEM_ERROR, "The transaction state table offset wrong")
    if half.commitlog_offset != h.commit_log_offset:
        return _answer(ResponseCode.SYSTEM_ERROR, "The commit log offset wrong")
    return None


def end_message_transaction(half: MessageExt, h: EndTransactionRequestHeader) -> MessageExt:
    """The committed message: the half back in its real topic and queue."""
    props = dict(half.properties)
    topic = props.pop(mc.PROPERTY_REAL_TOPIC, "")
    queue_id = int(props.pop(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0)
    props.pop(mc.PROPERTY_TRANSACTION_PREPARED, None)
    msg = copy_message(
        half,
        topic=topic,
        queue_id=queue_id,
        properties=props,
        sys_flag=MessageSysFlag.reset_transaction_value(half.sys_flag, COMMIT),
    )
    msg.prepared_transaction_offset = h.commit_log_offset
    msg.transaction_id = props.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    return msg


class EndTransactionProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        server = self.broker.remoting_server
        server.register_processor(RequestCode.END_TRANSACTION, self.process_request)
        server.register_processor(
            RequestCode.RESUME_CHECK_HALF_MESSAGE, self.resume_check_half_message
        )
        if self.broker.config.transaction_batch_enable:  # else: REQUEST_CODE_NOT_SUPPORTED
            server.register_processor(RequestCode.END_TRANSACTION_BATCH, self.end_batch)

    async def process_request(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = EndTransactionRequestHeader.from_ext_fields(request.ext_fields)
        return await self._process(channel, request, h, None)

    async def end_batch(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """END_TRANSACTION_BATCH (rocketq's extension): END_TRANSACTION for a batch half,
        refused unless the half named holds exactly ``batchCount`` messages."""
        b = EndTransactionBatchRequestHeader.from_ext_fields(request.ext_fields)
        h = EndTransactionRequestHeader(
            producer_group=b.producer_group,
            tran_state_table_offset=b.tran_state_table_offset,
            commit_log_offset=b.commit_log_offset,
            commit_or_rollback=b.commit_or_rollback,
            msg_id=b.msg_id,
            from_transaction_check=b.from_transaction_check,
            transaction_id=b.transaction_id,
        )
        return await self._process(channel, request, h, b.batch_count)

    async def _process(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: EndTransactionRequestHeader,
        expected_count: int | None,
    ) -> RemotingCommand:
        if self.broker.config.broker_role is BrokerRole.SLAVE:
            return _answer(ResponseCode.SLAVE_NOT_AVAILABLE, "the broker is a slave")
        tran = h.commit_or_rollback
        if tran == MessageSysFlag.TRANSACTION_NOT_TYPE:
            log.info(
                "transaction %s stays unknown (from check: %s, %s): %s",
                h.msg_id,
                h.from_transaction_check,
                channel.remote_addr,
                request.remark,
            )
            return _answer(ResponseCode.SUCCESS, "the state is unknown; it will be checked again")
        if tran not in (COMMIT, ROLLBACK):
            return _answer(
                ResponseCode.SYSTEM_ERROR,
                f"commitOrRollback {tran} is none of 0 (unknown), 8 (commit), 12 (rollback)",
            )
        service = self.broker.transactional_message_service
        half = await service.look_half_message(h.commit_log_offset)
        if half is None:
            return _answer(ResponseCode.SYSTEM_ERROR, "Find prepared transaction message failed")
        refused = check_prepare_message(half, h)
        if refused is not None:
            return refused
        if expected_count is not None and batch_count(half) != expected_count:
            return _answer(
                ResponseCode.SYSTEM_ERROR,
                f"the half holds {batch_count(half)} batched messages, not {expected_count}",
            )
        return await self._end(half, h, tran)

    async def _end(
        self, half: MessageExt, h: EndTransactionRequestHeader, tran: int
    ) -> RemotingCommand:
        service = self.broker.transactional_message_service
        first = first_queue_offset(half)
        earlier = service.begin_end(first, tran)
        if earlier == tran:
            return _answer(ResponseCode.SUCCESS, f"the transaction was already {_NAMES[tran]}")
        if earlier == MessageSysFlag.TRANSACTION_NOT_TYPE:
            return _answer(
                ResponseCode.SYSTEM_BUSY, "another end of this transaction is in progress"
            )
        if earlier is not None:
            return _answer(
                ResponseCode.SYSTEM_ERROR,
                f"the transaction was already {_NAMES[earlier]}, it cannot be {_NAMES[tran]}",
            )
        ended: int | None = None
        try:
            if tran == COMMIT:
                response = await self._commit(half, h)
                if response.code != ResponseCode.SUCCESS:
                    return response
            ended = tran
            await service.delete_prepare_message(half)
            return _answer(ResponseCode.SUCCESS)
        finally:
            service.finish_end(first, ended)

    async def _commit(self, half: MessageExt, h: EndTransactionRequestHeader) -> RemotingCommand:
        if not batch_count(half):
            return await self._send_final_message(end_message_transaction(half, h))
        cluster = self.broker.config.broker_cluster_name
        msgs = await asyncio.to_thread(committed_messages, half, h.commit_log_offset, cluster)
        store = self.broker.message_store  # a batch half: one batch append (transaction_batch)
        result = await await_store_future(store.async_put_messages(msgs))
        if result.is_ok:
            return _answer(ResponseCode.SUCCESS)
        code, remark = STATUS_TO_RESPONSE[result.status]
        return _answer(code, remark)

    async def _send_final_message(self, msg: MessageExt) -> RemotingCommand:
        store = self.broker.message_store  # a committed message with DELAY waits its level
        if apply_timer(msg, store) is not None:  # refused: delivered now, as a plain message
            log.warning("committed timer message for %s delivered now", msg.topic)
        apply_delay(msg, max_delay_level(store))
        result = await self._put(msg)
        if result.is_ok:  # a flush or slave timeout still stored it
            return _answer(ResponseCode.SUCCESS)
        code, remark = STATUS_TO_RESPONSE[result.status]
        return _answer(code, remark)

    async def _put(self, msg: MessageExt) -> PutMessageResult:
        return await await_store_future(self.broker.message_store.async_put_message(msg))

    async def resume_check_half_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """RESUME_CHECK_HALF_MESSAGE (323): put a discarded half back, its checks reset to 0."""
        h = ResumeCheckHalfMessageRequestHeader.from_ext_fields(request.ext_fields)
        try:
            _host, offset = decode_message_id(h.msg_id or "")
        except (ValueError, DecodeError) as exc:
            return _answer(ResponseCode.SYSTEM_ERROR, f"bad msgId {h.msg_id!r}: {exc}")
        msg = await asyncio.to_thread(self.broker.message_store.look_message_by_offset, offset)
        if msg is None or mc.PROPERTY_REAL_TOPIC not in msg.properties:
            return _answer(
                ResponseCode.SYSTEM_ERROR, f"no transactional half message at msgId {h.msg_id}"
            )
        props = dict(msg.properties)
        props[mc.PROPERTY_TRANSACTION_CHECK_TIMES] = "0"
        self.broker.transactional_message_service.select_topic_config(TRANS_HALF_TOPIC)
        inner = copy_message(msg, topic=TRANS_HALF_TOPIC, queue_id=0, properties=props)
        result = await self._put(inner)
        if result.status is not PutMessageStatus.PUT_OK:
            return _answer(
                ResponseCode.SYSTEM_ERROR, "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed."
            )
        return _answer(ResponseCode.SUCCESS)
