"""PullMessageProcessor: PULL_MESSAGE, with long polling (remoting.md §3.2.2).

Store status -> reply code, as RocketMQ 4.9 answers:

    FOUND                                  SUCCESS (body = the stored records, back to back)
    NO_MATCHED_MESSAGE, MESSAGE_WAS_REMOVING PULL_RETRY_IMMEDIATELY
    OFFSET_FOUND_NULL, OFFSET_OVERFLOW_ONE  PULL_NOT_FOUND  (held when the suspend bit is set)
    NO_MESSAGE_IN_QUEUE, NO_MATCHED_LOGIC_QUEUE
                                  PULL_OFFSET_MOVED if queueOffset != 0, else PULL_NOT_FOUND
    OFFSET_TOO_SMALL, OFFSET_OVERFLOW_BADLY PULL_OFFSET_MOVED

Every reply with those codes carries all four header fields. A held pull is re-run once, by
the hold service, without the suspend permission.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from rocketq.broker.filter import ExpressionMessageFilter, build_subscription_data
from rocketq.broker.long_polling import PullRequest
from rocketq.broker.store_bridge import filter_by_tags, get_message
from rocketq.remoting.bodies import MessageModel
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.codes import RequestCode, ResponseCode
from rocketq.remoting.command import RemotingCommand
from rocketq.remoting.headers import PullMessageRequestHeader, PullMessageResponseHeader
from rocketq.remoting.route_data import MASTER_ID

if TYPE_CHECKING:
    from rocketq.broker.controller import BrokerController

log = logging.getLogger(__name__)

FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x2
FLAG_SUBSCRIPTION = 0x4

_RETRY_STATUSES = frozenset({"NO_MATCHED_MESSAGE", "MESSAGE_WAS_REMOVING"})
_NOT_FOUND_STATUSES = frozenset({"OFFSET_FOUND_NULL", "OFFSET_OVERFLOW_ONE"})
_EMPTY_QUEUE_STATUSES = frozenset({"NO_MESSAGE_IN_QUEUE", "NO_MATCHED_LOGIC_QUEUE"})
_MOVED_STATUSES = frozenset({"OFFSET_TOO_SMALL", "OFFSET_OVERFLOW_BADLY"})


class PullMessageProcessor:
    def __init__(self, controller: BrokerController) -> None:
        self.c = controller

    def register(self) -> None:
        self.c.remoting_server.register_processor(RequestCode.PULL_MESSAGE, self.process_request)
        self.c.pull_wakeup = self.execute_request_when_wakeup

    async def process_request(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        return await self._process(channel, request, broker_allow_suspend=True)

    async def execute_request_when_wakeup(self, pull: PullRequest) -> None:
        response = await self._process(pull.channel, pull.request, broker_allow_suspend=False)
        if response is None or pull.channel.is_closed:
            return
        response.response_to(pull.request)
        try:
            await pull.channel.send(response)
        except Exception as exc:
            log.info("answering held pull to %s failed: %s", pull.channel.remote_addr, exc)

    async def _process(
        self, channel: RemotingChannel, request: RemotingCommand, *, broker_allow_suspend: bool
    ) -> RemotingCommand | None:
        h = PullMessageRequestHeader.from_ext_fields(request.ext_fields)
        refused = self._check(h)
        if refused is not None:
            return refused
        if h.sys_flag & FLAG_SUBSCRIPTION:
            subscription = build_subscription_data(h.topic, h.subscription, h.sub_version)
        else:
            group_info = self.c.consumer_manager.get_consumer_group_info(h.consumer_group)
            if group_info is None:
                return _error(
                    ResponseCode.SUBSCRIPTION_NOT_EXIST,
                    f"the consumer's group info not exist, {h.consumer_group}",
                )
            found = group_info.subscription_table.get(h.topic)
            if group_info.message_model is MessageModel.BROADCASTING:
                cfg = self.c.subscription_group_manager.subscription_group_table.get(
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
            subscription = build_subscription_data(h.topic, found.sub_string, found.sub_version)
        message_filter = ExpressionMessageFilter(subscription)
        result = await asyncio.to_thread(
            get_message,
            self.c.message_store,
            h.consumer_group,
            h.topic,
            h.queue_id,
            h.queue_offset,
            h.max_msg_nums,
            message_filter,
        )
        response: RemotingCommand | None = self._answer(h, result, message_filter)
        has_suspend = bool(h.sys_flag & FLAG_SUSPEND)
        if (
            response is not None
            and response.code == ResponseCode.PULL_NOT_FOUND
            and broker_allow_suspend
            and has_suspend
        ):
            timeout_ms = (
                h.suspend_timeout_millis
                if self.c.config.long_polling_enable
                else self.c.config.short_polling_time_ms
            )
            self.c.pull_request_hold_service.suspend_pull_request(
                PullRequest(
                    channel=channel,
                    request=request,
                    topic=h.topic,
                    queue_id=h.queue_id,
                    pull_from_this_offset=h.queue_offset,
                    timeout_ms=timeout_ms,
                    matches_tags_code=message_filter.is_matched_by_consume_queue,
                )
            )
            response = None
        if (
            broker_allow_suspend
            and h.sys_flag & FLAG_COMMIT_OFFSET
            and h.commit_offset >= 0
            and not self.c.is_slave  # a slave takes offsets only from UPDATE_CONSUMER_OFFSET
        ):
            self.c.consumer_offset_manager.commit_offset(
                channel.remote_addr, h.consumer_group, h.topic, h.queue_id, h.commit_offset
            )
        return response

    def _check(self, h: PullMessageRequestHeader) -> RemotingCommand | None:
        if not self.c.config.broker_permission & 0x4:
            return _error(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.c.broker_addr}] pulling message is forbidden",
            )
        group_cfg = self.c.subscription_group_manager.find_subscription_group_config(
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
        tc = self.c.topic_config_manager.select_topic_config(h.topic)
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

    def _answer(
        self, h: PullMessageRequestHeader, result: Any, message_filter: ExpressionMessageFilter
    ) -> RemotingCommand:
        status = result.status.name
        next_begin = result.next_begin_offset
        body = b""
        if status == "FOUND":
            body = filter_by_tags(result, message_filter)
            code = ResponseCode.SUCCESS if body else ResponseCode.PULL_RETRY_IMMEDIATELY
        elif status in _RETRY_STATUSES:
            code = ResponseCode.PULL_RETRY_IMMEDIATELY
        elif status in _NOT_FOUND_STATUSES:
            code = ResponseCode.PULL_NOT_FOUND
        elif status in _EMPTY_QUEUE_STATUSES:
            code = (
                ResponseCode.PULL_OFFSET_MOVED
                if h.queue_offset != 0
                else ResponseCode.PULL_NOT_FOUND
            )
        elif status in _MOVED_STATUSES:
            code = ResponseCode.PULL_OFFSET_MOVED
        else:
            code = ResponseCode.SYSTEM_ERROR
        suggest = self._suggest_which_broker_id(h, result)
        if self.c.is_slave and not self.c.config.slave_read_enable:
            code, body, suggest = ResponseCode.PULL_RETRY_IMMEDIATELY, b"", MASTER_ID
        header = PullMessageResponseHeader(
            suggest_which_broker_id=suggest,
            next_begin_offset=next_begin,
            min_offset=result.min_offset,
            max_offset=result.max_offset,
        )
        return RemotingCommand.create_response(
            code, status, ext_fields=header.to_ext_fields(), body=body
        )

    def _suggest_which_broker_id(self, h: PullMessageRequestHeader, result: Any) -> int:
        """The master suggests the slave to a consumer reading beyond memory (slaveReadEnable)."""
        if not self.c.config.slave_read_enable:
            return MASTER_ID
        cfg = self.c.subscription_group_manager.find_subscription_group_config(h.consumer_group)
        if cfg is None:
            return MASTER_ID
        if getattr(result, "suggest_pulling_from_slave", False):
            return cfg.which_broker_when_consume_slowly
        return cfg.broker_id


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)
