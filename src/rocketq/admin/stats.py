"""The admin calls that operations add (issue 12): a broker's statistics (VIEW_BROKER_STATS_DATA,
mqadmin statsAll), a message by queue offset (mqadmin queryMsgByOffset) and a run of messages of
one queue (printMsg, consumeMessage, the dashboard's message pages), read without a consumer
group: the consume queue's units (QUERY_CONSUME_QUEUE) give each message's commit log offset,
and VIEW_MESSAGE_BY_ID reads it."""

from __future__ import annotations

from rocketq.admin.broker import BrokerAdmin
from rocketq.admin.consumer import ConsumerAdmin
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.message_id import create_message_id
from rocketq.errors import ClientError
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.headers import ViewBrokerStatsDataRequestHeader
from rocketq.remoting.protocol.stats_bodies import BrokerStatsData

MAX_MESSAGES_PER_CALL = 1024


def _host(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)


class StatsAdmin(ConsumerAdmin, BrokerAdmin):
    async def view_broker_stats_data(
        self, broker_addr: str, stats_name: str, stats_key: str
    ) -> BrokerStatsData:
        """VIEW_BROKER_STATS_DATA (315): e.g. ``TOPIC_PUT_NUMS`` of a topic, ``GROUP_GET_NUMS``
        of ``topic@group``; a key the broker never counted raises with its remark."""
        header = ViewBrokerStatsDataRequestHeader(stats_name=stats_name, stats_key=stats_key)
        response = await self.call(broker_addr, RequestCode.VIEW_BROKER_STATS_DATA, header)
        return BrokerStatsData.decode(response.body)

    async def messages_of_queue(
        self, mq: MessageQueue, begin_offset: int, count: int
    ) -> list[MessageExt]:
        """Up to ``count`` messages of ``mq`` from queue offset ``begin_offset`` (no group)."""
        if count <= 0:
            return []
        if count > MAX_MESSAGES_PER_CALL:
            raise ClientError(f"at most {MAX_MESSAGES_PER_CALL} messages at once, not {count}")
        addr = await self.broker_addr_by_name(mq.topic, mq.broker_name)
        body = await self.query_consume_queue(addr, mq.topic, mq.queue_id, begin_offset, count)
        host = _host(addr)
        found: list[MessageExt] = []
        for unit in body.queue_data:
            msg_id = create_message_id(host, unit.physic_offset)
            found.append(await self.view_message(msg_id))
        return found

    async def query_msg_by_offset(self, mq: MessageQueue, offset: int) -> MessageExt:
        """``mqadmin queryMsgByOffset``: the message at queue offset ``offset`` of ``mq``."""
        found = await self.messages_of_queue(mq, offset, 1)
        if not found:
            raise ClientError(
                f"no message at offset {offset} of {mq.topic}:{mq.broker_name}:{mq.queue_id}"
            )
        return found[0]

    async def messages_of_topic(
        self, topic: str, begin_ms: int | None, end_ms: int | None, limit: int
    ) -> list[MessageExt]:
        """Up to ``limit`` messages of ``topic`` stored in [begin_ms, end_ms) (None: open),
        queue by queue (the dashboard's message search by topic and time)."""
        stats = await self.examine_topic_stats(topic)
        found: list[MessageExt] = []
        for data, off in sorted(
            stats.offset_table.items(), key=lambda kv: (kv[0].broker_name, kv[0].queue_id)
        ):
            mq = MessageQueue(data.topic, data.broker_name, data.queue_id)
            start = off.min_offset if begin_ms is None else await self.search_offset(mq, begin_ms)
            stop = off.max_offset if end_ms is None else await self.search_offset(mq, end_ms)
            offset = max(start, off.min_offset)
            stop = min(stop, off.max_offset)
            while offset < stop and len(found) < limit:
                chunk = await self.messages_of_queue(mq, offset, min(32, stop - offset))
                if not chunk:
                    break
                found.extend(chunk[: limit - len(found)])
                offset += len(chunk)
        return found
