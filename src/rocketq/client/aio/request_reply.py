"""Request-reply (RocketMQ 4.6+): ``Producer.request`` and the reply a consumer sends back.

Theory of operation: the requester stamps CORRELATION_ID (a fresh UUID), REPLY_TO_CLIENT
(its client id) and TTL (the timeout in ms) on the message, registers a future under the
correlation id in its client instance's ``RequestFutureHolder``, heartbeats so every broker
knows its channel, and sends. A consumer builds the answer with ``create_reply_message``
(topic ``<CLUSTER>_REPLY_TOPIC``, MSG_TYPE ``reply``, the three properties copied) and sends
it with any producer, which uses SEND_REPLY_MESSAGE_V2 (325) for it. The broker pushes the
reply to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT, 326); ``on_push_reply_message``
completes the future. No reply within the timeout raises ``RequestTimeoutError``; a future
whose request failed to send is failed at once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import zlib
from collections.abc import Awaitable, Callable

from rocketq.common import message_const as mc
from rocketq.common.clock import now_ms
from rocketq.common.message import Message, MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.properties import decode_properties
from rocketq.errors import ClientError, RequestTimeoutError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import ReplyMessageRequestHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"


def reply_topic(cluster: str) -> str:
    """MixAll.getReplyTopic."""
    return f"{cluster}_{REPLY_TOPIC_POSTFIX}"


def is_reply_message(msg: Message) -> bool:
    return msg.get_property(mc.PROPERTY_MESSAGE_TYPE) == mc.REPLY_MESSAGE_FLAG


def create_reply_message(request: Message, body: bytes) -> Message:
    """MessageUtil.createReplyMessage: the answer to ``request`` (as a consumer received it)."""
    cluster = request.get_property(mc.PROPERTY_CLUSTER)
    if cluster is None:
        raise ClientError(
            "create reply message fail, requestMessage error, "
            f"property[{mc.PROPERTY_CLUSTER}] is null."
        )
    reply = Message(topic=reply_topic(cluster), body=body)
    reply.put_property(mc.PROPERTY_MESSAGE_TYPE, mc.REPLY_MESSAGE_FLAG)
    for name in (
        mc.PROPERTY_CORRELATION_ID,
        mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT,
        mc.PROPERTY_MESSAGE_TTL,
    ):
        value = request.get_property(name)
        if value is not None:
            reply.put_property(name, value)
    return reply


def prepare_request(msg: Message, client_id: str, timeout_s: float) -> str:
    """Stamp the request properties; returns the correlation id."""
    correlation_id = str(uuid.uuid4())
    msg.put_property(mc.PROPERTY_CORRELATION_ID, correlation_id)
    msg.put_property(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT, client_id)
    msg.put_property(mc.PROPERTY_MESSAGE_TTL, str(int(timeout_s * 1000)))
    return correlation_id


class RequestFutureHolder:
    """Futures of requests waiting for their reply, by correlation id."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[MessageExt]] = {}

    def register(self, correlation_id: str) -> asyncio.Future[MessageExt]:
        future: asyncio.Future[MessageExt] = asyncio.get_running_loop().create_future()
        self._futures[correlation_id] = future
        return future

    def forget(self, correlation_id: str) -> None:
        self._futures.pop(correlation_id, None)

    def __len__(self) -> int:
        return len(self._futures)

    def put_reply(self, msg: MessageExt) -> bool:
        correlation_id = msg.get_property(mc.PROPERTY_CORRELATION_ID)
        future = self._futures.pop(correlation_id or "", None)
        if future is None or future.done():
            log.warning("a reply for unknown request %s arrived", correlation_id)
            return False
        future.set_result(msg)
        return True

    async def wait(
        self, correlation_id: str, future: asyncio.Future[MessageExt], timeout_s: float
    ) -> MessageExt:
        try:
            async with asyncio.timeout(timeout_s):
                return await future
        except TimeoutError:
            raise RequestTimeoutError(
                f"send request message to topic timeout, no reply within {timeout_s} s "
                f"(correlation id {correlation_id})"
            ) from None
        finally:
            self.forget(correlation_id)

    async def on_push_reply_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """PUSH_REPLY_MESSAGE_TO_CLIENT (326): the reply as the broker pushed it."""
        h = ReplyMessageRequestHeader.from_ext_fields(request.ext_fields)
        body = request.body
        if h.sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            body = zlib.decompress(body)
        props = decode_properties((h.properties or "").encode())
        props[mc.PROPERTY_MESSAGE_REPLY_ARRIVE_TIME] = str(now_ms())
        msg = MessageExt(
            topic=h.topic,
            body=body,
            flag=h.flag,
            properties=props,
            queue_id=h.queue_id,
            sys_flag=h.sys_flag,
            born_timestamp=h.born_timestamp,
            born_host=_host(h.born_host),
            store_timestamp=h.store_timestamp,
            store_host=_host(h.store_host),
            reconsume_times=h.reconsume_times or 0,
        )
        self.put_reply(msg)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)


def _host(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return (host or "127.0.0.1", int(port) if port.isdigit() else 0)


async def request(
    msg: Message,
    timeout_s: float,
    *,
    holder: RequestFutureHolder,
    client_id: str,
    ensure_route: Callable[[str], Awaitable[None]],
    send: Callable[[float], Awaitable[object]],
) -> MessageExt:
    """DefaultMQProducerImpl.request: send ``msg`` and wait for its reply.

    The producer hands in its client's holder and id and two steps: ``ensure_route`` (route
    and heartbeat for a topic it never sent to) and ``send`` (with the seconds left).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    correlation_id = prepare_request(msg, client_id, timeout_s)
    future = holder.register(correlation_id)
    try:
        await ensure_route(msg.topic)
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise RequestTimeoutError(f"request to {msg.topic} timed out before it was sent")  # noqa: TRY301 -- forgotten on every way out
        await send(remaining)
    except BaseException:
        holder.forget(correlation_id)
        raise
    return await holder.wait(correlation_id, future, max(0.0, deadline - loop.time()))
