"""MQAdminImpl: the message calls every producer, consumer and admin client has (RocketMQ's
``MQAdmin``): view a message by its offset msgId (VIEW_MESSAGE_BY_ID), query by key on every
broker of a topic (QUERY_MESSAGE), by unique key (UNIQ_KEY, ``queryMessageByUniqKey``) and the
queue offset queries (SEARCH_OFFSET_BY_TIMESTAMP, GET_MAX_OFFSET, GET_MIN_OFFSET,
GET_EARLIEST_MSG_STORETIME). It works over any ``RemotingClient`` that knows the name
servers: a client instance's or an admin client's."""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.message_decoder import decode_message, decode_messages
from rocketq.common.message_id import decode_message_id
from rocketq.errors import ClientError, NoMessageError, for_code
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol import namesrv_headers as nh
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode

UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"
UNIQ_KEY_QUERY_MAX_NUM = 32
MAX_TIMESTAMP = (1 << 63) - 1
_SPAN_STRUCT = struct.Struct(">I")  # ms since the start of the month, in a uniq key
assert _SPAN_STRUCT.size == 4


@dataclass(slots=True)
class QueryResult:
    """QueryResult: the newest index update time among the brokers, and the messages found."""

    index_last_update_timestamp: int = 0
    message_list: list[MessageExt] = field(default_factory=list)


def nearly_time_from_uniq_key(uniq_key: str, now_ms: int | None = None) -> int:
    """MessageClientIDSetter.getNearlyTimeFromID: when a uniq key was made (ms, local time)."""
    raw = bytes.fromhex(uniq_key)
    ip_length = 16 if len(raw) == 28 else 4
    span_ms: int = _SPAN_STRUCT.unpack_from(raw, ip_length + 2 + 4)[0]
    now = time.time() if now_ms is None else now_ms / 1000
    t = time.localtime(now)
    month_start = time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))
    if month_start * 1000 + span_ms >= now * 1000:
        year, month = (t.tm_year - 1, 12) if t.tm_mon == 1 else (t.tm_year, t.tm_mon - 1)
        month_start = time.mktime((year, month, 1, 0, 0, 0, 0, 0, -1))
    return int(month_start * 1000) + span_ms


class MQAdminImpl:
    def __init__(self, remoting: RemotingClient, timeout_s: float) -> None:
        self.remoting = remoting
        self.timeout_s = timeout_s

    async def call(
        self,
        addr: str | None,
        code: int,
        header: CommandCustomHeader,
        *,
        accept: tuple[int, ...] = (),
        ext_fields: dict[str, str] | None = None,
    ) -> RemotingCommand:
        fields = header.to_ext_fields()
        fields.update(ext_fields or {})
        request = RemotingCommand.create_request(code, fields)
        response = await self.remoting.invoke(addr, request, self.timeout_s)
        if response.code != ResponseCode.SUCCESS and response.code not in accept:
            raise for_code(response.code, response.remark or "")
        return response

    async def master_addrs_of_topic(self, topic: str) -> dict[str, str]:
        """broker name -> master address (else any address) of each broker of ``topic``."""
        header = nh.GetRouteInfoRequestHeader(topic=topic)
        response = await self.call(None, RequestCode.GET_ROUTEINFO_BY_TOPIC, header)
        route = TopicRouteData.decode(response.body)
        addrs = {b.broker_name: b.select_broker_addr() for b in route.broker_datas}
        found = {name: addr for name, addr in sorted(addrs.items()) if addr is not None}
        if not found:
            raise ClientError(f"no broker address in the route of {topic}")
        return found

    async def broker_addr_by_name(self, topic: str, broker_name: str) -> str:
        addr = (await self.master_addrs_of_topic(topic)).get(broker_name)
        if addr is None:
            raise ClientError(f"the broker {broker_name} is not in the route of {topic}")
        return addr

    async def view_message(self, msg_id: str, topic: str | None = None) -> MessageExt:
        """The message of an offset msgId (store host + commitlog offset). With ``topic``, a
        client msgId (UNIQ_KEY) is looked up first, since both are 32 hex characters and a
        uniq key read as an offset msgId names a host that is no broker."""
        if topic is not None:
            found = await self.query_message_by_uniq_key(topic, msg_id)
            if found is not None:
                return found
        (host, port), offset = decode_message_id(msg_id)
        if not 0 < port < 65536:
            raise NoMessageError(f"{msg_id} is neither a uniq key of {topic} nor an offset msgId")
        header = h.ViewMessageRequestHeader(offset=offset)
        response = await self.call(f"{host}:{port}", RequestCode.VIEW_MESSAGE_BY_ID, header)
        return decode_message(response.body, check_crc=False, decompress=True)

    async def query_message(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ms: int = 0,
        end_ms: int = MAX_TIMESTAMP,
    ) -> QueryResult:
        """queryMessage: messages of ``topic`` whose KEYS hold ``key``, from every broker of the
        topic; NoMessageError when none matches."""
        return await self._query_message(topic, key, max_num, begin_ms, end_ms, is_uniq_key=False)

    async def _query_message(
        self,
        topic: str,
        key: str,
        max_num: int,
        begin_ms: int,
        end_ms: int,
        *,
        is_uniq_key: bool,
    ) -> QueryResult:
        """MQAdminImpl.queryMessage(..., isUniqKey): the uniq-key flag stays inside, as in
        RocketMQ, where the public calls are queryMessage and queryMessageByUniqKey."""
        result = QueryResult()
        header = h.QueryMessageRequestHeader(
            topic=topic, key=key, max_num=max_num, begin_timestamp=begin_ms, end_timestamp=end_ms
        )
        extra = {UNIQUE_KEY_QUERY: "true" if is_uniq_key else "false"}
        found: list[MessageExt] = []
        for addr in (await self.master_addrs_of_topic(topic)).values():
            response = await self.call(
                addr,
                RequestCode.QUERY_MESSAGE,
                header,
                accept=(ResponseCode.QUERY_NOT_FOUND,),
                ext_fields=extra,
            )
            if response.code != ResponseCode.SUCCESS:
                continue
            rh = h.QueryMessageResponseHeader.from_ext_fields(response.ext_fields)
            result.index_last_update_timestamp = max(
                result.index_last_update_timestamp, rh.index_last_update_timestamp
            )
            found.extend(decode_messages(response.body, decompress=True))
        if is_uniq_key:
            matching = sorted(
                (m for m in found if m.uniq_key == key), key=lambda m: m.store_timestamp
            )
            result.message_list = matching[:1]
        else:
            result.message_list = [m for m in found if m.topic == topic and key in m.keys]
        if not result.message_list:
            raise NoMessageError(f"query message by key finished, but no message. key={key}")
        return result

    async def query_message_by_uniq_key(self, topic: str, uniq_key: str) -> MessageExt | None:
        """queryMessageByUniqKey: the message whose client msgId (UNIQ_KEY) is ``uniq_key``."""
        try:
            begin = nearly_time_from_uniq_key(uniq_key) - 1000
        except ValueError as exc:
            raise ClientError(f"{uniq_key!r} is not a uniq key: {exc}") from None
        try:
            result = await self._query_message(
                topic, uniq_key, UNIQ_KEY_QUERY_MAX_NUM, begin, MAX_TIMESTAMP, is_uniq_key=True
            )
        except NoMessageError:
            return None
        return result.message_list[0]

    async def _queue_call(self, mq: MessageQueue, code: int, header: CommandCustomHeader) -> int:
        addr = await self.broker_addr_by_name(mq.topic, mq.broker_name)
        response = await self.call(addr, code, header)
        field_name = "timestamp" if code == RequestCode.GET_EARLIEST_MSG_STORETIME else "offset"
        return int(response.ext_fields.get(field_name, "0"))

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        header = h.SearchOffsetRequestHeader(
            topic=mq.topic, queue_id=mq.queue_id, timestamp=timestamp_ms
        )
        return await self._queue_call(mq, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, header)

    async def max_offset(self, mq: MessageQueue) -> int:
        header = h.GetMaxOffsetRequestHeader(topic=mq.topic, queue_id=mq.queue_id)
        return await self._queue_call(mq, RequestCode.GET_MAX_OFFSET, header)

    async def min_offset(self, mq: MessageQueue) -> int:
        header = h.GetMinOffsetRequestHeader(topic=mq.topic, queue_id=mq.queue_id)
        return await self._queue_call(mq, RequestCode.GET_MIN_OFFSET, header)

    async def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        header = h.GetEarliestMsgStoretimeRequestHeader(topic=mq.topic, queue_id=mq.queue_id)
        return await self._queue_call(mq, RequestCode.GET_EARLIEST_MSG_STORETIME, header)
