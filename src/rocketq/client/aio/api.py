"""MQClientAPI: one coroutine per client -> broker / name server request (MQClientAPIImpl).

Each builds the typed header, invokes through the shared ``RemotingClient`` and turns the reply
into a result or raises ``rocketq.errors.for_code(code, remark)``.
"""

from __future__ import annotations

from rocketq.client.send_codec import send_result, send_v2_ext_fields
from rocketq.client.status import PullResult, PullStatus, SendResult
from rocketq.common.message import MessageQueue
from rocketq.errors import for_code
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol import namesrv_headers as nh
from rocketq.remoting.protocol.bodies import (
    CheckClientRequestBody,
    ConsumerListBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    MessageQueueData,
    UnlockBatchRequestBody,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand, next_opaque
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.protocol.topic_route import TopicRouteData
from rocketq.response_code import ResponseCode

_PULL_STATUS = {
    ResponseCode.SUCCESS: PullStatus.FOUND,
    ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
    ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
    ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL,
}


def pull_response(response: RemotingCommand) -> tuple[PullResult, bytes]:
    """A PULL_MESSAGE's response: its result and its undecoded body; a code that is not a
    pull status raises (MQClientAPIImpl.processPullResponse)."""
    status = _PULL_STATUS.get(response.code)  # type: ignore[call-overload]
    if status is None:
        raise for_code(response.code, response.remark or "")
    rh = h.PullMessageResponseHeader.from_ext_fields(response.ext_fields)
    result = PullResult(
        status=status,
        next_begin_offset=rh.next_begin_offset,
        min_offset=rh.min_offset,
        max_offset=rh.max_offset,
        suggest_which_broker_id=rh.suggest_which_broker_id,
    )
    return result, response.body


def raise_for(response: RemotingCommand) -> None:
    if response.code != ResponseCode.SUCCESS:
        raise for_code(response.code, response.remark or "")


def _mq_data(mq: MessageQueue) -> MessageQueueData:
    return MessageQueueData(topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id)


class MQClientAPI:
    def __init__(self, remoting: RemotingClient, timeout_s: float) -> None:
        self.remoting = remoting
        self.timeout_s = timeout_s

    async def _call(
        self, addr: str | None, code: int, ext: dict[str, str], body: bytes = b""
    ) -> RemotingCommand:
        request = RemotingCommand.create_request(code, ext, body)
        return await self.remoting.invoke(addr, request, self.timeout_s)

    async def get_topic_route(self, topic: str) -> TopicRouteData | None:
        """The route from a name server; None when the topic does not exist."""
        ext = nh.GetRouteInfoRequestHeader(topic=topic).to_ext_fields()
        response = await self._call(None, RequestCode.GET_ROUTEINFO_BY_TOPIC, ext)
        if response.code == ResponseCode.TOPIC_NOT_EXIST:
            return None
        raise_for(response)
        return TopicRouteData.decode(response.body)

    async def send_message(
        self,
        addr: str,
        mq: MessageQueue,
        header: h.SendMessageRequestHeader,
        body: bytes,
        uniq_id: str,
        timeout_s: float,
        *,
        reply: bool = False,
    ) -> SendResult:
        return await self.send_message_v2(
            addr,
            mq,
            send_v2_ext_fields(header),
            body,
            uniq_id,
            timeout_s,
            batch=bool(header.batch),
            reply=reply,
        )

    async def send_message_v2(
        self,
        addr: str,
        mq: MessageQueue,
        ext_fields: dict[str, str],
        body: bytes,
        uniq_id: str,
        timeout_s: float,
        *,
        batch: bool,
        reply: bool = False,
    ) -> SendResult:
        """A send whose V2 fields are written (``send_codec``, C or Python); its result."""
        code = RequestCode.SEND_BATCH_MESSAGE if batch else RequestCode.SEND_MESSAGE_V2
        if reply:
            code = RequestCode.SEND_REPLY_MESSAGE_V2
        request = RemotingCommand(code=code, opaque=next_opaque(), ext_fields=ext_fields, body=body)
        response = await self.remoting.invoke(addr, request, timeout_s)
        return send_result(response, mq, uniq_id)

    async def send_message_oneway(
        self, addr: str, ext_fields: dict[str, str], body: bytes, *, batch: bool
    ) -> None:
        code = RequestCode.SEND_BATCH_MESSAGE if batch else RequestCode.SEND_MESSAGE_V2
        request = RemotingCommand(code=code, opaque=next_opaque(), ext_fields=ext_fields, body=body)
        request.mark_oneway_rpc()
        await self.remoting.invoke_oneway(addr, request)

    async def pull_message(
        self, addr: str, ext_fields: dict[str, str], timeout_s: float
    ) -> tuple[PullResult, bytes]:
        """A PULL_MESSAGE whose header fields are written (``pull_api.pull_ext_fields``)."""
        request = RemotingCommand.create_request(RequestCode.PULL_MESSAGE, ext_fields)
        return pull_response(await self.remoting.invoke(addr, request, timeout_s))

    async def query_consumer_offset(self, addr: str, group: str, mq: MessageQueue) -> int | None:
        """The committed offset; None when the broker has none (QUERY_NOT_FOUND)."""
        ext = h.QueryConsumerOffsetRequestHeader(
            consumer_group=group, topic=mq.topic, queue_id=mq.queue_id
        ).to_ext_fields()
        response = await self._call(addr, RequestCode.QUERY_CONSUMER_OFFSET, ext)
        if response.code == ResponseCode.QUERY_NOT_FOUND:
            return None
        raise_for(response)
        return h.QueryConsumerOffsetResponseHeader.from_ext_fields(response.ext_fields).offset

    async def update_consumer_offset_oneway(
        self, addr: str, group: str, mq: MessageQueue, offset: int
    ) -> None:
        ext = h.UpdateConsumerOffsetRequestHeader(
            consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, commit_offset=offset
        ).to_ext_fields()
        request = RemotingCommand.create_request(RequestCode.UPDATE_CONSUMER_OFFSET, ext)
        request.mark_oneway_rpc()
        await self.remoting.invoke_oneway(addr, request)

    async def update_consumer_offset(
        self, addr: str, group: str, mq: MessageQueue, offset: int
    ) -> None:
        ext = h.UpdateConsumerOffsetRequestHeader(
            consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, commit_offset=offset
        ).to_ext_fields()
        raise_for(await self._call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, ext))

    async def _offset_call(self, addr: str, code: int, ext: dict[str, str]) -> int:
        response = await self._call(addr, code, ext)
        raise_for(response)
        return int(response.ext_fields.get("offset", "0"))

    async def get_max_offset(self, addr: str, mq: MessageQueue) -> int:
        ext = h.GetMaxOffsetRequestHeader(topic=mq.topic, queue_id=mq.queue_id).to_ext_fields()
        return await self._offset_call(addr, RequestCode.GET_MAX_OFFSET, ext)

    async def get_min_offset(self, addr: str, mq: MessageQueue) -> int:
        ext = h.GetMinOffsetRequestHeader(topic=mq.topic, queue_id=mq.queue_id).to_ext_fields()
        return await self._offset_call(addr, RequestCode.GET_MIN_OFFSET, ext)

    async def search_offset(self, addr: str, mq: MessageQueue, timestamp_ms: int) -> int:
        ext = h.SearchOffsetRequestHeader(
            topic=mq.topic, queue_id=mq.queue_id, timestamp=timestamp_ms
        ).to_ext_fields()
        return await self._offset_call(addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, ext)

    async def get_consumer_id_list(self, addr: str, group: str) -> list[str]:
        ext = h.GetConsumerListByGroupRequestHeader(consumer_group=group).to_ext_fields()
        response = await self._call(addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, ext)
        raise_for(response)
        return ConsumerListBody.decode(response.body).consumer_id_list if response.body else []

    async def consumer_send_message_back(
        self, addr: str, header: h.ConsumerSendMsgBackRequestHeader
    ) -> None:
        ext = header.to_ext_fields()
        raise_for(await self._call(addr, RequestCode.CONSUMER_SEND_MSG_BACK, ext))

    async def lock_batch_mq(
        self, addr: str, group: str, client_id: str, mqs: list[MessageQueue]
    ) -> set[MessageQueue]:
        body = LockBatchRequestBody(
            consumer_group=group, client_id=client_id, mq_set=[_mq_data(m) for m in mqs]
        ).encode()
        response = await self._call(addr, RequestCode.LOCK_BATCH_MQ, {}, body)
        raise_for(response)
        if not response.body:
            return set()
        locked = LockBatchResponseBody.decode(response.body).lock_ok_mq_set
        return {MessageQueue(m.topic, m.broker_name, m.queue_id) for m in locked}

    async def unlock_batch_mq(
        self, addr: str, group: str, client_id: str, mqs: list[MessageQueue]
    ) -> None:
        body = UnlockBatchRequestBody(
            consumer_group=group, client_id=client_id, mq_set=[_mq_data(m) for m in mqs]
        ).encode()
        raise_for(await self._call(addr, RequestCode.UNLOCK_BATCH_MQ, {}, body))

    async def end_transaction(
        self,
        addr: str,
        header: h.EndTransactionRequestHeader | h.EndTransactionBatchRequestHeader,
        remark: str | None = None,
        *,
        oneway: bool = False,
        code: int = RequestCode.END_TRANSACTION,
    ) -> None:
        """END_TRANSACTION (or rocketq's END_TRANSACTION_BATCH); two-way unless ``oneway``
        (how RocketMQ's client sends it)."""
        request = RemotingCommand.create_request(code, header.to_ext_fields())
        request.remark = remark
        if oneway:
            request.mark_oneway_rpc()
            await self.remoting.invoke_oneway(addr, request)
            return
        raise_for(await self.remoting.invoke(addr, request, self.timeout_s))

    async def recall_message(
        self, addr: str, header: h.RecallMessageRequestHeader, timeout_s: float
    ) -> str:
        """RECALL_MESSAGE (370): the recalled message's id (MQClientAPIImpl.recallMessage)."""
        request = RemotingCommand.create_request(RequestCode.RECALL_MESSAGE, header.to_ext_fields())
        response = await self.remoting.invoke(addr, request, timeout_s)
        raise_for(response)
        return h.RecallMessageResponseHeader.from_ext_fields(response.ext_fields).msg_id

    async def send_heartbeat(self, addr: str, data: HeartbeatData) -> None:
        raise_for(await self._call(addr, RequestCode.HEART_BEAT, {}, data.encode()))

    async def check_client_config(
        self, addr: str, group: str, client_id: str, subscription: SubscriptionData
    ) -> None:
        """CHECK_CLIENT_CONFIG: the broker compiles a non-TAG subscription or refuses it."""
        body = CheckClientRequestBody(
            client_id=client_id, group=group, subscription_data=subscription
        ).encode()
        raise_for(await self._call(addr, RequestCode.CHECK_CLIENT_CONFIG, {}, body))

    async def unregister_client(
        self, addr: str, client_id: str, producer_group: str | None, consumer_group: str | None
    ) -> None:
        ext = h.UnregisterClientRequestHeader(
            client_id=client_id, producer_group=producer_group, consumer_group=consumer_group
        ).to_ext_fields()
        raise_for(await self._call(addr, RequestCode.UNREGISTER_CLIENT, ext))


__all__ = ["MQClientAPI", "raise_for", "send_v2_ext_fields"]
