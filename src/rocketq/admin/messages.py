"""The admin client's message calls: RocketMQ's ``MQAdmin`` (view by offset msgId, query by
key or uniq key, queue offsets by time, max, min, earliest store time), the client's
``MQAdminImpl`` run over the admin client's own connections."""

from __future__ import annotations

from rocketq.admin.core import AdminCore
from rocketq.client.aio.mq_admin import MQAdmin
from rocketq.client.aio.mq_admin_impl import (
    MAX_TIMESTAMP,
    MQAdminImpl,
    QueryResult,
    nearly_time_from_uniq_key,
)
from rocketq.client.trace.context import TraceType
from rocketq.client.trace.view import TraceView, decode_trace_views
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC
from rocketq.errors import NoMessageError

__all__ = [
    "MAX_TIMESTAMP",
    "MessageAdmin",
    "QueryResult",
    "TraceView",
    "nearly_time_from_uniq_key",
]


class MessageAdmin(AdminCore, MQAdmin):
    def _mq_admin_impl(self) -> MQAdminImpl:
        return MQAdminImpl(self.remoting, self.timeout_s)

    async def query_msg_trace_by_id(
        self,
        msg_id: str,
        trace_topic: str = RMQ_SYS_TRACE_TOPIC,
        max_num: int = 64,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
    ) -> list[TraceView]:
        """QueryMsgTraceByIdSubCommand.queryTraceByMsgId: the trace records about the message
        whose client msgId is ``msg_id``, found by key in the trace topic's index (the
        dispatcher keys each trace message with the msgIds it covers), oldest first."""
        try:
            result = await self.query_message(trace_topic, msg_id, max_num, begin_ms, end_ms)
        except NoMessageError:
            return []
        views: list[TraceView] = []
        for msg in result.message_list:
            views.extend(decode_trace_views(msg_id, msg.body, msg.born_host[0]))
        order = {t.value: i for i, t in enumerate(TraceType)}
        return sorted(views, key=lambda v: (v.timestamp_ms, order.get(v.msg_type, 0)))
