"""MessagingBackend: how the gRPC activities reach brokers, over remoting in both deployments.

Theory of operation (the Java proxy's ``ClusterMessagingService`` behind its processors): one
``MQClientInstance`` of the proxy (routes from the name servers, one connection per broker)
carries every request. Local mode (inside a broker process) and cluster mode (``rocketq
proxy``) differ only in the name server they ask, so they share all of this. A send picks a
write queue (a message group's by Guava's consistent hash, as SendMessageQueueSelector; else
round robin over the brokers); a receive is POP_MESSAGE to the broker the client's queue names
with ``queueId = -1``; ack, change and forward go to the broker a receipt handle names. A
refused connection, a timeout or a "not master" answer reads the topic's route again at once
(rate limited), as our client does after the failover issue, and a send tries another queue.

Receipt handles are the broker's extra info with the commit-log offset appended
(ReceiptHandle.encode, the proxy's createHandle); a topic's ``message.type`` comes from a master's
topic config, cached for ``TOPIC_TYPE_TTL_S``.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

from rocketq.client.aio import pop_api
from rocketq.client.aio.instance import MQClientInstance, ProducerMember, publish_info_of
from rocketq.client.aio.route_refresher import needs_route_refresh
from rocketq.client.config import ClientConfig
from rocketq.client.fault import TopicPublishInfo
from rocketq.client.message import message_group_queue
from rocketq.client.status import SendResult
from rocketq.common import message_const as mc
from rocketq.common.attribute import TopicMessageType
from rocketq.common.extra_info import ExtraInfo, ExtraInfoError, parse_extra_info, real_topic
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.common.message_id import decode_message_id
from rocketq.common.properties import properties_to_string
from rocketq.common.recall_message_handle import RecallHandleError, decode_handle
from rocketq.errors import BrokerResponseError, RemotingError, RocketQError, for_code
from rocketq.proxy.message_converter import OutgoingMessage
from rocketq.proxy.status import Code, ProxyError
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig, SubscriptionGroupWrapper
from rocketq.remoting.protocol.pop_headers import (
    AckMessageRequestHeader,
    ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader,
)
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode

TOPIC_TYPE_TTL_S = 5.0
SEND_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class ReceiptHandle:
    """The broker's extra info plus the message's commit-log offset (ReceiptHandle)."""

    info: ExtraInfo
    commit_log_offset: int

    def encode(self) -> str:
        return f"{self.info.encode()} {self.commit_log_offset}"

    @classmethod
    def decode(cls, text: str) -> ReceiptHandle:
        head, _, tail = text.rpartition(" ")
        try:
            return cls(parse_extra_info(head), int(tail))
        except (ExtraInfoError, ValueError) as exc:
            raise ProxyError(
                Code.INVALID_RECEIPT_HANDLE, f"receipt handle is illegal: {exc}"
            ) from exc

    def check_alive(self, now_ms: int) -> None:
        if self.info.next_visible_time <= now_ms:
            raise ProxyError(Code.INVALID_RECEIPT_HANDLE, "receipt handle is expired")


class MessagingBackend:
    def __init__(
        self,
        namesrv_addr: str,
        *,
        request_timeout_s: float = 3.0,
        route_refresh_s: float = 20.0,
        access_key: str = "",
        secret_key: str = "",
    ) -> None:
        config = ClientConfig(
            namesrv_addr=namesrv_addr,
            instance_name="rocketq-proxy",
            request_timeout_s=request_timeout_s,
            poll_name_server_interval_s=route_refresh_s,
            heartbeat_broker_interval_s=10.0,
            access_key=access_key,
            secret_key=secret_key,
        )
        self.instance = MQClientInstance(config, config.build_client_id())
        self._turn = itertools.count()
        self._types: dict[str, tuple[float, TopicMessageType | None]] = {}
        self._groups: dict[str, tuple[float, SubscriptionGroupConfig]] = {}

    async def shutdown(self) -> None:
        await self.instance.shutdown()

    # ------------------------------------------------------------------ routes

    async def route(self, topic: str) -> TopicRouteData:
        """The topic's route, read from a name server when not cached; TOPIC_NOT_FOUND."""
        route = self.instance.topic_route_table.get(topic)
        if route is None:
            await self.instance.update_topic_route(topic)
            route = self.instance.topic_route_table.get(topic)
        if route is None:
            raise ProxyError(Code.TOPIC_NOT_FOUND, f"topic {topic} does not exist")
        return route

    async def refresh(self, topic: str) -> None:
        if not await self.instance.update_topic_route(topic):
            self.instance.topic_route_table.pop(topic, None)

    async def master_addr(self, broker_name: str, topic: str) -> str:
        addr = self.instance.find_broker_addr(broker_name)
        if addr is None:
            await self.instance.refresh_now(topic)
            addr = self.instance.find_broker_addr(broker_name)
        if addr is None:
            raise ProxyError(Code.INTERNAL_SERVER_ERROR, f"broker {broker_name} has no master")
        return addr

    async def topic_type(self, topic: str) -> TopicMessageType | None:
        """The ``message.type`` of ``topic`` on its first master (None: no config there)."""
        cached = self._types.get(topic)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        route = await self.route(topic)
        found: TopicMessageType | None = None
        for bd in sorted(route.broker_datas, key=lambda b: b.broker_name):
            addr = self.instance.find_broker_addr(bd.broker_name)
            if addr is None:
                continue
            response = await self._invoke(addr, RequestCode.GET_ALL_TOPIC_CONFIG, {})
            tc = TopicConfigSerializeWrapper.decode(response.body).topic_config_table.get(topic)
            if tc is not None:
                found = tc.topic_message_type
                break
        self._types[topic] = (time.monotonic() + TOPIC_TYPE_TTL_S, found)
        return found

    async def group_config(self, group: str, topic: str) -> SubscriptionGroupConfig:
        """The group's config on a master of ``topic`` (the defaults while it has none)."""
        cached = self._groups.get(group)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        found = SubscriptionGroupConfig(group_name=group)
        route = await self.route(topic)
        for bd in sorted(route.broker_datas, key=lambda b: b.broker_name):
            addr = self.instance.find_broker_addr(bd.broker_name)
            if addr is None:
                continue
            response = await self._invoke(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {})
            table = SubscriptionGroupWrapper.decode(response.body).subscription_group_table
            if group in table:
                found = table[group]
                break
        self._groups[group] = (time.monotonic() + TOPIC_TYPE_TTL_S, found)
        return found

    async def existing_topic_type(self, topic: str) -> TopicMessageType:
        """The topic's ``message.type``; TOPIC_NOT_FOUND when no broker has its config (a
        name server that auto-creates routes answers for any topic; the proxy does not)."""
        found = await self.topic_type(topic)
        if found is None:
            raise ProxyError(Code.TOPIC_NOT_FOUND, f"topic {topic} does not exist")
        return found

    # ------------------------------------------------------------------ send

    async def send(self, out: OutgoingMessage) -> tuple[SendResult, str]:
        """SEND_MESSAGE_V2 to the chosen write queue; (result, broker address)."""
        info = publish_info_of(out.topic, await self.route(out.topic))
        if not info.message_queue_list:
            raise ProxyError(Code.FORBIDDEN, f"topic {out.topic} has no writable queue")
        last: BaseException | None = None
        for _attempt in range(SEND_ATTEMPTS):
            mq = self._pick_queue(info, out)
            addr = await self.master_addr(mq.broker_name, out.topic)
            try:
                result = await self.instance.api.send_message(
                    addr, mq, self._header(out, mq), out.body, out.message_id,
                    self.instance.config.request_timeout_s,
                )  # fmt: skip
            except (RemotingError, OSError, BrokerResponseError) as exc:
                if not needs_route_refresh(exc):
                    raise
                last = exc
                await self.instance.refresh_now(out.topic)
                info = publish_info_of(out.topic, await self.route(out.topic))
                continue
            return result, addr
        assert last is not None
        raise last

    def _pick_queue(self, info: TopicPublishInfo, out: OutgoingMessage) -> MessageQueue:
        mqs = info.message_queue_list
        group = out.message_group
        if group:
            chosen = message_group_queue(mqs, Message(out.topic, message_group=group))
            if chosen is not None:
                return chosen
        return mqs[next(self._turn) % len(mqs)]

    @staticmethod
    def _header(out: OutgoingMessage, mq: MessageQueue) -> h.SendMessageRequestHeader:
        return h.SendMessageRequestHeader(
            producer_group=out.topic,
            topic=out.topic,
            default_topic="TBW102",
            default_topic_queue_nums=4,
            queue_id=mq.queue_id,
            sys_flag=out.sys_flag,
            born_timestamp=out.born_timestamp_ms,
            flag=0,
            properties=properties_to_string(out.properties),
            reconsume_times=int(out.properties.get(mc.PROPERTY_RECONSUME_TIME, "0") or 0),
            unit_mode=False,
            batch=False,
        )

    # ------------------------------------------------------------------ POP

    async def pop(
        self,
        broker_name: str,
        group: str,
        subscription: SubscriptionData,
        *,
        batch: int,
        invisible_ms: int,
        poll_ms: int,
        order: bool,
        attempt_id: str | None,
    ) -> list[tuple[MessageExt, str]]:
        """POP_MESSAGE (all queues of one broker): each message with its receipt handle."""
        topic = subscription.topic
        addr = await self.master_addr(broker_name, topic)
        try:
            result = await pop_api.pop_message(
                self.instance, addr, broker_name, group, subscription,
                max_nums=batch, invisible_ms=invisible_ms, poll_ms=poll_ms, order=order,
                attempt_id=attempt_id,
            )  # fmt: skip
        except (RemotingError, OSError, BrokerResponseError) as exc:
            if needs_route_refresh(exc):
                self.instance.route_refresher.refresh_soon(topic)
            raise
        if result.polling_full:
            raise ProxyError(Code.TOO_MANY_REQUESTS, "polling full")
        out = []
        for msg in result.msgs:
            info = pop_api.handle_of(msg)
            out.append((msg, ReceiptHandle(info, msg.commitlog_offset).encode()))
        return out

    async def ack(self, group: str, topic: str, handle: ReceiptHandle) -> None:
        e = handle.info
        header = AckMessageRequestHeader(
            consumer_group=group,
            topic=real_topic(topic, group, e.mark),
            queue_id=e.queue_id,
            extra_info=e.encode(),
            offset=e.queue_offset,
        )
        addr = await self.master_addr(e.broker_name, topic)
        await self._invoke(addr, RequestCode.ACK_MESSAGE, header.to_ext_fields())

    async def change_invisible(
        self, group: str, topic: str, handle: ReceiptHandle, invisible_ms: int
    ) -> ReceiptHandle:
        """CHANGE_MESSAGE_INVISIBLETIME; the new handle (a one-message checkpoint)."""
        e = handle.info
        header = ChangeInvisibleTimeRequestHeader(
            consumer_group=group,
            topic=real_topic(topic, group, e.mark),
            queue_id=e.queue_id,
            extra_info=e.encode(),
            offset=e.queue_offset,
            invisible_time=invisible_ms,
        )
        addr = await self.master_addr(e.broker_name, topic)
        response = await self._invoke(
            addr, RequestCode.CHANGE_MESSAGE_INVISIBLETIME, header.to_ext_fields()
        )
        r = ChangeInvisibleTimeResponseHeader.from_ext_fields(response.ext_fields)
        info = ExtraInfo(
            e.queue_offset, r.pop_time, r.invisible_time, r.revive_qid, e.mark, e.broker_name,
            e.queue_id, e.queue_offset,
        )  # fmt: skip
        return ReceiptHandle(info, handle.commit_log_offset)

    async def forward_to_dlq(
        self, group: str, topic: str, handle: ReceiptHandle, message_id: str
    ) -> None:
        """CONSUMER_SEND_MSG_BACK straight to ``%DLQ%<group>`` (delayLevel -1), then the ack."""
        addr = await self.master_addr(handle.info.broker_name, topic)
        header = h.ConsumerSendMsgBackRequestHeader(
            offset=handle.commit_log_offset,
            group=group,
            delay_level=-1,
            origin_msg_id=message_id,
            origin_topic=topic,
            max_reconsume_times=0,
        )
        await self.instance.api.consumer_send_message_back(addr, header)
        await self.ack(group, topic, handle)

    # ------------------------------------------------------------------ transactions, recall

    async def end_transaction(
        self, addr: str, header: h.EndTransactionRequestHeader, *, oneway: bool
    ) -> None:
        await self.instance.api.end_transaction(addr, header, oneway=oneway)

    async def recall(self, topic: str, recall_handle: str) -> str:
        try:
            broker_name = decode_handle(recall_handle).broker_name
        except RecallHandleError as exc:
            raise ProxyError(Code.BAD_REQUEST, f"recall handle is invalid: {exc}") from exc
        addr = await self.master_addr(broker_name, topic)
        header = h.RecallMessageRequestHeader(
            topic=topic, recall_handle=recall_handle, producer_group=topic, broker_name=broker_name
        )
        return await self.instance.api.recall_message(
            addr, header, self.instance.config.request_timeout_s
        )

    def register_producer(self, member: ProducerMember) -> None:
        """A producer group (= topic) that the brokers' transaction checks reach."""
        if member.group not in self.instance.producers:
            self.instance.register_producer(member)

    async def heartbeat(self) -> None:
        await self.instance.send_heartbeat_to_all()

    # ------------------------------------------------------------------ plumbing

    async def _invoke(self, addr: str, code: int, ext: dict[str, str]) -> RemotingCommand:
        request = RemotingCommand.create_request(code, ext)
        response = await self.instance.remoting.invoke(
            addr, request, self.instance.config.request_timeout_s
        )
        if response.code != ResponseCode.SUCCESS:
            raise for_code(response.code, response.remark or "")
        return response


def commit_log_offset_of(result: SendResult) -> int:
    """The commit-log offset in a send result's offset message id."""
    offset_id = result.offset_msg_id or result.msg_id
    try:
        return decode_message_id(offset_id.split(",")[0])[1]
    except (ValueError, RocketQError):
        return 0
