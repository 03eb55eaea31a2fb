"""A batch send (SEND_BATCH_MESSAGE 320, or code 10 with ``batch="1"``; asyncSendBatchMessage).

C++ 1.2.3 sends batches as code 10 with ``batch="1"`` and compresses the whole batch body when
it is 4 KiB or larger; that body is inflated before it is split. A batch send is answered at
once when the store has it, else from a task awaiting the store's future; a batch whose header
properties say WAIT=false is answered once it is appended. A batch with the
transaction-prepared sysFlag is stored as one batch half (rocketq's extension,
``transaction_batch``), or refused with MESSAGE_ILLEGAL as RocketMQ does when
``transactionBatchEnable`` is false.

With the C record module on (issue 22), a batch the fast path may take (no transaction flag,
not a SYNC_MASTER) is read by C's ``batch_puts`` into one SendPut per message (the decode,
the checks and the record properties of the loop below, in one call), which the store
appends in one more C call (``async_put_batch_sends``); a batch C does not take (None: a
DELAY, TIMER_* or TRAN_MSG property, a body over the limit, anything malformed) goes the
Python path below, the reference, which words the answer.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.message_inner import message_from_request
from rocketq.broker.processors.send_kinds import transaction_kind
from rocketq.broker.processors.send_results import put_response, record_put
from rocketq.broker.store_future import await_store_future
from rocketq.broker.transaction_batch import batch_half_properties
from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message import Message
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_batch_messages
from rocketq.common.properties import decode_properties, encode_properties
from rocketq.errors import DecodeError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.store.commitlog_send import SendPut
from rocketq.store.config import BrokerRole
from rocketq.store.results import PutMessageResult
from rocketq.store.timer.timer_hook import TIMER_PROPERTIES

#: the transaction bits of a sysFlag (MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
_TRAN_MASK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE


class BatchSender:
    """The batch path of SendMessageProcessor (its checks done: ``_msg_check``)."""

    def __init__(
        self, controller: BrokerContext, bytes_of: Callable[[str | tuple[str, int]], bytes]
    ) -> None:
        self.broker = controller
        self._bytes_of = bytes_of  # a host's bytes in a record (SendMessageProcessor's cache)
        self._rules: tuple[tuple[bytes, ...], bytes, bytes, int] | None = None
        self._rules_key: tuple[str, int] | None = None

    def send_batch(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: SendMessageRequestHeader,
        queue_id: int,
    ) -> RemotingCommand | Coroutine[Any, Any, RemotingCommand]:
        # the topic's length was checked with its name (_msg_check -> validate_topic)
        body = request.body
        if h.sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            try:
                body = zlib.decompress(body)
            except zlib.error as exc:
                return RemotingCommand.create_response(
                    ResponseCode.MESSAGE_ILLEGAL, f"the batch body does not inflate: {exc}"
                )
        if native_record.RECORD is not None:
            answered = self._send_native(channel, h, queue_id, body)
            if answered is not None:
                return answered
        try:
            inner = decode_batch_messages(body)
        except (DecodeError, ValueError) as exc:
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL, f"the batch body does not decode: {exc}"
            )
        if not inner:
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL, "the batch is empty"
            )
        if transaction_kind({}, h.sys_flag) != "none" or any(
            transaction_kind(m.properties, 0) != "none" for m in inner
        ):
            return self._send_half_batch(channel, h, queue_id, body, inner)
        msgs = []
        max_size = self.broker.config.max_message_size
        for m in inner:
            if len(m.body) > max_size:
                return RemotingCommand.create_response(
                    ResponseCode.MESSAGE_ILLEGAL,
                    f"the message body size over max value, MAX: {max_size}",
                )
            props = dict(m.properties)
            if props.get(mc.PROPERTY_DELAY_TIME_LEVEL, "0") not in ("", "0"):
                return RemotingCommand.create_response(
                    ResponseCode.MESSAGE_ILLEGAL, "TimeDelayLevel is not supported for batch"
                )
            if any(name in props for name in TIMER_PROPERTIES):
                return RemotingCommand.create_response(
                    ResponseCode.MESSAGE_ILLEGAL, "timer message is not supported for batch"
                )
            props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
            props[mc.PROPERTY_CLUSTER] = self.broker.config.broker_cluster_name
            sys_flag = h.sys_flag & ~MessageSysFlag.COMPRESSED_FLAG
            msgs.append(
                message_from_request(
                    h,
                    channel.remote_addr,
                    self.broker.store_host,
                    topic=h.topic,
                    queue_id=queue_id,
                    body=m.body,
                    properties=props,
                    flag=m.flag,
                    sys_flag=sys_flag,
                )
            )
        header_props = decode_properties((h.properties or "").encode())
        wait = header_props.get(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"
        store = self.broker.message_store
        started = time.perf_counter()
        future = store.async_put_messages(msgs, wait_store_msg_ok=wait)
        if future.done():  # ASYNC_FLUSH (or WAIT=false): answered without a task
            return self._answer_batch(h.topic, future.result(), started, queue_id)
        return self._await_batch(h.topic, future, started, queue_id)

    def _send_native(
        self,
        channel: RemotingChannel,
        h: SendMessageRequestHeader,
        queue_id: int,
        body: bytes,
    ) -> RemotingCommand | Coroutine[Any, Any, RemotingCommand] | None:
        """The batch read and appended by C (``batch_puts``, ``async_put_batch_sends``); None
        leaves it to the Python path."""
        compiled = native_record.RECORD
        store = self.broker.message_store
        if (
            compiled is None
            or h.sys_flag & _TRAN_MASK
            or store.config.broker_role is BrokerRole.SYNC_MASTER
        ):
            return None
        header_props = decode_properties((h.properties or "").encode())
        wait = header_props.get(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"
        head = (
            h.topic,
            queue_id,
            h.sys_flag & ~MessageSysFlag.COMPRESSED_FLAG,
            h.born_timestamp,
            self._bytes_of(channel.remote_addr),
            self._bytes_of(self.broker.store_host),
            h.reconsume_times or 0,
            wait,
        )
        puts = compiled.batch_puts(body, head, self._rules_now(), SendPut)
        if puts is None:
            return None
        started = time.perf_counter()
        future = store.async_put_batch_sends(puts, wait_store_msg_ok=wait)
        if future.done():
            return self._answer_batch(h.topic, future.result(), started, queue_id)
        return self._await_batch(h.topic, future, started, queue_id)

    def _rules_now(self) -> tuple[tuple[bytes, ...], bytes, bytes, int]:
        """``batch_puts``'s rules: the names only the Python path handles, WAIT, the CLUSTER
        segment appended and the body limit (the broker's and the store's, the lower)."""
        config = self.broker.config
        limit = min(config.max_message_size, self.broker.message_store.config.max_message_size)
        key = (config.broker_cluster_name, limit)
        if self._rules is None or self._rules_key != key:
            refused = (mc.PROPERTY_DELAY_TIME_LEVEL, mc.PROPERTY_TRANSACTION_PREPARED,
                       mc.PROPERTY_CLUSTER, *TIMER_PROPERTIES)  # fmt: skip
            self._rules = (
                tuple(name.encode() for name in refused),
                mc.PROPERTY_WAIT_STORE_MSG_OK.encode(),
                encode_properties({mc.PROPERTY_CLUSTER: config.broker_cluster_name}),
                limit,
            )
            self._rules_key = key
        return self._rules

    def _send_half_batch(
        self,
        channel: RemotingChannel,
        h: SendMessageRequestHeader,
        queue_id: int,
        body: bytes,
        inner: list[Message],
    ) -> RemotingCommand | Coroutine[Any, Any, RemotingCommand]:
        """A transactional batch stored as one batch half (transaction_batch.py), where the
        extension is on; else RocketMQ's refusal (CommitLog.asyncPutMessages)."""
        config = self.broker.config
        if (
            not config.transaction_batch_enable
            or transaction_kind({}, h.sys_flag) != "half"
            or any(transaction_kind(m.properties, 0) != "none" for m in inner)
        ):
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL, "transactional messages cannot be sent in a batch"
            )
        if config.reject_transaction_message:
            return RemotingCommand.create_response(
                ResponseCode.NO_PERMISSION,
                f"the broker[{config.broker_ip1}] sending transaction message is forbidden",
            )
        for m in inner:
            refused = self._batch_refusal(m)
            if refused is not None:
                return refused
        header_props = decode_properties((h.properties or "").encode())
        wait = header_props.get(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"
        props = batch_half_properties(header_props, inner)
        props.setdefault(mc.PROPERTY_PRODUCER_GROUP, h.producer_group)
        props[mc.PROPERTY_CLUSTER] = config.broker_cluster_name
        sys_flag = h.sys_flag & ~MessageSysFlag.COMPRESSED_FLAG
        msg = message_from_request(
            h,
            channel.remote_addr,
            self.broker.store_host,
            topic=h.topic,
            queue_id=queue_id,
            body=bytes(body),
            properties=props,
            sys_flag=sys_flag,
        )
        self.broker.transactional_message_service.parse_half_message(msg)
        started = time.perf_counter()
        future = self.broker.message_store.async_put_message(msg, wait_store_msg_ok=wait)
        if future.done():
            return self._answer_batch(h.topic, future.result(), started, queue_id, "Transaction")
        return self._await_batch(h.topic, future, started, queue_id, "Transaction")

    def _batch_refusal(self, m: Message) -> RemotingCommand | None:
        """The checks of one message of a batch (size, no delay, no timer)."""
        max_size = self.broker.config.max_message_size
        if len(m.body) > max_size:
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message body size over max value, MAX: {max_size}",
            )
        if m.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL, "0") not in ("", "0"):
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL, "TimeDelayLevel is not supported for batch"
            )
        if any(name in m.properties for name in TIMER_PROPERTIES):
            return RemotingCommand.create_response(
                ResponseCode.MESSAGE_ILLEGAL, "timer message is not supported for batch"
            )
        return None

    async def _await_batch(
        self,
        topic: str,
        future: Future[PutMessageResult],
        started: float,
        queue_id: int,
        message_type: str = "Normal",
    ) -> RemotingCommand:
        result = await await_store_future(future)
        return self._answer_batch(topic, result, started, queue_id, message_type)

    def _answer_batch(
        self,
        topic: str,
        result: PutMessageResult,
        started: float,
        queue_id: int,
        message_type: str = "Normal",
    ) -> RemotingCommand:
        record_put(self.broker, topic, result, started, message_type)
        return put_response(self.broker, result, queue_id=queue_id)
