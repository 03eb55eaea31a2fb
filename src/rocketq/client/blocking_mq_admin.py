"""The blocking face of ``rocketq.client.aio.mq_admin.MQAdmin`` for the blocking Producer,
PushConsumer and LitePullConsumer (each runs the asyncio call on its loop thread)."""

from __future__ import annotations

from typing import Any

from rocketq.client.aio.mq_admin_impl import MAX_TIMESTAMP, QueryResult
from rocketq.common.message import MessageExt, MessageQueue


class BlockingMQAdmin:
    def _admin_run(self, method: str, *args: Any) -> Any:
        impl = self.impl  # type: ignore[attr-defined]
        return self.loop.run(getattr(impl, method)(*args))  # type: ignore[attr-defined]

    def view_message(self, msg_id: str, topic: str | None = None) -> MessageExt:
        result: MessageExt = self._admin_run("view_message", msg_id, topic)
        return result

    def query_message(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
    ) -> QueryResult:
        result: QueryResult = self._admin_run(
            "query_message", topic, key, max_num, begin_ms, end_ms
        )
        return result

    def query_message_by_uniq_key(self, topic: str, uniq_key: str) -> MessageExt | None:
        result: MessageExt | None = self._admin_run("query_message_by_uniq_key", topic, uniq_key)
        return result

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return int(self._admin_run("search_offset", mq, timestamp_ms))

    def max_offset(self, mq: MessageQueue) -> int:
        return int(self._admin_run("max_offset", mq))

    def min_offset(self, mq: MessageQueue) -> int:
        return int(self._admin_run("min_offset", mq))

    def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return int(self._admin_run("earliest_msg_store_time", mq))
