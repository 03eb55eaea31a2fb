"""DefaultMQAdminExt's consumer and stats calls: consume progress (208), topic stats (202),
who is connected (203, 204, 300), a consumer's running info (307), consuming one message on a
chosen client (309), resetting a group's offsets by time (222 -> 220), committing one offset
(15) and announcing a group to its brokers by heartbeat (34).

Per-broker answers are merged over every master of the topic's route (for a group, the route
of ``%RETRY%<group>``), as DefaultMQAdminExtImpl does.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    ProducerTableInfo,
    TopicStatsTable,
)
from rocketq.remoting.protocol.bodies import ConsumerData, ConsumeType, HeartbeatData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ResetOffsetBody,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.remoting.protocol.subscription import build_subscription_data

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

    async def get_all_producer_info(self, broker_addr: str) -> ProducerTableInfo:
        """Every producer group on one broker and its producers (RocketMQ 5's
        MQAdminExt#getAllProducerInfo, GET_ALL_PRODUCER_INFO)."""
        response = await self.call(broker_addr, RequestCode.GET_ALL_PRODUCER_INFO, None)
        return ProducerTableInfo.decode(response.body)

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
            await self.update_consume_offset(addr, group, mq, target)
            offsets[mq] = target
        return offsets

    async def update_consume_offset(
        self, broker_addr: str, group: str, mq: MessageQueue, offset: int
    ) -> None:
        """UPDATE_CONSUMER_OFFSET (15): ``group``'s committed offset of ``mq`` on one broker
        (DefaultMQAdminExt.updateConsumeOffset)."""
        header = h.UpdateConsumerOffsetRequestHeader(
            consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, commit_offset=offset
        )
        await self.call(broker_addr, RequestCode.UPDATE_CONSUMER_OFFSET, header)

    async def register_consumer_group(
        self, group: str, topics: Sequence[str], client_id: str
    ) -> list[str]:
        """One HEART_BEAT (34) naming ``group`` a CONSUME_ACTIVELY consumer of ``topics`` to
        every broker (masters and slaves) of their routes; returns those addresses.

        A broker creates and registers the group's %RETRY% topic on a consumer's heartbeat
        (ClientManageProcessor.heartBeat), which is how the admin calls find a group's
        brokers; a consumer that commits offsets without a consumer client (Spark's topic
        source) announces itself this way. A topic without a route is skipped.
        """
        addrs: set[str] = set()
        for topic in topics:
            try:
                route = await self.examine_topic_route_info(topic)
            except TopicNotExistError:
                continue
            addrs.update(a for b in route.broker_datas for a in b.broker_addrs.values())
        data = HeartbeatData(
            client_id=client_id,
            consumer_data_set=[
                ConsumerData(
                    group_name=group,
                    consume_type=ConsumeType.CONSUME_ACTIVELY,
                    subscription_data_set=[build_subscription_data(t, "*") for t in topics],
                )
            ],
        )
        for addr in sorted(addrs):
            await self.call(addr, RequestCode.HEART_BEAT, body=data.encode())
        return sorted(addrs)
