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

__all__ = ["MAX_TIMESTAMP", "MessageAdmin", "QueryResult", "nearly_time_from_uniq_key"]


class MessageAdmin(AdminCore, MQAdmin):
    def _mq_admin_impl(self) -> MQAdminImpl:
        return MQAdminImpl(self.remoting, self.timeout_s)
