"""PopMessageProcessor: POP_MESSAGE (200050), RocketMQ 5's stateless consumption.

Checks, in Java's order and with its codes: the poll already over (POLLING_TIMEOUT), the
broker not readable, more than 32 messages (INVALID_PARAMETER), ``timerWheelEnable=false``
(SYSTEM_ERROR: POP's checkpoints travel through the timer), the topic, the queue id, the
group, the filter (tag or SQL92, ``expType``/``exp``). Then ``PopReader`` pops; nothing found
parks the request (``PopLongPollingService``) for its ``pollTime``, or answers POLLING_FULL.
The reply (SUCCESS) carries the records back to back and a PopMessageResponseHeader with
``startOffsetInfo``/``msgOffsetInfo``, from which the client builds each message's handle.
A FIFO pop (``order=true``, for a group with ``consumeMessageOrderly``) is answered with
reviveQid 999 and ``orderCountInfo`` (each message's earlier deliveries); see ``PopReader``.
A group with ``consumeMessageOrderly`` always pops FIFO (RocketMQ's proxy sends its ``order``).
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.pop.pop_batch import PopBatch
from rocketq.broker.pop.pop_codec import pop_answer_fields
from rocketq.broker.pop.pop_long_polling import PollingResult, PopRequest
from rocketq.broker.property_filter import message_filter_of, property_filter_disabled_remark
from rocketq.common.topic_config import is_readable
from rocketq.errors import FilterExpressionError, RemotingError
from rocketq.remoting.channel import FastResult, RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    MAX_POP_MSG_NUMS,
    PopMessageRequestHeader,
    PopMessageResponseHeader,
)
from rocketq.remoting.protocol.subscription import build_subscription_data, is_tag_type
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

FILTER_CACHE_SIZE = 1024  # (topic, expression) filters kept; the cache is emptied when full


class PopMessageProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self._filter_cache: dict[
            tuple[str, str | None, str | None],
            tuple[ExpressionMessageFilter, ExpressionMessageFilter],
        ] = {}

    def register(self) -> None:
        self.broker.remoting_server.register_fast_processor(
            RequestCode.POP_MESSAGE, self.pop_message
        )

    def pop_message(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        """On the connection's reader as far as the pop goes without waiting (a fast
        processor, as the pull's): a pop whose reads are all in the page cache and whose
        checkpoints the pop buffer holds is answered here, without a task; the rest goes on
        in a task (``PopReader.start_pop``)."""
        h = PopMessageRequestHeader.from_ext_fields(request.ext_fields)
        orderly = self._check(h)
        if isinstance(orderly, RemotingCommand):
            return orderly
        deadline_ms = self.broker.message_store.now_ms() + h.poll_time
        filters = self._filters(h)
        if isinstance(filters, RemotingCommand):
            return filters
        started = self._start(h, filters, h.order or orderly)
        if isinstance(started, PopBatch):
            return self._answer(channel, request, h, deadline_ms, filters[0], started)
        return self._answer_later(channel, request, h, deadline_ms, filters[0], started)

    async def _answer_later(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PopMessageRequestHeader,
        deadline_ms: int,
        message_filter: ExpressionMessageFilter,
        pending: Coroutine[Any, Any, PopBatch],
    ) -> RemotingCommand | None:
        batch = await pending
        return self._answer(channel, request, h, deadline_ms, message_filter, batch)

    def _start(
        self,
        h: PopMessageRequestHeader,
        filters: tuple[ExpressionMessageFilter, ExpressionMessageFilter],
        order: bool,
    ) -> PopBatch | Coroutine[Any, Any, PopBatch]:
        return self.broker.pop_service.reader.start_pop(
            h.consumer_group,
            h.topic,
            h.queue_id,
            h.max_msg_nums,
            h.invisible_time,
            h.init_mode,
            filters[0],
            filters[1],
            order=order,
            attempt_id=h.attempt_id,
        )

    async def _process(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PopMessageRequestHeader,
        deadline_ms: int,
    ) -> RemotingCommand | None:
        """A woken pop: pop again; nothing found parks it for the rest of its poll time."""
        filters = self._filters(h)
        if isinstance(filters, RemotingCommand):
            return filters
        started = self._start(h, filters, self._is_order(h))
        batch = started if isinstance(started, PopBatch) else await started
        return self._answer(channel, request, h, deadline_ms, filters[0], batch)

    def _answer(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PopMessageRequestHeader,
        deadline_ms: int,
        message_filter: ExpressionMessageFilter,
        batch: PopBatch,
    ) -> RemotingCommand | None:
        """The pop's answer; nothing found parks the request until ``deadline_ms`` (None: a
        woken request that still finds nothing parks again for the rest of its poll time)."""
        if batch.count:
            return _found(batch)
        pop = self.broker.pop_service
        code = ResponseCode.POLLING_TIMEOUT
        left_ms = deadline_ms - self.broker.message_store.now_ms()
        if left_ms > 0:
            parked = pop.long_polling.polling(
                PopRequest(
                    channel=channel,
                    topic=h.topic,
                    group=h.consumer_group,
                    queue_id=h.queue_id,
                    timeout_ms=left_ms,
                    wakeup=lambda: self._wakeup(channel, request, h, deadline_ms),
                    matches_tags_code=message_filter.is_matched_by_consume_queue,
                    matches_properties=message_filter.is_matched_by_properties,
                )
            )
            if parked is PollingResult.POLLING_SUC:
                return None
            if parked is PollingResult.POLLING_FULL:
                code = ResponseCode.POLLING_FULL
        header = PopMessageResponseHeader(
            pop_time=batch.pop_time,
            invisible_time=batch.invisible_time,
            revive_qid=batch.revive_qid,
            rest_num=batch.rest_num,
        )
        return RemotingCommand.create_response(
            code, "NO_MESSAGE_IN_QUEUE", ext_fields=header.to_ext_fields()
        )

    async def _wakeup(
        self,
        channel: RemotingChannel,
        request: RemotingCommand,
        h: PopMessageRequestHeader,
        deadline_ms: int,
    ) -> None:
        response = await self._process(channel, request, h, deadline_ms)
        if response is None or channel.is_closed:
            return
        response.response_to(request)
        try:
            await channel.send(response)
        except (RemotingError, OSError) as exc:
            log.info("answering parked pop to %s failed: %s", channel.remote_addr, exc)

    def _is_order(self, h: PopMessageRequestHeader) -> bool:
        """The request's ``order``, or the group's ``consumeMessageOrderly`` (what RocketMQ's
        proxy sends as ``order`` for a FIFO group, so remoting pops get it too)."""
        if h.order:
            return True
        sgm = self.broker.subscription_group_manager
        group = sgm.subscription_group_table.get(h.consumer_group)  # _check looked it up
        return group is not None and group.orderly

    def _check(self, h: PopMessageRequestHeader) -> RemotingCommand | bool:
        """The refusal, else whether the group is orderly (``consumeMessageOrderly``)."""
        broker = self.broker
        ip = broker.config.broker_ip1
        if h.is_timeout_too_much(broker.message_store.now_ms()):
            return _error(
                ResponseCode.POLLING_TIMEOUT, f"the broker[{ip}] pop message is timeout too much"
            )
        if not is_readable(broker.config.broker_permission):
            return _error(ResponseCode.NO_PERMISSION, f"the broker[{ip}] pop message is forbidden")
        if h.max_msg_nums > MAX_POP_MSG_NUMS:
            return _error(
                ResponseCode.INVALID_PARAMETER,
                f"the broker[{ip}] pop message's num is greater than {MAX_POP_MSG_NUMS}",
            )
        if broker.message_store.timer_message_store is None:
            return _error(
                ResponseCode.SYSTEM_ERROR,
                f"the broker[{ip}] pop message is forbidden because timerWheelEnable is false",
            )
        tc = broker.topic_config_manager.select_topic_config(h.topic)
        if tc is None:
            return _error(
                ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist, apply first please!"
            )
        if not tc.readable:
            return _error(
                ResponseCode.NO_PERMISSION, f"the topic[{h.topic}] peeking message is forbidden"
            )
        if h.queue_id >= tc.read_queue_nums:
            return _error(
                ResponseCode.INVALID_PARAMETER,
                f"queueId[{h.queue_id}] is illegal, topic:[{h.topic}] "
                f"topicConfig.readQueueNums:[{tc.read_queue_nums}]",
            )
        group = broker.subscription_group_manager.find_subscription_group_config(h.consumer_group)
        if group is None:
            return _error(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group [{h.consumer_group}] does not exist",
            )
        if not group.consume_enable:
            return _error(
                ResponseCode.NO_PERMISSION, f"subscription group no permission, {h.consumer_group}"
            )
        return group.orderly

    def _filters(
        self, h: PopMessageRequestHeader
    ) -> tuple[ExpressionMessageFilter, ExpressionMessageFilter] | RemotingCommand:
        """The topic's filter (the request's expression) and the retry topic's (everything);
        built once per (topic, type, expression) and kept (they are immutable)."""
        if h.exp and not is_tag_type(h.exp_type) and not self.broker.config.enable_property_filter:
            return _error(
                ResponseCode.SYSTEM_ERROR, property_filter_disabled_remark(h.exp_type or "")
            )
        key = (h.topic, h.exp_type, h.exp)
        found = self._filter_cache.get(key)
        if found is not None:
            return found
        try:
            retry_filter = message_filter_of(build_subscription_data(h.topic, "*"))
            if not h.exp:
                found = message_filter_of(build_subscription_data(h.topic, "*")), retry_filter
            else:
                data = build_subscription_data(h.topic, h.exp, 0, h.exp_type)
                found = message_filter_of(data), retry_filter
        except FilterExpressionError:
            return _error(
                ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"
            )
        if len(self._filter_cache) >= FILTER_CACHE_SIZE:
            self._filter_cache.clear()
        self._filter_cache[key] = found
        return found


def _found(batch: PopBatch) -> RemotingCommand:
    fields = pop_answer_fields(
        batch.pop_time, batch.invisible_time, batch.revive_qid, batch.rest_num, batch.entries,
        ";".join(batch.order_count_info) if batch.order else None,
    )  # fmt: skip
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, "FOUND", ext_fields=fields, body=b"".join(batch.buffers)
    )


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)
