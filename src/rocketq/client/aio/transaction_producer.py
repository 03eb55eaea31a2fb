"""TransactionProducer (TransactionMQProducer) on asyncio; the API is in rocketq.client.transaction.

A half is an ordinary send with TRAN_MSG=true and PGROUP; the broker keeps it out of its topic
until END_TRANSACTION. Checks arrive through ``MQClientInstance`` (CHECK_TRANSACTION_STATE),
which calls :meth:`TransactionProducer.check_transaction_state` of the half's group.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Sequence
from typing import Any

from rocketq.client.aio.producer import Producer
from rocketq.client.status import SendResult, SendStatus
from rocketq.client.trace.hooks import end_transaction_context
from rocketq.client.transaction import (
    LocalTransactionState,
    TransactionHandle,
    TransactionListener,
    TransactionSendResult,
    as_state,
)
from rocketq.common import message_const as mc
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.common.message_id import decode_message_id
from rocketq.errors import ClientError, RequestCodeNotSupportedError, RocketQError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.headers import (
    CheckTransactionStateRequestHeader,
    EndTransactionBatchRequestHeader,
    EndTransactionRequestHeader,
)

log = logging.getLogger(__name__)


class TransactionProducer(Producer):
    def __init__(
        self,
        producer_group: str = "DEFAULT_PRODUCER",
        listener: TransactionListener | None = None,
        *,
        namesrv_addr: str = "",
        listener_in_thread: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(producer_group, namesrv_addr=namesrv_addr, **kw)
        self.listener = listener
        # the blocking facade runs a plain-function listener's checks on a worker thread
        self.listener_in_thread = listener_in_thread

    # ------------------------------------------------------------------ sending

    async def send_half_message(
        self, msg: Message, *, timeout_s: float | None = None
    ) -> TransactionHandle:
        """Send ``msg`` as a half message; the handle ends it later, from any client.

        A half answered FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT or SLAVE_NOT_AVAILABLE is stored
        (not yet safely); its handle is returned like any other.
        """
        return (await self.send_half(msg, timeout_s=timeout_s))[1]

    async def send_half(
        self, msg: Message, *, timeout_s: float | None = None
    ) -> tuple[SendResult, TransactionHandle]:
        msg.clear_property(mc.PROPERTY_DELAY_TIME_LEVEL)
        msg.put_property(mc.PROPERTY_TRANSACTION_PREPARED, "true")
        msg.put_property(mc.PROPERTY_PRODUCER_GROUP, self.group)
        result = await self.send(msg, timeout_s=timeout_s)
        msg.transaction_id = result.msg_id
        return result, self.handle_of(result)

    def handle_of(self, result: SendResult) -> TransactionHandle:
        broker_name = result.message_queue.broker_name
        offset_id = result.offset_msg_id or result.msg_id
        _host, commit_log_offset = decode_message_id(offset_id.split(",")[0])
        return TransactionHandle(
            producer_group=self.group,
            broker_name=broker_name,
            broker_addr=self.instance.find_broker_addr(broker_name) or "",
            topic=result.message_queue.topic,
            commit_log_offset=commit_log_offset,
            tran_state_table_offset=result.queue_offset,
            msg_id=result.msg_id,
            transaction_id=result.transaction_id or result.msg_id,
            offset_msg_id=result.offset_msg_id,
        )

    async def send_half_batch(
        self,
        msgs: Sequence[Message],
        *,
        message_queue: MessageQueue | None = None,
        properties: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> TransactionHandle:
        """rocketq's transactional batch: ``msgs`` (one topic) as ONE batch half, with
        ``properties`` on the half (what a check-back shows besides the first message's id).

        A broker without the extension (RocketMQ's) answers MESSAGE_ILLEGAL
        (MessageIllegalError): send the messages with ``send_half_message`` instead.
        """
        batch = self._batch(msgs)
        batch.clear_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)  # the broker's: 1st id
        for name, value in (properties or {}).items():
            batch.put_property(name, value)
        batch.put_property(mc.PROPERTY_TRANSACTION_PREPARED, "true")
        batch.put_property(mc.PROPERTY_PRODUCER_GROUP, self.group)
        body = encode_batch_messages(msgs)
        if len(body) > self.config.max_message_size_bytes:
            raise ClientError(f"the batch is {len(body)} bytes, over the maximum message size")
        timeout = timeout_s if timeout_s is not None else self.config.send_msg_timeout_s
        flag = MessageSysFlag.TRANSACTION_PREPARED_TYPE
        if message_queue is not None:
            result = await self._send_once(message_queue, batch, body, flag, timeout, batch=True)
        else:
            retries = self.config.retry_times_when_send_failed
            result = await self._send_with_retry(batch, body, flag, timeout, retries, batch=True)
        first = msgs[0].uniq_key or ""
        return dataclasses.replace(
            self.handle_of(result), msg_id=first, transaction_id=first, batch_count=len(msgs)
        )

    async def send_message_in_transaction(
        self, msg: Message, arg: Any = None, *, timeout_s: float | None = None
    ) -> TransactionSendResult:
        """Half, local transaction, end: the result says what the listener decided."""
        if self.listener is None:
            raise ClientError("TransactionListener is null")
        try:
            sent, handle = await self.send_half(msg, timeout_s=timeout_s)
        except ClientError:
            raise
        except (RocketQError, OSError) as exc:
            raise ClientError(f"send message in transaction failed: {exc!r}") from exc
        if sent.status is SendStatus.SEND_OK:
            state, error = await self._execute(msg, arg)
        else:  # stored but not safely (FLUSH_DISK_TIMEOUT, ...): RocketMQ's client rolls back
            state, error = LocalTransactionState.ROLLBACK, None
        remark = None if error is None else f"executeLocalTransactionBranch exception: {error!r}"
        try:
            await self.end_transaction(None, handle, state, remark=remark)
        except (RocketQError, OSError) as exc:
            log.warning("transaction %s is %s; ending it failed: %r", handle.msg_id, state, exc)
        return transaction_send_result(sent, handle, state)

    async def _execute(
        self, msg: Message, arg: Any
    ) -> tuple[LocalTransactionState, BaseException | None]:
        assert self.listener is not None
        try:
            return as_state(await _resolve(self.listener.execute_local_transaction(msg, arg))), None
        except Exception as exc:  # noqa: BLE001 -- a listener's error: UNKNOWN, as RocketMQ
            log.warning("executeLocalTransaction of %s raised: %r", msg.uniq_key, exc)
            return LocalTransactionState.UNKNOWN, exc

    async def end_transaction(
        self,
        broker_addr: str | None,
        handle: TransactionHandle,
        state: LocalTransactionState,
        *,
        remark: str | None = None,
    ) -> None:
        """END_TRANSACTION for ``handle``; raises BrokerResponseError when the broker refuses."""
        addr = broker_addr or handle.broker_addr
        if not addr:
            addr = await self.instance.find_broker_addr_or_refresh(handle.broker_name, handle.topic)
        if handle.batch_count:
            await self._end_batch(addr, handle, state, remark)
        else:
            await self.instance.api.end_transaction(addr, end_header(handle, state), remark)
        if self.trace_dispatcher is not None:
            ctx = end_transaction_context(
                handle.producer_group, None, topic=handle.topic, msg_id=handle.msg_id,
                store_host=addr, transaction_id=handle.transaction_id, state=state.value,
                from_check=False,
            )  # fmt: skip
            self.trace_dispatcher.append(ctx)

    async def _end_batch(
        self, addr: str, handle: TransactionHandle, state: LocalTransactionState, remark: str | None
    ) -> None:
        """END_TRANSACTION_BATCH; where the broker does not know it (a rocketq broker started
        with transactionBatchEnable=false after storing the batch), END_TRANSACTION, which
        ends a batch half as a whole too."""
        header = EndTransactionBatchRequestHeader(
            producer_group=handle.producer_group,
            tran_state_table_offset=handle.tran_state_table_offset,
            commit_log_offset=handle.commit_log_offset,
            commit_or_rollback=state.commit_or_rollback,
            msg_id=handle.msg_id,
            batch_count=handle.batch_count,
            transaction_id=handle.transaction_id,
        )
        api = self.instance.api
        try:
            await api.end_transaction(addr, header, remark, code=RequestCode.END_TRANSACTION_BATCH)
        except RequestCodeNotSupportedError:
            await api.end_transaction(addr, end_header(handle, state), remark)

    # ------------------------------------------------------------------ check-back

    async def check_transaction_state(
        self, channel: RemotingChannel, msg: MessageExt, ext_fields: dict[str, str]
    ) -> None:
        """Ask the listener about a half the broker holds; answer oneway on the same channel."""
        header = CheckTransactionStateRequestHeader.from_ext_fields(ext_fields)
        uniq = msg.uniq_key
        if uniq:
            msg.transaction_id = uniq
        state, error = LocalTransactionState.UNKNOWN, None
        if self.listener is None:
            log.warning("check of transaction %s: this producer has no listener", uniq)
        else:
            try:
                state = as_state(await self._check(msg))
            except Exception as exc:  # noqa: BLE001 -- a listener's error: UNKNOWN, as RocketMQ
                log.warning("checkLocalTransaction of %s raised: %r", uniq, exc)
                error = exc
        end = EndTransactionRequestHeader(
            producer_group=self.group,
            tran_state_table_offset=header.tran_state_table_offset,
            commit_log_offset=header.commit_log_offset,
            commit_or_rollback=state.commit_or_rollback,
            msg_id=uniq or msg.msg_id,
            from_transaction_check=True,
            transaction_id=header.transaction_id,
        )
        remark = None if error is None else f"checkLocalTransactionState Exception: {error!r}"
        try:  # through the client (it signs under ACL), to the broker that asked
            await self.instance.api.end_transaction(channel.remote_addr, end, remark, oneway=True)
        except (RocketQError, OSError) as exc:
            log.info("answering the check of %s failed: %r", uniq, exc)
            return
        if self.trace_dispatcher is not None:
            ctx = end_transaction_context(
                self.group, msg, topic=msg.topic, msg_id=end.msg_id,
                store_host=channel.remote_addr, transaction_id=end.transaction_id or "",
                state=state.value, from_check=True,
            )  # fmt: skip
            self.trace_dispatcher.append(ctx)

    async def _check(self, msg: MessageExt) -> Any:
        assert self.listener is not None
        if self.listener_in_thread:
            return await asyncio.to_thread(self.listener.check_local_transaction, msg)
        return await _resolve(self.listener.check_local_transaction(msg))


def end_header(
    handle: TransactionHandle, state: LocalTransactionState
) -> EndTransactionRequestHeader:
    return EndTransactionRequestHeader(
        producer_group=handle.producer_group,
        tran_state_table_offset=handle.tran_state_table_offset,
        commit_log_offset=handle.commit_log_offset,
        commit_or_rollback=state.commit_or_rollback,
        msg_id=handle.msg_id,
        from_transaction_check=False,
        transaction_id=handle.transaction_id,
    )


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def transaction_send_result(
    sent: SendResult, handle: TransactionHandle, state: LocalTransactionState
) -> TransactionSendResult:
    fields = {f.name: getattr(sent, f.name) for f in dataclasses.fields(SendResult)}
    return TransactionSendResult(**fields, local_transaction_state=state, handle=handle)
