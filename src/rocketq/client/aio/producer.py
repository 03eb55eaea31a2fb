"""Producer (DefaultMQProducer) on asyncio: sync, async, oneway, batch and selector sends.

A sync or async send is tried ``1 + retry_times_when_send_failed`` times, each try within
``send_msg_timeout`` and all of them within that many timeouts (RocketMQ's clients up to 4.2
gave each try its own timeout; later ones share one, which a silent master uses up alone); each try
picks a queue through ``MQFaultStrategy`` (which avoids the broker that just failed or
answered slowly) and a failure that is a connection error, a timeout or a retriable broker
response moves on to the next try. A failure a fresher route may cure (a refused or reset
connection, a timeout, a broker that takes no writes: ``needs_route_refresh``) first re-reads
the topic's route (rate-limited, ``route_refresher.py``), so the next try goes where the route
now points, not to the broker that just failed. Oneway and selector (orderly) sends are tried
once, on the queue chosen; their failures start the same refresh for the sends after them.
A master that went silent (SIGSTOP, a partition) is not waited on twice: the group's address
that just failed is kept as suspect (``SuspectMasters``), and the next send to the group polls
the route (rate-limited, jittered: ``RouteRefresher.await_change``) for up to half its time and
goes to the new master as soon as the route names one; only if none appears does it try the
old address again. A resend after a timeout may store the message twice (the first copy may
have been written): RocketMQ's at-least-once; the resend keeps the message's UNIQ_KEY, so a
duplicate is recognisable.
A message with a message group (``__SHARDINGKEY``) always goes to its group's queue
(``message_group_queue``), as RocketMQ 5's proxy sends it; retries stay on that queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.mq_admin import MQAdmin
from rocketq.client.aio.request_reply import request
from rocketq.client.aio.route_refresher import needs_route_refresh
from rocketq.client.config import ClientConfig, ProducerConfig
from rocketq.client.fault import MQFaultStrategy, SuspectMasters, TopicPublishInfo
from rocketq.client.message import (
    check_message,
    check_topic,
    message_group_queue,
    prepare_for_send,
    set_uniq_id,
)
from rocketq.client.send_codec import message_ext_fields
from rocketq.client.status import SendResult
from rocketq.client.trace.dispatcher import AsyncTraceDispatcher
from rocketq.client.trace.hooks import pub_context, recall_context
from rocketq.common import message_const as mc
from rocketq.common.clock import now_ms
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.common.recall_message_handle import RecallHandleError, decode_handle
from rocketq.common.topic import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from rocketq.errors import (
    BrokerResponseError,
    ClientError,
    IllegalStateError,
    RemotingConnectError,
    RemotingError,
    RemotingTimeoutError,
)
from rocketq.remoting.protocol.headers import (
    RecallMessageRequestHeader,
)

log = logging.getLogger(__name__)

MessageQueueSelector = Callable[[list[MessageQueue], Message, Any], MessageQueue]
SendCallback = Callable[[SendResult | None, BaseException | None], None]


def select_message_queue_by_hash(mqs: list[MessageQueue], msg: Message, arg: Any) -> MessageQueue:
    """SelectMessageQueueByHash: ``abs(arg.hashCode()) % len(mqs)`` (Java hash for str)."""
    value = java_string_hash(arg) if isinstance(arg, str) else hash(arg)
    return mqs[abs(value) % len(mqs)]


class Producer(MQAdmin):
    def __init__(
        self,
        producer_group: str = "DEFAULT_PRODUCER",
        *,
        namesrv_addr: str = "",
        config: ProducerConfig | None = None,
        **overrides: Any,
    ) -> None:
        base = config or ProducerConfig(producer_group=producer_group, namesrv_addr=namesrv_addr)
        self.config = dataclasses.replace(base, **overrides) if overrides else base
        self.group = self.config.producer_group
        self.fault_strategy = MQFaultStrategy(enabled=self.config.send_latency_fault_enable)
        self.suspect_masters = SuspectMasters()
        self._publish_infos: dict[str, TopicPublishInfo] = {}
        self._instance: MQClientInstance | None = None
        #: the trace dispatcher when enable_msg_trace is on (SendMessageTraceHookImpl)
        self.trace_dispatcher: AsyncTraceDispatcher | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._instance is not None:
            raise IllegalStateError("the producer is already started")
        self._instance = MQClientInstance.get(self.config)
        self._instance.register_producer(self)
        self._publish_infos.setdefault(self.config.create_topic_key, TopicPublishInfo())
        await self._instance.update_all_routes()
        await self._instance.send_heartbeat_to_all()
        if self.config.enable_msg_trace:
            self.trace_dispatcher = await start_trace_dispatcher(self.group, self.config)

    async def shutdown(self) -> None:
        dispatcher, self.trace_dispatcher = self.trace_dispatcher, None
        if dispatcher is not None:
            await dispatcher.shutdown()
        instance, self._instance = self._instance, None
        if instance is not None:
            await instance.unregister(producer=self.group)

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    @property
    def instance(self) -> MQClientInstance:
        if self._instance is None:
            raise IllegalStateError("the producer is not started")
        return self._instance

    # ------------------------------------------------------------------ routes (ProducerMember)

    def publish_topics(self) -> set[str]:
        return set(self._publish_infos)

    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None:
        if topic in self._publish_infos:
            self._publish_infos[topic] = info

    async def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return list((await self._find_publish_info(topic)).message_queue_list)

    async def _find_publish_info(self, topic: str) -> TopicPublishInfo:
        info = self._publish_infos.get(topic)
        if info is None or not info.ok():
            self._publish_infos.setdefault(topic, TopicPublishInfo())
            await self.instance.update_topic_route(topic)
            info = self._publish_infos[topic]
        if info.have_topic_router_info and info.ok():
            return info
        await self.instance.update_topic_route(topic, default_topic=self.config.create_topic_key)
        info = self._publish_infos[topic]
        if not info.ok():
            raise ClientError(f"no route info of this topic: {topic}")
        return info

    # ------------------------------------------------------------------ sends

    async def send(
        self,
        msg: Message,
        *,
        timeout_s: float | None = None,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        message_queue: MessageQueue | None = None,
    ) -> SendResult:
        """Send and wait for the broker; retried on another broker unless a queue is chosen."""
        timeout = timeout_s if timeout_s is not None else self.config.send_msg_timeout_s
        body, sys_flag = self._prepare(msg)
        if selector is not None or message_queue is not None:
            info = await self._find_publish_info(msg.topic)
            mq = message_queue or selector(list(info.message_queue_list), msg, arg)  # type: ignore[misc]
            return await self._send_once(mq, msg, body, sys_flag, timeout, batch=False)
        retries = self.config.retry_times_when_send_failed
        return await self._send_with_retry(msg, body, sys_flag, timeout, retries, batch=False)

    async def recall_message(
        self, topic: str, recall_handle: str, *, timeout_s: float | None = None
    ) -> str:
        """Take back a timer message before its delivery (DefaultMQProducer.recallMessage,
        RocketMQ 5.3.2): ``recall_handle`` is the send result's. Returns the message id;
        BrokerResponseError (ILLEGAL_OPERATION) after the delivery time."""
        check_topic(topic)
        if topic.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)):
            raise ClientError("topic is not supported")
        try:
            handle = decode_handle(recall_handle)
        except RecallHandleError as exc:
            raise ClientError(str(exc)) from exc
        addr = await self.instance.find_broker_addr_or_refresh(handle.broker_name, topic)
        header = RecallMessageRequestHeader(
            producer_group=self.config.producer_group,
            topic=topic,
            recall_handle=recall_handle,
            broker_name=handle.broker_name,
        )
        timeout = timeout_s if timeout_s is not None else self.config.send_msg_timeout_s
        msg_id = await self.instance.api.recall_message(addr, header, timeout)
        if self.trace_dispatcher is not None:
            self.trace_dispatcher.append(recall_context(self.group, topic, msg_id))
        return msg_id

    async def request(
        self,
        msg: Message,
        timeout_s: float = 3.0,
        *,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        message_queue: MessageQueue | None = None,
    ) -> MessageExt:
        """Send ``msg`` and wait for the reply a consumer sends with ``create_reply_message``
        (request-reply, RocketMQ 4.6+); raises RequestTimeoutError when none comes in time."""
        instance = self.instance

        async def ensure_route(topic: str) -> None:
            if topic not in instance.topic_route_table:
                await self.fetch_publish_message_queues(topic)
                await instance.send_heartbeat_to_all()

        async def send(remaining_s: float) -> SendResult:
            return await self.send(
                msg, timeout_s=remaining_s, selector=selector, arg=arg, message_queue=message_queue
            )

        return await request(
            msg,
            timeout_s,
            holder=instance.request_futures,
            client_id=instance.client_id,
            ensure_route=ensure_route,
            send=send,
        )

    async def send_orderly(self, msg: Message, sharding_key: Any) -> SendResult:
        return await self.send(msg, selector=select_message_queue_by_hash, arg=sharding_key)

    def send_async(
        self, msg: Message, callback: SendCallback | None = None, *, timeout_s: float | None = None
    ) -> asyncio.Task[SendResult]:
        """Start a send; the task gives the result and ``callback(result, error)`` is called."""
        timeout = timeout_s if timeout_s is not None else self.config.send_msg_timeout_s
        retries = self.config.retry_times_when_send_async_failed

        async def run() -> SendResult:
            body, sys_flag = self._prepare(msg)
            return await self._send_with_retry(msg, body, sys_flag, timeout, retries, batch=False)

        task = asyncio.get_running_loop().create_task(run())
        if callback is not None:
            task.add_done_callback(lambda t: _call_back(t, callback))
        return task

    async def send_oneway(self, msg: Message) -> None:
        body, sys_flag = self._prepare(msg)
        info = await self._find_publish_info(msg.topic)
        mq = message_group_queue(
            info.message_queue_list, msg
        ) or self.fault_strategy.select_one_message_queue(info, None)
        addr = await self.instance.find_broker_addr_or_refresh(mq.broker_name, msg.topic)
        fields = message_ext_fields(self.config, msg, mq.queue_id, sys_flag, now_ms(), batch=False)
        try:
            await self.instance.api.send_message_oneway(addr, fields, body, batch=False)
        except (RemotingError, OSError) as exc:
            if needs_route_refresh(exc):
                self.instance.route_refresher.refresh_soon(msg.topic)
            raise

    async def send_batch(
        self,
        msgs: Sequence[Message],
        *,
        timeout_s: float | None = None,
        message_queue: MessageQueue | None = None,
    ) -> SendResult:
        """One SEND_BATCH_MESSAGE request carrying every message (one topic, no delay).

        With ``message_queue`` the batch goes to that queue, tried once (as a selector send).
        """
        batch = self._batch(msgs)
        body = encode_batch_messages(msgs)
        if len(body) > self.config.max_message_size_bytes:
            raise ClientError(f"the batch is {len(body)} bytes, over the maximum message size")
        timeout = timeout_s if timeout_s is not None else self.config.send_msg_timeout_s
        if message_queue is not None:
            check_topic(batch.topic)
            return await self._send_once(message_queue, batch, body, 0, timeout, batch=True)
        retries = self.config.retry_times_when_send_failed
        return await self._send_with_retry(batch, body, 0, timeout, retries, batch=True)

    def _batch(self, msgs: Sequence[Message]) -> Message:
        if not msgs:
            raise ClientError("the batch is empty")
        topic = msgs[0].topic
        for m in msgs:
            check_message(m, self.config.max_message_size_bytes)
            if m.topic != topic:
                raise ClientError("the topic of the messages in one batch should be the same")
            if m.delay_time_level > 0:
                raise ClientError("TimeDelayLevel is not supported for batching")
            if m.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                raise ClientError("retry group topic is not supported for batching")
            set_uniq_id(m)
        batch = Message(topic=topic)
        uniq_keys = ",".join(m.uniq_key or "" for m in msgs)
        batch.put_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq_keys)
        return batch

    def _prepare(self, msg: Message) -> tuple[bytes, int]:
        c = self.config
        return prepare_for_send(
            msg,
            max_size=c.max_message_size_bytes,
            compress_over=c.compress_msg_body_over_bytes,
            level=c.compress_level,
        )

    async def _send_with_retry(
        self,
        msg: Message,
        body: bytes,
        sys_flag: int,
        timeout_s: float,
        retries: int,
        *,
        batch: bool,
    ) -> SendResult:
        # the topic was checked by every caller's check_message (_prepare, _batch): a
        # second validate_topic (a regex) a send was 3 us before the send's write
        deadline = time.monotonic() + timeout_s * (1 + retries)
        info = await self._find_publish_info(msg.topic)
        group_mq = None if batch else message_group_queue(info.message_queue_list, msg)
        last_broker: str | None = None
        last_error: BaseException | None = None
        for _attempt in range(1 + retries):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            mq = group_mq or self.fault_strategy.select_one_message_queue(info, last_broker)
            last_broker = mq.broker_name
            started = time.monotonic()
            try:
                attempt_s = min(timeout_s, remaining)
                result = await self._send_to(mq, msg, body, sys_flag, attempt_s, batch=batch)
            except (RemotingError, OSError, BrokerResponseError) as exc:
                elapsed_ms = int((time.monotonic() - started) * 1000)
                self.fault_strategy.update_fault_item(mq.broker_name, elapsed_ms, isolation=True)
                refresh = needs_route_refresh(exc)
                if isinstance(exc, BrokerResponseError) and not exc.retriable and not refresh:
                    raise
                # a timed-out try may have been stored: the resend is a duplicate with the
                # same UNIQ_KEY (RocketMQ's at-least-once), which the log says
                log.info("send of %s to %s failed (%r), trying again", msg.uniq_key, mq, exc)
                last_error = exc
                if refresh:
                    fresh = await self._route_after_failure(msg.topic, mq.broker_name, deadline)
                    info = fresh or info
                continue
            elapsed_ms = int((time.monotonic() - started) * 1000)
            self.fault_strategy.update_fault_item(mq.broker_name, elapsed_ms, isolation=False)
            return result
        if last_error is not None:
            raise last_error
        raise RemotingTimeoutError(f"sending to {msg.topic} timed out after {timeout_s} s")

    async def _route_after_failure(
        self, topic: str, failed_broker: str, deadline: float
    ) -> TopicPublishInfo | None:
        """Re-read the route within what is left of the send's time (in the background when
        nothing is); a group whose master moved is no longer avoided for the old one's failure."""
        instance = self.instance
        before = instance.find_broker_addr(failed_broker)
        remaining = deadline - time.monotonic()
        if remaining > 0:
            await instance.refresh_now(topic, remaining)
        else:
            instance.route_refresher.refresh_soon(topic)
        after = instance.find_broker_addr(failed_broker)
        if after is not None and after != before:
            self.fault_strategy.fault_tolerance.remove(failed_broker)
        info = self._publish_infos.get(topic)
        return info if info is not None and info.ok() else None

    async def _send_once(
        self,
        mq: MessageQueue,
        msg: Message,
        body: bytes,
        sys_flag: int,
        timeout_s: float,
        *,
        batch: bool,
    ) -> SendResult:
        """One try on a chosen queue; a failure a fresher route may cure starts a refresh."""
        try:
            return await self._send_to(mq, msg, body, sys_flag, timeout_s, batch=batch)
        except (RemotingError, OSError, BrokerResponseError) as exc:
            if needs_route_refresh(exc):
                self.instance.route_refresher.refresh_soon(mq.topic)
            raise

    async def _send_to(
        self,
        mq: MessageQueue,
        msg: Message,
        body: bytes,
        sys_flag: int,
        timeout_s: float,
        *,
        batch: bool,
    ) -> SendResult:
        addr = await self.instance.find_broker_addr_or_refresh(mq.broker_name, msg.topic)
        if self.suspect_masters and self.suspect_masters.is_suspect(mq.broker_name, addr):
            addr, timeout_s = await self._await_new_master(mq, addr, timeout_s)
        fields = message_ext_fields(self.config, msg, mq.queue_id, sys_flag, now_ms(), batch=batch)
        uniq = msg.uniq_key or ""
        # request-reply: SEND_REPLY_MESSAGE_V2
        reply = msg.get_property(mc.PROPERTY_MESSAGE_TYPE) == mc.REPLY_MESSAGE_FLAG
        trace = self.trace_dispatcher
        traced = not (trace is None or batch or msg.topic == trace.trace_topic)
        # SendMessageTraceHookImpl: a Pub record of each answered send
        started_ms = now_ms() if traced else 0
        try:
            result = await self.instance.api.send_message_v2(
                addr, mq, fields, body, uniq, timeout_s, batch=batch, reply=reply
            )
        except (RemotingError, OSError, BrokerResponseError) as exc:
            if needs_route_refresh(exc):
                self.suspect_masters.suspect(mq.broker_name, addr)
            raise
        if self.suspect_masters:
            self.suspect_masters.clear(mq.broker_name)
        if traced:
            assert trace is not None
            trace.append(pub_context(self.group, msg, addr, started_ms, now_ms(), result))
        return result

    async def _await_new_master(
        self, mq: MessageQueue, addr: str, timeout_s: float
    ) -> tuple[str, float]:
        """The address to send to and the time left for it, when ``addr`` has just failed:
        the route is polled for up to half of ``timeout_s`` for another master; failing
        that, ``addr`` again (a slow master rather than a silent one gets its try)."""
        started = time.monotonic()
        instance = self.instance

        def left() -> bool:
            info = self._publish_infos.get(mq.topic)
            if info is None:  # no route read yet: nothing says the group left
                return False
            return all(q.broker_name != mq.broker_name for q in info.message_queue_list)

        new = await instance.route_refresher.await_change(
            mq.topic, lambda: instance.find_broker_addr(mq.broker_name), addr, timeout_s / 2, left
        )
        if new is None and left():
            # the group left the route (unregistered or expired): no new master will come,
            # and its old address failed last; the send's next try picks another queue
            raise RemotingConnectError(f"{mq.broker_name} is no longer in the route of {mq.topic}")
        if new is not None:
            self.fault_strategy.fault_tolerance.remove(mq.broker_name)
        log.info("%s failed last; sending to %s", addr, new or addr)
        return new or addr, timeout_s - (time.monotonic() - started)


async def start_trace_dispatcher(group: str, config: ClientConfig) -> AsyncTraceDispatcher:
    """The dispatcher of a client with enable_msg_trace, sending through its own producer."""
    dispatcher = AsyncTraceDispatcher(group, config, trace_topic=config.customized_trace_topic)
    producer = Producer(config=dispatcher.trace_producer_config())
    await producer.start()
    dispatcher.start(producer)
    return dispatcher


def _call_back(task: asyncio.Task[SendResult], callback: SendCallback) -> None:
    try:
        if task.cancelled():
            callback(None, asyncio.CancelledError())
        elif task.exception() is not None:
            callback(None, task.exception())
        else:
            callback(task.result(), None)
    except Exception:  # a user callback's error must not break the client's reply path
        log.exception("send callback failed")
