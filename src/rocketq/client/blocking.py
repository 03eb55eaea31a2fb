"""The blocking API: Producer, PushConsumer and LitePullConsumer for scripts, threads, Spark.

Each wraps its asyncio counterpart from ``rocketq.client.aio`` and runs it on the process's
private loop thread (``LoopThread``). Listeners of a PushConsumer are plain functions and run on
the consumer's thread pool; send callbacks run on the loop thread and must not block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any

from rocketq.client import aio
from rocketq.client.aio.producer import MessageQueueSelector, SendCallback
from rocketq.client.blocking_mq_admin import BlockingMQAdmin
from rocketq.client.loop_thread import LoopThread
from rocketq.client.message_selector import Subscription
from rocketq.client.status import ConsumeStatus, SendResult
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.errors import IllegalStateError

Listener = Callable[[list[MessageExt]], ConsumeStatus]


class _Blocking:
    def __init__(self) -> None:
        self._loop: LoopThread | None = None

    @property
    def loop(self) -> LoopThread:
        if self._loop is None:
            raise IllegalStateError(f"the {type(self).__name__} is not started")
        return self._loop

    def _start(self, start: Callable[[], Any]) -> None:
        if self._loop is not None:
            raise IllegalStateError(f"the {type(self).__name__} is already started")
        loop = LoopThread.acquire()
        try:
            loop.run(start())
        except BaseException:
            LoopThread.release()
            raise
        self._loop = loop

    def _shutdown(self, shutdown: Callable[[], Any]) -> None:
        if self._loop is None:
            return
        try:
            self._loop.run(shutdown())
        finally:
            self._loop = None
            LoopThread.release()

    def __enter__(self) -> Any:
        self.start()  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()  # type: ignore[attr-defined]


class Producer(_Blocking, BlockingMQAdmin):
    def __init__(
        self, producer_group: str = "DEFAULT_PRODUCER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__()
        self.impl = aio.Producer(producer_group, namesrv_addr=namesrv_addr, **kw)

    def start(self) -> None:
        self._start(self.impl.start)

    def shutdown(self) -> None:
        self._shutdown(self.impl.shutdown)

    def send(
        self,
        msg: Message,
        *,
        timeout_s: float | None = None,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        message_queue: MessageQueue | None = None,
    ) -> SendResult:
        return self.loop.run(
            self.impl.send(
                msg, timeout_s=timeout_s, selector=selector, arg=arg, message_queue=message_queue
            )
        )

    def send_orderly(self, msg: Message, sharding_key: Any) -> SendResult:
        return self.loop.run(self.impl.send_orderly(msg, sharding_key))

    def request(self, msg: Message, timeout_s: float = 3.0) -> MessageExt:
        """Send ``msg`` and wait for its reply (request-reply); RequestTimeoutError if none."""
        return self.loop.run(self.impl.request(msg, timeout_s))

    def send_async(
        self, msg: Message, callback: SendCallback | None = None, *, timeout_s: float | None = None
    ) -> Future[SendResult]:
        async def run() -> SendResult:
            return await self.impl.send_async(msg, callback, timeout_s=timeout_s)

        return self.loop.submit(run())

    def send_oneway(self, msg: Message) -> None:
        self.loop.run(self.impl.send_oneway(msg))

    def send_batch(
        self,
        msgs: Sequence[Message],
        *,
        timeout_s: float | None = None,
        message_queue: MessageQueue | None = None,
    ) -> SendResult:
        return self.loop.run(
            self.impl.send_batch(msgs, timeout_s=timeout_s, message_queue=message_queue)
        )

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return self.loop.run(self.impl.fetch_publish_message_queues(topic))


class _BlockingConsumer(_Blocking, BlockingMQAdmin):
    impl: aio.PushConsumer | aio.LitePullConsumer

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        if self._loop is None:
            self.impl.subscribe(topic, expression)
            return

        async def on_loop() -> None:  # a started consumer is only touched on its loop
            self.impl.subscribe(topic, expression)

        self.loop.run(on_loop())


class PushConsumer(_BlockingConsumer):
    impl: aio.PushConsumer

    def __init__(
        self, consumer_group: str = "DEFAULT_CONSUMER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__()
        self.impl = aio.PushConsumer(consumer_group, namesrv_addr=namesrv_addr, **kw)

    def register_message_listener(self, listener: Listener, *, orderly: bool = False) -> None:
        self.impl.register_message_listener(listener, orderly=orderly)

    def register_message_listener_orderly(self, listener: Listener) -> None:
        self.impl.register_message_listener(listener, orderly=True)

    def start(self) -> None:
        self._start(self.impl.start)

    def shutdown(self) -> None:
        self._shutdown(self.impl.shutdown)

    def assigned_queues(self) -> set[MessageQueue]:
        return self.impl.assigned_queues()


class LitePullConsumer(_BlockingConsumer):
    impl: aio.LitePullConsumer

    def __init__(
        self, consumer_group: str = "DEFAULT_CONSUMER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__()
        self.impl = aio.LitePullConsumer(consumer_group, namesrv_addr=namesrv_addr, **kw)

    def assign(self, mqs: Iterable[MessageQueue]) -> None:
        if self._loop is None:
            self.impl.set_assignment(mqs)  # applied at start
        else:
            self.loop.run(self.impl.assign(mqs))

    def start(self) -> None:
        self._start(self.impl.start)

    def shutdown(self) -> None:
        self._shutdown(self.impl.shutdown)

    def poll(self, timeout_s: float | None = None) -> list[MessageExt]:
        return self.loop.run(self.impl.poll(timeout_s))

    def seek(self, mq: MessageQueue, offset: int) -> None:
        self.loop.run(self.impl.seek(mq, offset))

    def seek_to_begin(self, mq: MessageQueue) -> None:
        self.loop.run(self.impl.seek_to_begin(mq))

    def seek_to_end(self, mq: MessageQueue) -> None:
        self.loop.run(self.impl.seek_to_end(mq))

    def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        self.loop.run(self.impl.commit(offsets))

    def committed(self, mq: MessageQueue) -> int:
        return self.loop.run(self.impl.committed(mq))

    def fetch_message_queues(self, topic: str) -> set[MessageQueue]:
        return self.loop.run(self.impl.fetch_message_queues(topic))

    def offset_for_timestamp(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return self.loop.run(self.impl.offset_for_timestamp(mq, timestamp_ms))

    def assignment(self) -> set[MessageQueue]:
        return self.impl.assignment()
