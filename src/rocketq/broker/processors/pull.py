"""PullMessageProcessor: PULL_MESSAGE, with long polling (PullRequestHoldService).

Store status -> reply code, as RocketMQ 4.9 answers:

    FOUND                                  SUCCESS (body = the stored records, back to back)
    NO_MATCHED_MESSAGE, MESSAGE_WAS_REMOVING PULL_RETRY_IMMEDIATELY
    OFFSET_FOUND_NULL, OFFSET_OVERFLOW_ONE  PULL_NOT_FOUND  (held when the suspend bit is set)
    NO_MESSAGE_IN_QUEUE, NO_MATCHED_LOGIC_QUEUE
                                  PULL_OFFSET_MOVED if queueOffset != 0, else PULL_NOT_FOUND
    OFFSET_TOO_SMALL, OFFSET_OVERFLOW_BADLY PULL_OFFSET_MOVED

Every reply with those codes carries all four header fields. A held pull is re-run once, by
the hold service, without the suspend permission. A pull with a TAG filter (or none) whose
records are in the page cache is read in one C call (``MessageStore.get_message_body``: the
units walked and the records copied into the body, DefaultMessageStore#getMessage) and
answered on the loop; anything else takes ``get_message``, the reference. The broker
filters by the consume queue's tags code only and returns the records as stored; the client
checks the exact TAGS string (``rocketq.remoting.protocol.subscription`` says where each
filter runs).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.long_polling import PullRequest
from rocketq.broker.processors.pull_answer import _answer, _code, found_head_pieces
from rocketq.broker.property_filter import message_filter_of, property_filter_disabled_remark
from rocketq.common import native_record
from rocketq.common.pull_sys_flag import (
    has_commit_offset_flag,
    has_subscription_flag,
    has_suspend_flag,
)
from rocketq.common.topic_config import is_readable
from rocketq.errors import FilterExpressionError, RemotingError
from rocketq.remoting.channel import FastResult, RemotingChannel
from rocketq.remoting.protocol.bodies import MessageModel
from rocketq.remoting.protocol.codes import RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.remoting.protocol.subscription import (
    SubscriptionData,
    build_subscription_data,
    is_tag_type,
)
from rocketq.remoting.protocol.topic_route import MASTER_ID
from rocketq.response_code import ResponseCode
from rocketq.store.config import BrokerRole
from rocketq.store.results import GetMessageResult, GetMessageStatus

# A pull within this many units of its queue's end (a live consumer, a held pull woken by an
# arrival) reads on the loop: those records were just written and sit in the page cache, and
# a thread hop would cost more than the read. Pulls further back (a backlog) read in a thread.
HOT_READ_UNITS = 32

#: How many pull filters (one per distinct subscription) are kept before they are all dropped.
KEPT_FILTERS = 4096

log = logging.getLogger(__name__)

#: the header of a woken pull's FOUND answer around its numbers (``pull_answer``)
FOUND_HEAD_PIECES = found_head_pieces()


class PullMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self._filters: dict[tuple[str, str | None, int, str | None], ExpressionMessageFilter] = {}
        self._prepared: set[tuple[str, int]] = set()  # queues whose file was asked for
        self._preparing: set[asyncio.Task[bool]] = set()

    def register(self) -> None:
        server = self.broker.remoting_server
        server.register_fast_processor(RequestCode.PULL_MESSAGE, self.process_fast)
        self.broker.pull_wakeup = self.execute_request_when_wakeup
        self.broker.pull_request_hold_service.answer_now = self.answer_woken

    def process_fast(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        """On the connection's reader: a pull of the queue's newest records (or a refusal, or
        a pull held for arrivals) is answered without a task; a backlog read is a task."""
        return self._process(channel, request, broker_allow_suspend=True)

    async def execute_request_when_wakeup(self, pull: PullRequest) -> None:
        left = self.answer_woken(pull)
        if left is not None:
            await left

    def answer_woken(self, pull: PullRequest) -> Coroutine[Any, Any, None] | None:
        """Re-run a woken pull (RocketMQ's ``executeRequestWhenWakeup``) and answer it now
        when it reads on the loop (None; the answer joins its connection's send replies of
        the same put flush, ``write_joined``); else the coroutine that reads and answers.
        A JSON pull whose read is walked in C is answered from that read, a FOUND one as
        frame bytes (``_answer_found``); anything else takes ``_process``."""
        h = pull.header
        if h is not None and pull.request.serialize_type is SerializeType.JSON:
            found = self._read_woken(h)
            if found is not None:  # walked in C, from the page cache: answered now
                if not self._answer_found(pull, h, found):
                    response = self._answer_with_suggestion(h, found)
                    self._record_get(h, found, response)
                    pull.channel.write_joined(pull.request, response)
                return None
        answer = self._process(pull.channel, pull.request, broker_allow_suspend=False, header=h)
        if answer is None or isinstance(answer, RemotingCommand):
            if answer is not None:
                pull.channel.write_joined(pull.request, answer)
            return None
        return self._answer_later(pull, answer)

    def _read_woken(self, h: PullMessageRequestHeader) -> GetMessageResult | None:
        """A woken pull's read when it passes the checks, has a TAG filter (or none) and its
        records are walked in C from the page cache (``_process``'s first case); else None
        (``_process`` checks, refuses or reads it again)."""
        if self._check(h) is not None:
            return None
        message_filter = self._filter_of(h)
        if type(message_filter) is not ExpressionMessageFilter:
            return None
        # its records arrived since it was held (it is held only at its queue's end): they
        # were just written, so no page-cache check (mincore, ~2.5 us) before the walk
        return self.broker.message_store.get_message_body(
            h.topic, h.queue_id, h.queue_offset, h.max_msg_nums, _codes(message_filter), False
        )

    def _answer_found(
        self, pull: PullRequest, h: PullMessageRequestHeader, found: GetMessageResult
    ) -> bool:
        """Answer a woken pull's FOUND read with its frame head built in C (``pull_answer``):
        ``_answer_with_suggestion``, ``_record_get`` and ``write_joined`` of the same bytes,
        without the RemotingCommand. False (nothing done) for anything else."""
        native = native_record.RECORD
        body = found.body
        if (
            native is None
            or body is None
            or found.status is not GetMessageStatus.FOUND
            or (self._is_slave and not self.broker.config.slave_read_enable)
        ):
            return False
        values = (
            self._suggest_which_broker_id(h, found),
            found.next_begin_offset,
            found.min_offset,
            found.max_offset,
            pull.request.opaque,
        )
        head = native.pull_reply_head(FOUND_HEAD_PIECES, values, len(body))
        if head is None:
            return False
        self.broker.broker_stats_manager.record_get(
            h.consumer_group, h.topic, h.queue_id, found.body_count, len(body), values[1]
        )
        pull.channel.write_joined_frame(head, body)
        return True

    async def _answer_later(
        self, pull: PullRequest, answer: Coroutine[Any, Any, RemotingCommand | None]
    ) -> None:
        response = await answer
        if response is None or pull.channel.is_closed:
            return
        response.response_to(pull.request)
        try:
            await pull.channel.send(response)
        except (RemotingError, OSError) as exc:
            log.info("answering held pull to %s failed: %s", pull.channel.remote_addr, exc)

    def _process(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        *,
        broker_allow_suspend: bool,
        header: PullMessageRequestHeader | None = None,
    ) -> RemotingCommand | Coroutine[Any, Any, RemotingCommand | None] | None:
        """The answer (None: none, or held), or a coroutine when the read must leave the loop.
        ``header``: the request's, parsed when it was held (a woken pull's)."""
        h = header or PullMessageRequestHeader.from_ext_fields(request.ext_fields)
        refused = self._check(h)
        if refused is not None:
            return refused
        message_filter = self._filter_of(h)
        if isinstance(message_filter, RemotingCommand):
            return message_filter
        store = self.broker.message_store
        if type(message_filter) is ExpressionMessageFilter:  # SQL92 reads the properties
            found = store.get_message_body(
                h.topic, h.queue_id, h.queue_offset, h.max_msg_nums, _codes(message_filter)
            )
            if found is not None:  # walked in C, from the page cache: answered on the loop
                return self._after_read(
                    channel, request, h, message_filter, found, broker_allow_suspend
                )
        read = functools.partial(
            store.get_message,
            h.consumer_group,
            h.topic,
            h.queue_id,
            h.queue_offset,
            h.max_msg_nums,
            message_filter,
        )
        if store.get_max_offset_in_queue(h.topic, h.queue_id) - h.queue_offset <= HOT_READ_UNITS:
            result = read()  # the queue's newest records, just written: in the page cache
            return self._after_read(
                channel, request, h, message_filter, result, broker_allow_suspend
            )
        return self._read_in_thread(channel, request, h, message_filter, read, broker_allow_suspend)

    async def _read_in_thread(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PullMessageRequestHeader,
        message_filter: ExpressionMessageFilter,
        read: Callable[[], GetMessageResult],
        broker_allow_suspend: bool,
    ) -> RemotingCommand | None:
        result = await asyncio.to_thread(read)  # a backlog may have to come from disk
        return self._after_read(channel, request, h, message_filter, result, broker_allow_suspend)

    def _after_read(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PullMessageRequestHeader,
        message_filter: ExpressionMessageFilter,
        result: GetMessageResult,
        broker_allow_suspend: bool,
    ) -> RemotingCommand | None:
        response: RemotingCommand | None
        if broker_allow_suspend and has_suspend_flag(h.sys_flag) and self._not_found(h, result):
            # held: the PULL_NOT_FOUND it would be answered now is not built
            self.broker.broker_stats_manager.record_get_miss()
            timeout_ms = (
                h.suspend_timeout_millis
                if self.broker.config.long_polling_enable
                else self.broker.config.short_polling_time_ms
            )
            self._prepare_queue(h.topic, h.queue_id)
            self.broker.pull_request_hold_service.suspend_pull_request(
                PullRequest(
                    channel=channel,
                    request=request,
                    topic=h.topic,
                    queue_id=h.queue_id,
                    pull_from_this_offset=h.queue_offset,
                    timeout_ms=timeout_ms,
                    matches_tags_code=message_filter.is_matched_by_consume_queue,
                    matches_properties=message_filter.is_matched_by_properties,
                    header=h,
                )
            )
            response = None
        else:
            response = self._answer_with_suggestion(h, result)
            self._record_get(h, result, response)
        if (
            broker_allow_suspend
            and has_commit_offset_flag(h.sys_flag)
            and h.commit_offset >= 0
            and not self._is_slave  # a slave takes offsets only from UPDATE_CONSUMER_OFFSET
        ):
            self.broker.consumer_offset_manager.commit_offset(
                channel.remote_addr, h.consumer_group, h.topic, h.queue_id, h.commit_offset
            )
            if self.broker.config.enable_controller_mode:
                # persisted within 50 ms: a master with no live slave, killed -9, keeps what it
                # answered (the 5 s flushConsumerOffsetInterval replayed seconds after a failover)
                self.broker.pop_service.note_offset_commit()
        return response

    def _prepare_queue(self, topic: str, queue_id: int) -> None:
        """A held pull's queue that has had no message yet gets its consume-queue file now,
        in a thread (``MessageStore.prepare_consume_queue``), not on the loop inside the
        dispatch of its first message, where the creation's syncs stalled every connection
        for 1-4 ms. Asked once per queue."""
        key = (topic, queue_id)
        if key in self._prepared or self._is_slave:
            return
        if len(self._prepared) >= KEPT_FILTERS:
            self._prepared.clear()
        self._prepared.add(key)
        store = self.broker.message_store
        if store.find_consume_queue(topic, queue_id, create=False) is not None:
            return
        task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(store.prepare_consume_queue, topic, queue_id)
        )
        self._preparing.add(task)
        task.add_done_callback(self._prepared_queue)

    def _prepared_queue(self, task: asyncio.Task[bool]) -> None:
        self._preparing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("creating a consume queue file ahead failed: %r", task.exception())

    def _filter_of(self, h: PullMessageRequestHeader) -> ExpressionMessageFilter | RemotingCommand:
        """The pull's filter, or its refusal. A filter built from the request's own
        subscription is kept (by topic, expression, version and type) for the next pull of
        the same subscription: a consumer sends it on every pull."""
        key = None
        if has_subscription_flag(h.sys_flag):
            key = (h.topic, h.subscription, h.sub_version, h.expression_type)
            kept = self._filters.get(key)
            if kept is not None and (
                is_tag_type(kept.subscription.expression_type if kept.subscription else None)
                or self.broker.config.enable_property_filter
            ):
                return kept
        subscription = self._subscription(h)
        if isinstance(subscription, RemotingCommand):
            return subscription
        message_filter = self._message_filter(subscription)
        if key is not None and not isinstance(message_filter, RemotingCommand):
            if len(self._filters) >= KEPT_FILTERS:
                self._filters.clear()
            self._filters[key] = message_filter
        return message_filter

    def _not_found(self, h: PullMessageRequestHeader, result: GetMessageResult) -> bool:
        """The read would be answered PULL_NOT_FOUND (``_answer_with_suggestion``'s code)."""
        if self._is_slave and not self.broker.config.slave_read_enable:
            return False  # PULL_RETRY_IMMEDIATELY: back to the master
        return _code(h, result) == ResponseCode.PULL_NOT_FOUND

    @property
    def _is_slave(self) -> bool:
        return self.broker.config.broker_role is BrokerRole.SLAVE

    def _answer_with_suggestion(
        self, h: PullMessageRequestHeader, result: GetMessageResult
    ) -> RemotingCommand:
        """The reply, with suggestWhichBrokerId; a slave without slaveReadEnable serves
        nothing and sends the consumer back to the master (4.x)."""
        response = _answer(h, result)
        suggest = self._suggest_which_broker_id(h, result)
        if self._is_slave and not self.broker.config.slave_read_enable:
            response.code, response.body, suggest = ResponseCode.PULL_RETRY_IMMEDIATELY, b"", 0
        response.ext_fields["suggestWhichBrokerId"] = str(suggest)
        return response

    def _suggest_which_broker_id(
        self, h: PullMessageRequestHeader, result: GetMessageResult
    ) -> int:
        """The master suggests the slave to a consumer reading beyond memory (slaveReadEnable)."""
        if not self.broker.config.slave_read_enable:
            return MASTER_ID
        cfg = self.broker.subscription_group_manager.find_subscription_group_config(
            h.consumer_group
        )
        if cfg is None:
            return MASTER_ID
        if result.suggest_pulling_from_slave:
            return cfg.which_broker_when_consume_slowly
        return cfg.broker_id

    def _record_get(
        self,
        h: PullMessageRequestHeader,
        result: GetMessageResult,
        response: RemotingCommand | None,
    ) -> None:
        """BrokerStatsManager's get figures: found pulls with what they carried, misses."""
        stats = self.broker.broker_stats_manager
        if response is not None and response.code == ResponseCode.SUCCESS:
            stats.record_get(
                h.consumer_group,
                h.topic,
                h.queue_id,
                result.message_count,
                len(response.body),
                result.next_begin_offset,
            )
        elif response is None or response.code == ResponseCode.PULL_NOT_FOUND:
            stats.record_get_miss()

    def _subscription(self, h: PullMessageRequestHeader) -> SubscriptionData | RemotingCommand:
        """The pull's subscription: from the request, else from the group's heartbeat."""
        if has_subscription_flag(h.sys_flag):
            return _build(h.topic, h.subscription, h.sub_version, h.expression_type)
        group_info = self.broker.consumer_manager.get_consumer_group_info(h.consumer_group)
        if group_info is None:
            return _error(
                ResponseCode.SUBSCRIPTION_NOT_EXIST,
                f"the consumer's group info not exist, {h.consumer_group}",
            )
        found = group_info.subscription_table.get(h.topic)
        if group_info.message_model is MessageModel.BROADCASTING:
            cfg = self.broker.subscription_group_manager.subscription_group_table.get(
                h.consumer_group
            )
            if cfg is not None and not cfg.consume_broadcast_enable:
                return _error(
                    ResponseCode.NO_PERMISSION,
                    f"the consumer group[{h.consumer_group}] can not consume by broadcast way",
                )
        if found is None:
            return _error(
                ResponseCode.SUBSCRIPTION_NOT_EXIST,
                f"the consumer's subscription not exist, {h.topic}",
            )
        # the C++ heartbeat's codeSet is atoi(tag): rebuild the codes from the expression
        return _build(h.topic, found.sub_string, found.sub_version, found.expression_type)

    def _message_filter(
        self, subscription: SubscriptionData
    ) -> ExpressionMessageFilter | RemotingCommand:
        """The filter, or the refusal of a property filter that is off or does not compile."""
        expression_type = subscription.expression_type
        if not is_tag_type(expression_type) and not self.broker.config.enable_property_filter:
            return _error(
                ResponseCode.SYSTEM_ERROR, property_filter_disabled_remark(expression_type)
            )
        try:
            return message_filter_of(subscription)
        except FilterExpressionError as exc:
            return _error(
                ResponseCode.SUBSCRIPTION_PARSE_FAILED,
                f"parse the consumer's subscription[{subscription.sub_string}] failed: {exc}",
            )

    def _check(self, h: PullMessageRequestHeader) -> RemotingCommand | None:
        if not is_readable(self.broker.config.broker_permission):
            return _error(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.broker.broker_addr}] pulling message is forbidden",
            )
        group_cfg = self.broker.subscription_group_manager.find_subscription_group_config(
            h.consumer_group
        )
        if group_cfg is None:
            return _error(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group [{h.consumer_group}] does not exist",
            )
        if not group_cfg.consume_enable:
            return _error(
                ResponseCode.NO_PERMISSION, f"subscription group no permission, {h.consumer_group}"
            )
        tc = self.broker.topic_config_manager.select_topic_config(h.topic)
        if tc is None:
            return _error(
                ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist, apply first please!"
            )
        if not tc.readable:
            return _error(
                ResponseCode.NO_PERMISSION, f"the topic[{h.topic}] pulling message is forbidden"
            )
        if not 0 <= h.queue_id < tc.read_queue_nums:
            return _error(
                ResponseCode.SYSTEM_ERROR,
                f"queueId[{h.queue_id}] is illegal, topic:[{h.topic}] "
                f"topicConfig.readQueueNums:[{tc.read_queue_nums}]",
            )
        return None


def _codes(message_filter: ExpressionMessageFilter) -> tuple[int, ...] | None:
    """A TAG filter's code set as the C walk (``get_message_body``) takes it; None: all."""
    if message_filter.matches_all:
        return None
    assert message_filter.subscription is not None
    return tuple(message_filter.subscription.code_set)


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


def _build(
    topic: str, expression: str | None, sub_version: int, expression_type: str | None
) -> SubscriptionData | RemotingCommand:
    try:
        return build_subscription_data(topic, expression, sub_version, expression_type)
    except FilterExpressionError as exc:
        return _error(
            ResponseCode.SUBSCRIPTION_PARSE_FAILED,
            f"parse the consumer's subscription failed: {exc}",
        )
