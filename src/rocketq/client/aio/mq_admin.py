"""MQAdmin: the message queries RocketMQ's producers and consumers offer (``MQAdmin``), for
the asyncio Producer, PushConsumer and LitePullConsumer; each runs ``MQAdminImpl`` on the
client instance's connections, so the client must be started."""

from __future__ import annotations

from typing import Any

from rocketq.client.aio.mq_admin_impl import MAX_TIMESTAMP, MQAdminImpl, QueryResult
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.errors import IllegalStateError


class MQAdmin:
    _instance: Any

    def _mq_admin_impl(self) -> MQAdminImpl:
        instance = self._instance
        if instance is None:
            raise IllegalStateError(f"the {type(self).__name__} is not started")
        return MQAdminImpl(instance.remoting, instance.config.request_timeout_s)

    async def view_message(self, msg_id: str, topic: str | None = None) -> MessageExt:
        """viewMessage: by offset msgId; with ``topic`` a client msgId (uniq key) too."""
        return await self._mq_admin_impl().view_message(msg_id, topic)

    async def query_message(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
    ) -> QueryResult:
        """queryMessage: messages of ``topic`` with ``key`` in KEYS, over all its brokers."""
        return await self._mq_admin_impl().query_message(topic, key, max_num, begin_ms, end_ms)

    async def query_message_by_uniq_key(self, topic: str, uniq_key: str) -> MessageExt | None:
        return await self._mq_admin_impl().query_message_by_uniq_key(topic, uniq_key)

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return await self._mq_admin_impl().search_offset(mq, timestamp_ms)

    async def max_offset(self, mq: MessageQueue) -> int:
        return await self._mq_admin_impl().max_offset(mq)

    async def min_offset(self, mq: MessageQueue) -> int:
        return await self._mq_admin_impl().min_offset(mq)

    async def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return await self._mq_admin_impl().earliest_msg_store_time(mq)
