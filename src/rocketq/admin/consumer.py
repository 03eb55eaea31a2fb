"""DefaultMQAdminExt's consumer and stats calls: consume progress (208), topic stats (202),
who is connected (203, 204, 300), a consumer's running info (307), consuming one message on a
chosen client (309), and resetting a group's offsets by time (222 -> 220).

Per-broker answers are merged over every master of the topic's route (for a group, the route
of ``%RETRY%<group>``), as DefaultMQAdminExtImpl does.
"""

from __future__ import annotations

from rocketq.admin.messages import MessageAdmin
from rocketq.common.message import MessageQueue
from rocketq.common.topic import retry_topic
from rocketq.errors import ClientError, ConsumerNotOnlineError, TopicNotExistError
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol.admin_bodies import (
    ConsumerConnection,
    ConsumeStats,
    GroupList,
    ProducerConnection,
    TopicStatsTable,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ResetOffsetBody,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader

CALL_CONSUMER_TIMEOUT_S = 15.0


class ConsumerAdmin(MessageAdmin):
    async def examine_consume_stats(self, group: str, topic: str | None = None) -> ConsumeStats:
        """The group's offsets against each queue's max (``topic`` None: every topic)."""
        total = ConsumeStats()
        header = h.GetConsumeStatsRequestHeader(consumer_group=group, topic=topic)
        for addr in (await self.master_addrs_of_topic(retry_topic(group))).values():
            response = await self.call(addr, RequestCode.GET_CONSUME_STATS, header)
            stats = ConsumeStats.decode(response.body)
            total.offset_table.update(stats.offset_table)
            total.consume_tps += stats.consume_tps
        if not total.offset_table:
            raise ClientError(
                "Not found the consumer group consume stats, because return offset table is "
                "empty, maybe the consumer not consume any message"
            )
        return total

    async def examine_topic_stats(self, topic: str) -> TopicStatsTable:
        """Min and max offset and last store time of each queue of ``topic``."""
        total = TopicStatsTable()
        header = h.GetTopicStatsInfoRequestHeader(topic=topic)
        for addr in (await self.master_addrs_of_topic(topic)).values():
            response = await self.call(addr, RequestCode.GET_TOPIC_STATS_INFO, header)
            total.offset_table.update(TopicStatsTable.decode(response.body).offset_table)
        return total

    async def examine_consumer_connection_info(
        self, group: str, broker_addr: str | None = None
    ) -> ConsumerConnection:
        """The group's live consumers, their subscriptions and mode (from one broker: the
        first master of the group's retry topic that knows them, or ``broker_addr``)."""
        header = h.GetConsumerConnectionListRequestHeader(consumer_group=group)
        addrs: list[str]
        if broker_addr is not None:
            addrs = [broker_addr]
        else:
            try:
                addrs = list((await self.master_addrs_of_topic(retry_topic(group))).values())
            except TopicNotExistError:  # no consumer of the group ever heartbeated
                raise ConsumerNotOnlineError(f"the consumer group[{group}] not online") from None
        for addr in addrs:
            try:
                response = await self.call(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, header)
            except ConsumerNotOnlineError:
                continue
            found = ConsumerConnection.decode(response.body)
            if found.connection_set:
                return found
        raise ConsumerNotOnlineError(f"Not found the consumer group connection: {group}")

    async def examine_producer_connection_info(self, group: str, topic: str) -> ProducerConnection:
        """The producers of ``group`` connected to the brokers of ``topic``."""
        total = ProducerConnection()
        seen: set[tuple[str, str]] = set()
        header = h.GetProducerConnectionListRequestHeader(producer_group=group)
        for addr in (await self.master_addrs_of_topic(topic)).values():
            response = await self.call(addr, RequestCode.GET_PRODUCER_CONNECTION_LIST, header)
            for conn in ProducerConnection.decode(response.body).connection_set:
                if (conn.client_id, conn.client_addr) not in seen:
                    seen.add((conn.client_id, conn.client_addr))
                    total.connection_set.append(conn)
        return total

    async def query_topic_consume_by_who(self, topic: str) -> GroupList:
        """The groups that subscribe to or have offsets on ``topic``, over all its brokers."""
        groups: set[str] = set()
        header = h.QueryTopicConsumeByWhoRequestHeader(topic=topic)
        for addr in (await self.master_addrs_of_topic(topic)).values():
            response = await self.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, header)
            groups.update(GroupList.decode(response.body).group_list)
        return GroupList(group_list=sorted(groups))

    async def get_consumer_running_info(
        self, group: str, client_id: str, *, jstack: bool = False, broker_addr: str | None = None
    ) -> ConsumerRunningInfo:
        """GET_CONSUMER_RUNNING_INFO (307), forwarded by a broker (``broker_addr``, or the
        first master of the group's retry topic) to the client."""
        header = h.GetConsumerRunningInfoRequestHeader(
            consumer_group=group, client_id=client_id, jstack_enable=jstack
        )
        if broker_addr is not None:
            addr = broker_addr
        else:
            masters = await self.master_addrs_of_topic(retry_topic(group))
            addr = next(iter(masters.values()))
        response = await self._call_consumer(addr, RequestCode.GET_CONSUMER_RUNNING_INFO, header)
        return ConsumerRunningInfo.decode(response.body)

    async def consume_message_directly(
        self, group: str, client_id: str, topic: str, msg_id: str
    ) -> ConsumeMessageDirectlyResult:
        """CONSUME_MESSAGE_DIRECTLY (309): the client runs its listener on that message."""
        msg = await self.view_message(msg_id, topic)
        addr = f"{msg.store_host[0]}:{msg.store_host[1]}"
        header = h.ConsumeMessageDirectlyResultRequestHeader(
            consumer_group=group, client_id=client_id, msg_id=msg.offset_msg_id
        )
        response = await self._call_consumer(addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, header)
        return ConsumeMessageDirectlyResult.decode(response.body)

    async def _call_consumer(
        self, addr: str, code: int, header: CommandCustomHeader
    ) -> RemotingCommand:
        timeout = max(self.timeout_s, CALL_CONSUMER_TIMEOUT_S)  # the broker waits up to 10 s
        return await self.call(addr, code, header, timeout_s=timeout)

    async def reset_offset_by_timestamp(
        self, topic: str, group: str, timestamp_ms: int, *, is_force: bool = True
    ) -> dict[MessageQueue, int]:
        """INVOKE_BROKER_TO_RESET_OFFSET (222) on each broker of ``topic``: live consumers of
        ``group`` move to the first offset stored at or after ``timestamp_ms`` (-1: the end).
        Where no consumer of the group is online, the broker's committed offsets are moved
        instead (UPDATE_CONSUMER_OFFSET), as mqadmin resetOffsetByTime does. Returns the new
        offset of each queue that moved."""
        header = h.ResetOffsetRequestHeader(
            topic=topic, group=group, timestamp=timestamp_ms, is_force=is_force
        )
        offsets: dict[MessageQueue, int] = {}
        for addr in (await self.master_addrs_of_topic(topic)).values():
            try:
                response = await self.call(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, header)
            except ConsumerNotOnlineError:
                offsets.update(
                    await self._reset_offset_in_broker(addr, topic, group, timestamp_ms, is_force)
                )
                continue
            for mq, offset in ResetOffsetBody.decode(response.body).offset_table.items():
                offsets[MessageQueue(mq.topic, mq.broker_name, mq.queue_id)] = offset
        return dict(sorted(offsets.items()))

    async def _reset_offset_in_broker(
        self, addr: str, topic: str, group: str, timestamp_ms: int, is_force: bool
    ) -> dict[MessageQueue, int]:
        """resetOffsetByTimestampOld: no consumer of the group is online, so the broker's
        committed offsets are moved with UPDATE_CONSUMER_OFFSET, queue by queue."""
        stats_header = h.GetConsumeStatsRequestHeader(consumer_group=group, topic=topic)
        response = await self.call(addr, RequestCode.GET_CONSUME_STATS, stats_header)
        offsets: dict[MessageQueue, int] = {}
        for data, wrapper in ConsumeStats.decode(response.body).offset_table.items():
            mq = MessageQueue(data.topic, data.broker_name, data.queue_id)
            if timestamp_ms == -1:
                target = await self.max_offset(mq)
            else:
                target = await self.search_offset(mq, timestamp_ms)
            if not is_force and target > wrapper.consumer_offset:
                continue
            update = h.UpdateConsumerOffsetRequestHeader(
                consumer_group=group, topic=topic, queue_id=mq.queue_id, commit_offset=target
            )
            await self.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, update)
            offsets[mq] = target
        return offsets
