"""The admin client's message calls: those of the client's ``MQAdminImpl`` (view by offset
msgId, query by key or uniq key, queue offsets by time, max, min, earliest store time), run
over the admin client's own connections."""

from __future__ import annotations

from rocketq.admin.core import AdminCore
from rocketq.client.aio.mq_admin_impl import (
    MAX_TIMESTAMP,
    MQAdminImpl,
    QueryResult,
    nearly_time_from_uniq_key,
)
from rocketq.common.message import MessageExt, MessageQueue

__all__ = ["MAX_TIMESTAMP", "MessageAdmin", "QueryResult", "nearly_time_from_uniq_key"]


class MessageAdmin(AdminCore):
    @property
    def mq_admin_impl(self) -> MQAdminImpl:
        return MQAdminImpl(self.remoting, self.timeout_s)

    async def view_message(self, msg_id: str, topic: str | None = None) -> MessageExt:
        """The message of an offset msgId; with ``topic`` a uniq key is accepted too."""
        return await self.mq_admin_impl.view_message(msg_id, topic)

    async def query_message(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
        *,
        is_uniq_key: bool = False,
    ) -> QueryResult:
        """Messages of ``topic`` whose KEYS hold ``key``, from every broker of the topic."""
        return await self.mq_admin_impl.query_message(
            topic, key, max_num, begin_ms, end_ms, is_uniq_key=is_uniq_key
        )

    async def query_message_by_uniq_key(self, topic: str, uniq_key: str) -> MessageExt | None:
        return await self.mq_admin_impl.query_message_by_uniq_key(topic, uniq_key)

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return await self.mq_admin_impl.search_offset(mq, timestamp_ms)

    async def max_offset(self, mq: MessageQueue) -> int:
        return await self.mq_admin_impl.max_offset(mq)

    async def min_offset(self, mq: MessageQueue) -> int:
        return await self.mq_admin_impl.min_offset(mq)

    async def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return await self.mq_admin_impl.earliest_msg_store_time(mq)
