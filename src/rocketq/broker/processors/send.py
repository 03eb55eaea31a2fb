"""SendMessageProcessor: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) and
CONSUMER_SEND_MSG_BACK (36) (remoting.md §3.2.1, §3.2.9, §6.5, §6.6).

Order of checks (AbstractSendMessageProcessor.msgCheck): broker writable, topic name valid,
topic not reserved, topic exists or is auto-created from ``defaultTopic``, queue id in range;
then the message checks (body size, properties size). A retry-topic message past its group's
``retryMaxTimes`` goes to ``%DLQ%<group>``; a message with a delay level is rerouted to
SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC/REAL_QID (the ScheduleMessageService brings
it back). The send codes are fast processors (channel.py): a single message is checked on the
connection's reader and its put queued in the ``PutBatcher``, which stores the puts of one
read in one ``async_put_each`` call at the read's end and answers each send with its own
result (after the group commit for SYNC_FLUSH); where no rule needs the properties map, the
producer's properties string is passed through (``send_properties``). A batch send is
answered at once when the store has it, else from a task awaiting the store's future. A
message with WAIT=false (and a batch whose header properties say so) is answered once it is
appended, without waiting for the SYNC_FLUSH group commit (CommitLog.handleDiskFlush).

C++ 1.2.3 sends batches as code 10 with ``batch="1"`` and compresses the whole batch body when
it is 4 KiB or larger; that body is inflated before it is split.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import zlib
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, NamedTuple

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.put_batcher import PutBatcher
from rocketq.broker.send_properties import pass_through
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_batch_messages
from rocketq.common.message_id import create_message_id
from rocketq.common.properties import decode_properties
from rocketq.common.topic import (
    DLQ_GROUP_TOPIC_PREFIX,
    NOT_ALLOWED_SEND_TOPICS,
    RETRY_GROUP_TOPIC_PREFIX,
    SCHEDULE_QUEUE_NUMS,
    SCHEDULE_TOPIC,
    dlq_topic,
    retry_topic,
    validate_topic,
)
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.errors import DecodeError
from rocketq.remoting.channel import FastResult, RemotingChannel
from rocketq.remoting.codes import RequestCode, ResponseCode
from rocketq.remoting.command import RemotingCommand
from rocketq.remoting.headers import (
    ConsumerSendMsgBackRequestHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)
from rocketq.store.message_store import MessageStore
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus

log = logging.getLogger(__name__)

MAX_PROPERTIES_BYTES = 32767
REGION_ID = "DefaultRegion"


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


class _PreparedSend(NamedTuple):
    """A checked single-message send: its put, its transaction kind and its queue."""

    put: PutRequest
    tran: str
    queue_id: int


class SendMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.c = controller
        self.put_batcher = PutBatcher(lambda: controller.message_store)

    def register(self) -> None:
        server = self.c.remoting_server
        for code in (
            RequestCode.SEND_MESSAGE,
            RequestCode.SEND_MESSAGE_V2,
            RequestCode.SEND_BATCH_MESSAGE,
        ):
            server.register_fast_processor(code, self.process_fast)
        server.register_processor(RequestCode.CONSUMER_SEND_MSG_BACK, self.consumer_send_msg_back)
        server.add_read_end_hook(self.put_batcher.flush)  # a read's puts: stored at its end

    # ------------------------------------------------------------------ send

    def process_fast(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        """A send, on the connection's reader: checks now, the put with the others of this
        loop iteration (``PutBatcher``), the answer when the store has it."""
        if request.code == RequestCode.SEND_MESSAGE:
            h = SendMessageRequestHeader.from_ext_fields(request.ext_fields)
        else:
            h = SendMessageRequestHeaderV2.decode_as_v1(request.ext_fields)
        refused = self._msg_check(h)
        if refused is not None:
            return refused
        tc = self.c.topic_config_manager.select_topic_config(h.topic)
        assert tc is not None
        queue_id = h.queue_id if h.queue_id >= 0 else random.randrange(tc.write_queue_nums)
        if h.batch or request.code == RequestCode.SEND_BATCH_MESSAGE:
            return self._send_batch(channel, request, h, queue_id)
        prepared = self._prepare_one(channel, request, h, queue_id)
        if isinstance(prepared, RemotingCommand):
            return prepared
        deferred = channel.defer(request)
        started = time.perf_counter()

        def done(result: PutMessageResult) -> None:
            try:
                response = self._answer_one(h.topic, prepared, result, started)
            except Exception as exc:
                log.warning("answering a send to %s failed: %r", h.topic, exc)
                response = _error(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__)
            deferred.answer(response)

        self.put_batcher.submit(prepared.put, done, flush_soon=False)  # the read's end flushes
        return deferred

    def _msg_check(self, h: SendMessageRequestHeader) -> RemotingCommand | None:
        if not self.c.config.broker_permission & PERM_WRITE:
            return _error(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.c.broker_addr}] sending message is forbidden",
            )
        reason = validate_topic(h.topic)
        if reason is not None:
            return _error(ResponseCode.SYSTEM_ERROR, reason)
        if h.topic in NOT_ALLOWED_SEND_TOPICS:
            return _error(
                ResponseCode.NO_PERMISSION, f"Sending message to topic[{h.topic}] is forbidden."
            )
        tm = self.c.topic_config_manager
        tc = tm.select_topic_config(h.topic)
        if tc is None:
            sys_flag = 1 if h.unit_mode else 0
            if h.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                tc = tm.create_topic_in_send_message_back_method(h.topic, 1, PERM_READ | PERM_WRITE)
            else:
                tc = tm.create_topic_in_send_message_method(
                    h.topic, h.default_topic, h.default_topic_queue_nums, sys_flag
                )
            if tc is None:
                return _error(
                    ResponseCode.TOPIC_NOT_EXIST,
                    f"topic[{h.topic}] not exist, apply first please! "
                    "See https://rocketmq.apache.org/docs/bestPractice/06FAQ",
                )
            self.c.register_broker_all_soon()
        if not tc.writeable:
            return _error(
                ResponseCode.NO_PERMISSION, f"the topic[{h.topic}] sending message is forbidden"
            )
        if h.queue_id >= max(tc.read_queue_nums, tc.write_queue_nums):
            return _error(
                ResponseCode.SYSTEM_ERROR,
                f"request queueId[{h.queue_id}] is illegal, topic:{h.topic} "
                f"writeQueueNums:{tc.write_queue_nums} readQueueNums:{tc.read_queue_nums} "
                f"producer:{h.producer_group}",
            )
        return None

    def _prepare_one(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: SendMessageRequestHeader,
        queue_id: int,
    ) -> _PreparedSend | RemotingCommand:
        """The checked put of one message, or the refusal."""
        if len(request.body) > self.c.config.max_message_size:
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message body size over max value, MAX: {self.c.config.max_message_size}",
            )
        text = h.properties or ""
        try:
            raw = text.encode()
        except UnicodeEncodeError as exc:
            return _error(
                ResponseCode.MESSAGE_ILLEGAL, f"the message properties are not UTF-8: {exc}"
            )
        if len(raw) > MAX_PROPERTIES_BYTES:
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message properties size over max value, MAX: {MAX_PROPERTIES_BYTES}",
            )
        reconsume_times = h.reconsume_times or 0
        if (
            not h.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
            and MessageSysFlag.get_transaction_value(h.sys_flag)
            == MessageSysFlag.TRANSACTION_NOT_TYPE
        ):
            passed = pass_through(text, self.c.config.broker_cluster_name)
            if passed is not None:
                record_props, wait = passed
                msg = MessageExt(
                    topic=h.topic,
                    queue_id=queue_id,
                    body=bytes(request.body),
                    flag=h.flag,
                    sys_flag=h.sys_flag,
                    born_timestamp=h.born_timestamp,
                    born_host=_host(channel.remote_addr),
                    store_host=self.c.store_host,
                    reconsume_times=reconsume_times,
                )
                return _PreparedSend(PutRequest(msg, wait, record_props), "none", queue_id)
        props = decode_properties(raw)
        topic = h.topic
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            diverted = self._retry_or_dlq(topic, reconsume_times, h.max_reconsume_times, props)
            if isinstance(diverted, RemotingCommand):
                return diverted
            if diverted != topic:
                topic, queue_id = diverted, 0
        wait = props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"
        props[mc.PROPERTY_CLUSTER] = self.c.config.broker_cluster_name
        msg = MessageExt(
            topic=topic,
            queue_id=queue_id,
            body=bytes(request.body),
            flag=h.flag,
            properties=props,
            sys_flag=h.sys_flag,
            born_timestamp=h.born_timestamp,
            born_host=_host(channel.remote_addr),
            store_host=self.c.store_host,
            reconsume_times=reconsume_times,
        )
        tran = _transaction_kind(props, h.sys_flag)
        if tran == "half":
            if self.c.config.reject_transaction_message:
                return _error(
                    ResponseCode.NO_PERMISSION,
                    f"the broker[{self.c.config.broker_ip1}] sending transaction message "
                    "is forbidden",
                )
            msg.properties[mc.PROPERTY_TRANSACTION_PREPARED] = "true"
            msg.properties.setdefault(mc.PROPERTY_PRODUCER_GROUP, h.producer_group)
            self.c.transactional_message_service.parse_half_message(msg)
        elif tran == "rollback":
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                "sysFlag TRANSACTION_ROLLBACK_TYPE is written by END_TRANSACTION only",
            )
        else:
            self.apply_delay(msg, max_delay_level(self.c.message_store))
        return _PreparedSend(PutRequest(msg, wait), tran, queue_id)

    def _answer_one(
        self, topic: str, prepared: _PreparedSend, result: PutMessageResult, started: float
    ) -> RemotingCommand:
        msg = prepared.put.msg
        message_type = "Transaction" if prepared.tran == "half" else _message_type(msg)
        self._record_put(topic, result, started, message_type)
        return self._handle_put_message_result(
            result, queue_id=prepared.queue_id if prepared.tran == "half" else msg.queue_id
        )

    def _retry_or_dlq(
        self, topic: str, reconsume_times: int, max_from_header: int | None, props: dict[str, str]
    ) -> str | RemotingCommand:
        group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
        cfg = self.c.subscription_group_manager.find_subscription_group_config(group)
        if cfg is None:
            return _error(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {group}"
            )
        max_times = max_from_header if max_from_header is not None else cfg.retry_max_times
        if reconsume_times < max_times:
            return topic
        dlq = dlq_topic(group)
        self.c.topic_config_manager.create_topic_in_send_message_back_method(
            dlq, 1, PERM_READ | PERM_WRITE
        )
        self.c.register_broker_all_soon()
        props.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        return dlq

    @staticmethod
    def apply_delay(msg: MessageExt, max_level: int = SCHEDULE_QUEUE_NUMS) -> None:
        """A message with a delay level (not a half) goes to SCHEDULE_TOPIC_XXXX first.

        A level above ``max_level`` (how many levels messageDelayLevel configures, RocketMQ's
        maxDelayLevel) becomes the last level; past it no queue would ever be delivered.
        """
        level_text = msg.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
        if not level_text or msg.topic.startswith(DLQ_GROUP_TOPIC_PREFIX):
            return
        tran = MessageSysFlag.get_transaction_value(msg.sys_flag)
        if tran not in (
            MessageSysFlag.TRANSACTION_NOT_TYPE,
            MessageSysFlag.TRANSACTION_COMMIT_TYPE,
        ):
            return
        try:
            level = min(int(level_text), max_level, SCHEDULE_QUEUE_NUMS)
        except ValueError:
            return
        if level <= 0:
            return
        msg.properties[mc.PROPERTY_DELAY_TIME_LEVEL] = str(level)
        msg.properties[mc.PROPERTY_REAL_TOPIC] = msg.topic
        msg.properties[mc.PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
        msg.topic = SCHEDULE_TOPIC
        msg.queue_id = level - 1

    def _send_batch(
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
                return _error(
                    ResponseCode.MESSAGE_ILLEGAL, f"the batch body does not inflate: {exc}"
                )
        try:
            inner = decode_batch_messages(body)
        except (DecodeError, ValueError) as exc:
            return _error(ResponseCode.MESSAGE_ILLEGAL, f"the batch body does not decode: {exc}")
        if not inner:
            return _error(ResponseCode.MESSAGE_ILLEGAL, "the batch is empty")
        if _transaction_kind({}, h.sys_flag) != "none" or any(
            _transaction_kind(m.properties, 0) != "none" for m in inner
        ):
            return _error(
                ResponseCode.MESSAGE_ILLEGAL, "transactional messages cannot be sent in a batch"
            )
        msgs = []
        for m in inner:
            if len(m.body) > self.c.config.max_message_size:
                return _error(
                    ResponseCode.MESSAGE_ILLEGAL,
                    f"the message body size over max value, MAX: {self.c.config.max_message_size}",
                )
            props = dict(m.properties)
            if props.get(mc.PROPERTY_DELAY_TIME_LEVEL, "0") not in ("", "0"):
                return _error(
                    ResponseCode.MESSAGE_ILLEGAL, "TimeDelayLevel is not supported for batch"
                )
            props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
            props[mc.PROPERTY_CLUSTER] = self.c.config.broker_cluster_name
            sys_flag = h.sys_flag & ~MessageSysFlag.COMPRESSED_FLAG
            msgs.append(
                MessageExt(
                    topic=h.topic,
                    queue_id=queue_id,
                    body=m.body,
                    flag=m.flag,
                    properties=props,
                    sys_flag=sys_flag,
                    born_timestamp=h.born_timestamp,
                    born_host=_host(channel.remote_addr),
                    store_host=self.c.store_host,
                    reconsume_times=h.reconsume_times or 0,
                )
            )
        header_props = decode_properties((h.properties or "").encode())
        wait = header_props.get(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"
        store = self.c.message_store
        started = time.perf_counter()
        future = store.async_put_messages(msgs, wait_store_msg_ok=wait)
        if future.done():  # ASYNC_FLUSH (or WAIT=false): answered without a task
            return self._answer_batch(h.topic, future.result(), started, queue_id)
        return self._await_batch(h.topic, future, started, queue_id)

    async def _await_batch(
        self, topic: str, future: Future[PutMessageResult], started: float, queue_id: int
    ) -> RemotingCommand:
        result = await await_store_future(future)
        return self._answer_batch(topic, result, started, queue_id)

    def _answer_batch(
        self, topic: str, result: PutMessageResult, started: float, queue_id: int
    ) -> RemotingCommand:
        self._record_put(topic, result, started, "Normal")
        return self._handle_put_message_result(result, queue_id=queue_id)

    def _record_put(
        self, topic: str, result: PutMessageResult, started: float, message_type: str
    ) -> None:
        """BrokerStatsManager's put figures, for puts the store accepted."""
        stats = self.c.broker_stats_manager
        stats.record_put_latency((time.perf_counter() - started) * 1000)
        append = result.append_result
        if append is None or not result.is_ok:
            return
        stats.record_put(topic, append.msg_num, append.wrote_bytes, message_type=message_type)

    def _handle_put_message_result(
        self, result: PutMessageResult, *, queue_id: int
    ) -> RemotingCommand:
        code, remark = STATUS_TO_RESPONSE[result.status]
        append = result.append_result
        if not result.is_ok or append is None:
            return _error(code, remark or result.status.name)
        header = SendMessageResponseHeader(
            msg_id=append.msg_id or create_message_id(self.c.store_host, append.wrote_offset),
            queue_id=queue_id,
            queue_offset=append.queue_offset,
        )
        fields = header.to_ext_fields()
        fields["MSG_REGION"] = REGION_ID
        fields["TRACE_ON"] = "true"
        return RemotingCommand.create_response(code, None, ext_fields=fields)

    # ------------------------------------------------------------------ send back

    async def consumer_send_msg_back(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ConsumerSendMsgBackRequestHeader.from_ext_fields(request.ext_fields)
        cfg = self.c.subscription_group_manager.find_subscription_group_config(h.group)
        if cfg is None:
            return _error(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group not exist, {h.group}",
            )
        if not self.c.config.broker_permission & PERM_WRITE:
            return _error(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.c.broker_addr}] sending message is forbidden",
            )
        if cfg.retry_queue_nums <= 0:
            return RemotingCommand.create_response(ResponseCode.SUCCESS)
        topic = retry_topic(h.group)
        queue_id = random.randrange(cfg.retry_queue_nums)
        tc = self.c.topic_config_manager.select_topic_config(topic)
        if tc is None:
            tc = self.c.topic_config_manager.create_topic_in_send_message_back_method(
                topic, cfg.retry_queue_nums, PERM_READ | PERM_WRITE
            )
            self.c.register_broker_all_soon()
        if not tc.writeable:
            return _error(
                ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden"
            )
        orig = await asyncio.to_thread(self.c.message_store.look_message_by_offset, h.offset)
        if orig is None:
            return _error(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {h.offset}")
        props = dict(orig.properties)
        props.setdefault(mc.PROPERTY_RETRY_TOPIC, orig.topic)
        props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
        max_times = cfg.retry_max_times
        if request.version >= 121 and h.max_reconsume_times is not None:
            max_times = h.max_reconsume_times
        delay_level = h.delay_level
        if orig.reconsume_times >= max_times or delay_level < 0:
            topic, queue_id = dlq_topic(h.group), 0
            self.c.topic_config_manager.create_topic_in_send_message_back_method(
                topic, 1, PERM_WRITE | PERM_READ
            )
            self.c.register_broker_all_soon()
            props.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        else:
            if delay_level == 0:
                delay_level = 3 + orig.reconsume_times
            props[mc.PROPERTY_DELAY_TIME_LEVEL] = str(delay_level)
        props.setdefault(mc.PROPERTY_ORIGIN_MESSAGE_ID, h.origin_msg_id or orig.msg_id)
        msg = MessageExt(
            topic=topic,
            queue_id=queue_id,
            body=orig.body,
            flag=orig.flag,
            properties=props,
            sys_flag=orig.sys_flag,
            born_timestamp=orig.born_timestamp,
            born_host=orig.born_host,
            store_host=self.c.store_host,
            reconsume_times=orig.reconsume_times + 1,
        )
        self.apply_delay(msg, max_delay_level(self.c.message_store))
        store = self.c.message_store
        result = await await_store_future(store.async_put_message(msg))
        self.c.broker_stats_manager.record_send_back(h.group, orig.topic)
        if result.is_ok:  # a flush or slave timeout still stored it
            return RemotingCommand.create_response(ResponseCode.SUCCESS)
        code, remark = STATUS_TO_RESPONSE[result.status]
        return RemotingCommand.create_response(code, remark)


#: Store status -> (response code, remark) (SendMessageProcessor.handlePutMessageResult).
STATUS_TO_RESPONSE: dict[PutMessageStatus, tuple[int, str | None]] = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    PutMessageStatus.CREATE_MAPPED_FILE_FAILED: (
        ResponseCode.SYSTEM_ERROR,
        "create mapped file failed, server is busy or broken.",
    ),
    PutMessageStatus.MESSAGE_ILLEGAL: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg body or properties length not matched.",
    ),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg properties length limit 32k.",
    ),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (
        ResponseCode.SERVICE_NOT_AVAILABLE,
        "service not available now. It may be caused by one of the following reasons: "
        "the broker's disk is full, messages are put to the slave, "
        "message store has been shut down, etc.",
    ),
    PutMessageStatus.OS_PAGE_CACHE_BUSY: (
        ResponseCode.SYSTEM_BUSY,
        "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
    ),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}

assert set(STATUS_TO_RESPONSE) == set(PutMessageStatus)


def _host(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    try:
        return (host or "127.0.0.1", int(port))
    except ValueError:
        return ("127.0.0.1", 0)


def _message_type(msg: MessageExt) -> str:
    """The message_type label of RocketMQ 5's metrics: Delay, Transaction or Normal."""
    if msg.topic == SCHEDULE_TOPIC:
        return "Delay"
    tran = MessageSysFlag.get_transaction_value(msg.sys_flag)
    if tran == MessageSysFlag.TRANSACTION_PREPARED_TYPE:
        return "Transaction"
    return "Normal"


def _transaction_kind(props: dict[str, str], sys_flag: int) -> str:
    """Classify a send: half (TRAN_MSG=true or a PREPARED sysFlag), rollback, or none."""
    tran = MessageSysFlag.get_transaction_value(sys_flag)
    if (props.get(mc.PROPERTY_TRANSACTION_PREPARED) or "").lower() == "true":
        return "half"
    if tran == MessageSysFlag.TRANSACTION_PREPARED_TYPE:
        return "half"
    if tran == MessageSysFlag.TRANSACTION_ROLLBACK_TYPE:
        return "rollback"
    return "none"


def max_delay_level(store: MessageStore) -> int:
    """RocketMQ's maxDelayLevel: how many levels the store's messageDelayLevel configures
    (every send asks: the text is parsed once, not per send)."""
    text = store.config.message_delay_level
    count = _LEVEL_COUNTS.get(text)
    if count is None:
        count = _LEVEL_COUNTS[text] = len(store.config.delay_level_table_ms())
    return count


_LEVEL_COUNTS: dict[str, int] = {}  # by messageDelayLevel text
