"""SendMessageProcessor: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) and
CONSUMER_SEND_MSG_BACK (36), as RocketMQ's SendMessageProcessor.

Order of checks (AbstractSendMessageProcessor.msgCheck): broker writable, topic name valid,
topic not reserved, topic exists or is auto-created from ``defaultTopic``, queue id in range;
then the message checks (body size, properties size). A retry-topic message past its group's
``retryMaxTimes`` goes to ``%DLQ%<group>``; a message with a delay level is rerouted to
SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC/REAL_QID (the ScheduleMessageService brings
it back). The send codes are fast processors (channel.py): a single message is checked on the
connection's reader and its put queued in the ``PutBatcher``, which stores the puts of the
reads of one loop iteration (every connection's) in one ``async_put_each`` call after them
and answers each send with its own
result (after the group commit for SYNC_FLUSH); where no rule needs the properties map, the
producer's properties string is passed through (``send_properties``) and the replies of those
sends are built together in C (``send_answer``); with the C record module on, such a send is
put as a ``SendPut`` (no MessageExt), which C encodes straight into the commitlog's mapped
file (``CommitLog.append_each``). With the C frames on too, a SEND_MESSAGE_V2 is first read
by C (``send_put_of``: the V2 header and the pass-through of its properties in one call);
when C takes it and its topic passes the checks (``_topic_takes``), it goes to the batcher
without a header object; anything else is read again by the Python path, the reference.
When no rpc hook (ACL, fencing) must see the requests first, a read's SEND_MESSAGE_V2
frames are read into their puts by the read's own split (``split_sends``, one C call per
read: ``spec_for`` gives it the rules and hosts, ``take`` queues each put), so such a send
costs no call of its own. A batch send is
answered at once when the store has it, else from a task awaiting the store's future
(``send_batch``). A message with WAIT=false (and a batch whose header properties say so) is
answered once it is appended, without waiting for the SYNC_FLUSH group commit
(CommitLog.handleDiskFlush). The delay rerouting and the transaction kind are in
``send_kinds``, the put result's response and stats in ``send_results``, CONSUMER_SEND_MSG_BACK
in ``send_back``.
"""

from __future__ import annotations

import logging
import random
import time
from typing import NamedTuple

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.message_inner import born_host, message_from_request
from rocketq.broker.processors.send_answer import FastSendDone, SendAnswers
from rocketq.broker.processors.send_back import ConsumerSendMsgBackProcessor
from rocketq.broker.processors.send_batch import BatchSender
from rocketq.broker.processors.send_kinds import (
    apply_delay,
    apply_timer,
    max_delay_level,
    recall_handle_of,
    transaction_kind,
)
from rocketq.broker.processors.send_results import (
    STATUS_TO_RESPONSE,
    message_type_for,
    message_type_of,
    put_response,
    record_put,
    timer_remark,
)
from rocketq.broker.processors.send_take import SendTakes
from rocketq.broker.put_batcher import PutBatcher
from rocketq.broker.send_properties import native_rules, pass_through
from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_id import host_to_bytes
from rocketq.common.properties import decode_properties
from rocketq.common.topic import (
    NOT_ALLOWED_SEND_TOPICS,
    RETRY_GROUP_TOPIC_PREFIX,
    dlq_topic,
    validate_topic,
)
from rocketq.common.topic_config import PERM_READ, PERM_WRITE, TopicConfig
from rocketq.remoting import native_frames
from rocketq.remoting.channel import DeferredReply, FastResult, RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2
from rocketq.response_code import ResponseCode
from rocketq.store.commitlog_send import SendPut
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()

log = logging.getLogger(__name__)

MAX_PROPERTIES_BYTES = 32767
_HOSTS_CACHED = 4096  # born hosts' bytes remembered (one a connection), then forgotten


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


class _PreparedSend(NamedTuple):
    """A checked single-message send: its put, its transaction kind and its queue."""

    put: PutRequest | SendPut
    tran: str
    queue_id: int


class SendMessageProcessor(SendTakes):
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self.answers = SendAnswers(controller, self._answer_alone)
        self.put_batcher = PutBatcher(
            lambda: controller.message_store, self.answers.answer_group, self.answers
        )
        self._send_batch = BatchSender(controller, self._bytes_of).send_batch
        self._send_back = ConsumerSendMsgBackProcessor(controller)
        self._host_bytes: dict[object, bytes] = {}  # address -> host_to_bytes, for SendPuts
        self._rules_of: object = None  # the BrokerConfig _rules were made for
        self._rules: tuple[tuple[bytes, ...], bytes, bytes, bytes, int] | None = None
        # topic -> (its config, the queue limit) of topics _topic_takes let through; valid
        # while the table holds that same (frozen) config
        self._takes: dict[str, tuple[TopicConfig, int]] = {}
        self.native_reads = 0  # sends read by send_put_of, for tests and benches
        self.split_reads = 0  # of them, read in their read's split (split_sends)
        self.taker = None  # take_sends' state: send_take.SendTakes.spec_for makes it

    def register(self) -> None:
        server = self.broker.remoting_server
        for code in (
            RequestCode.SEND_MESSAGE,
            RequestCode.SEND_MESSAGE_V2,
            RequestCode.SEND_BATCH_MESSAGE,
        ):
            server.register_fast_processor(code, self.process_fast)
        server.register_processor(
            RequestCode.CONSUMER_SEND_MSG_BACK, self._send_back.consumer_send_msg_back
        )
        # the puts of every read of this loop iteration: stored together after the reads
        server.add_read_end_hook(self.put_batcher.flush_soon)
        # a read's SEND_MESSAGE_V2 frames read into their puts by its split (spec_for, take)
        server.set_read_sends(self)

    # ------------------------------------------------------------------ send

    def process_fast(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        """A send, on the connection's reader: checks now, the put with the others of this
        loop iteration (``PutBatcher``), the answer when the store has it."""
        frames = native_frames.FRAMES
        if (
            frames is not None
            and request.code == RequestCode.SEND_MESSAGE_V2
            and native_record.RECORD is not None
        ):
            put = frames.send_put_of(
                request.ext_fields,
                request.body,
                self._rules_now(),
                SendPut,
                self._bytes_of(channel.remote_addr),
                self._bytes_of(self.broker.store_host),
            )
            if put is not None:
                deferred = self._queue_read(channel, request, put)
                if deferred is not None:
                    return deferred
        if request.code == RequestCode.SEND_MESSAGE:
            h = SendMessageRequestHeader.from_ext_fields(request.ext_fields)
        else:
            h = SendMessageRequestHeaderV2.decode_as_v1(request.ext_fields)
        refused = self._msg_check(h)
        if refused is not None:
            return refused
        tc = self.broker.topic_config_manager.select_topic_config(h.topic)
        assert tc is not None
        queue_id = h.queue_id if h.queue_id >= 0 else _random.randrange(tc.write_queue_nums)
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
            except Exception as exc:  # noqa: BLE001 -- any failure answers SYSTEM_ERROR, with the reason
                log.warning("answering a send to %s failed: %r", h.topic, exc)
                response = _error(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__)
            deferred.answer(response)

        if prepared.put.properties is not None:  # passed through: its answer may be C's
            self.put_batcher.submit(
                prepared.put,
                FastSendDone(done, deferred, h.topic, prepared.queue_id),
                flush_soon=False,
            )
        else:
            self.put_batcher.submit(prepared.put, done, flush_soon=False)  # after the reads
        return deferred

    def _rules_now(self) -> tuple[tuple[bytes, ...], bytes, bytes, bytes, int]:
        """``send_put_of``'s rules for the broker's config now (made again when it changes)."""
        config = self.broker.config
        if self._rules_of is not config or self._rules is None:
            self._rules_of = config
            self._rules = native_rules(
                config.broker_cluster_name, RETRY_GROUP_TOPIC_PREFIX, config.max_message_size
            )
        return self._rules

    def _answer_alone(
        self, deferred: DeferredReply, put: SendPut, result: PutMessageResult
    ) -> None:
        """A SendPut read by C, answered by the Python path (a put the C answer leaves)."""
        try:
            prepared = _PreparedSend(put, "none", put.queue_id)
            response = self._answer_one(put.topic, prepared, result, deferred.started)
        except Exception as exc:  # noqa: BLE001 -- any failure answers SYSTEM_ERROR, with the reason
            log.warning("answering a send to %s failed: %r", put.topic, exc)
            response = _error(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__)
        deferred.answer(response)

    def _msg_check(self, h: SendMessageRequestHeader) -> RemotingCommand | None:
        if not self.broker.config.broker_permission & PERM_WRITE:
            return _error(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.broker.broker_addr}] sending message is forbidden",
            )
        reason = validate_topic(h.topic)
        if reason is not None:
            return _error(ResponseCode.SYSTEM_ERROR, reason)
        if h.topic in NOT_ALLOWED_SEND_TOPICS:
            return _error(
                ResponseCode.NO_PERMISSION, f"Sending message to topic[{h.topic}] is forbidden."
            )
        tm = self.broker.topic_config_manager
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
            self.broker.register_broker_all_soon()
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
        if len(request.body) > self.broker.config.max_message_size:
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message body size over max value, MAX: {self.broker.config.max_message_size}",
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
            passed = pass_through(text, self.broker.config.broker_cluster_name)
            if passed is not None:
                record_props, wait = passed
                if native_record.RECORD is not None:  # C encodes it (CommitLog.append_each)
                    put = SendPut(
                        h.topic,
                        queue_id,
                        bytes(request.body),
                        record_props,
                        h.flag,
                        h.sys_flag,
                        h.born_timestamp,
                        self._bytes_of(channel.remote_addr),
                        self._bytes_of(self.broker.store_host),
                        reconsume_times,
                        wait,
                    )
                    return _PreparedSend(put, "none", queue_id)
                msg = message_from_request(
                    h,
                    channel.remote_addr,
                    self.broker.store_host,
                    topic=h.topic,
                    queue_id=queue_id,
                    body=bytes(request.body),
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
        props[mc.PROPERTY_CLUSTER] = self.broker.config.broker_cluster_name
        msg = message_from_request(
            h,
            channel.remote_addr,
            self.broker.store_host,
            topic=topic,
            queue_id=queue_id,
            body=bytes(request.body),
            properties=props,
        )
        tran = transaction_kind(props, h.sys_flag)
        if tran == "half":
            if self.broker.config.reject_transaction_message:
                return _error(
                    ResponseCode.NO_PERMISSION,
                    f"the broker[{self.broker.config.broker_ip1}] sending transaction message "
                    "is forbidden",
                )
            msg.properties[mc.PROPERTY_TRANSACTION_PREPARED] = "true"
            msg.properties.setdefault(mc.PROPERTY_PRODUCER_GROUP, h.producer_group)
            self.broker.transactional_message_service.parse_half_message(msg)
        elif tran == "rollback":
            return _error(
                ResponseCode.MESSAGE_ILLEGAL,
                "sysFlag TRANSACTION_ROLLBACK_TYPE is written by END_TRANSACTION only",
            )
        else:
            store = self.broker.message_store
            refused = apply_timer(msg, store)
            if refused is not None:
                remark = timer_remark(refused, store.config)
                return _error(STATUS_TO_RESPONSE[refused][0], remark or refused.name)
            apply_delay(msg, max_delay_level(store))
        return _PreparedSend(PutRequest(msg, wait), tran, queue_id)

    def _bytes_of(self, host: str | tuple[str, int]) -> bytes:
        """A born (``ip:port``) or store host's bytes in a record, remembered."""
        raw = self._host_bytes.get(host)
        if raw is None:
            if len(self._host_bytes) >= _HOSTS_CACHED:
                self._host_bytes.clear()
            raw = host_to_bytes(born_host(host) if isinstance(host, str) else host)
            self._host_bytes[host] = raw
        return raw

    def _answer_one(
        self, topic: str, prepared: _PreparedSend, result: PutMessageResult, started: float
    ) -> RemotingCommand:
        put = prepared.put
        if isinstance(put, SendPut):  # a pass-through send: no delay, timer or half
            record_put(self.broker, topic, result, started, message_type_for(topic, put.sys_flag))
            return put_response(self.broker, result, queue_id=put.queue_id)
        msg = put.msg
        message_type = "Transaction" if prepared.tran == "half" else message_type_of(msg)
        record_put(self.broker, topic, result, started, message_type)
        return put_response(
            self.broker,
            result,
            queue_id=prepared.queue_id if prepared.tran == "half" else msg.queue_id,
            recall_handle=recall_handle_of(msg, self.broker.config.broker_name),
        )

    def _retry_or_dlq(
        self, topic: str, reconsume_times: int, max_from_header: int | None, props: dict[str, str]
    ) -> str | RemotingCommand:
        group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
        cfg = self.broker.subscription_group_manager.find_subscription_group_config(group)
        if cfg is None:
            return _error(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {group}"
            )
        max_times = max_from_header if max_from_header is not None else cfg.retry_max_times
        if reconsume_times < max_times:
            return topic
        dlq = dlq_topic(group)
        self.broker.topic_config_manager.create_topic_in_send_message_back_method(
            dlq, 1, PERM_READ | PERM_WRITE
        )
        self.broker.register_broker_all_soon()
        props.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        return dlq

    #: the delay rerouting (send_kinds), as SendMessageProcessor.apply_delay too
    apply_delay = staticmethod(apply_delay)
