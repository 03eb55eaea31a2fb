"""The blocking API: Producer, PushConsumer and LitePullConsumer for scripts, threads, Spark.

Each is the ``BlockingFacade`` of its counterpart in ``rocketq.client.aio``: every call runs
the asyncio one on the process's private loop thread (``LoopThread``). Listeners of a
PushConsumer are plain functions and run on the consumer's thread pool; send callbacks run on
the loop thread and must not block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from rocketq.client import aio
from rocketq.client.aio.producer import SendCallback
from rocketq.client.blocking_facade import (
    BlockingFacade,
    blocking_twin,
    shutdown_twin,
    start_twin,
)
from rocketq.client.blocking_mq_admin import BlockingMQAdmin
from rocketq.client.message_selector import Subscription
from rocketq.client.status import ConsumeStatus, SendResult
from rocketq.common.message import Message, MessageExt, MessageQueue

Listener = Callable[[list[MessageExt]], ConsumeStatus]

# the calls a client instance makes on a consumer (RocketMQ's MQConsumerInner and the
# rebalance, offset and ClientRemotingProcessor hooks), no user API
_CONSUMER_INNER = {
    "check_client_in_broker": "MQConsumerInner: the client instance checks the subscription",
    "compute_pull_from_where": "RebalanceImpl: where a newly assigned queue starts",
    "consumer_running_info": "MQConsumerInner: answers GET_CONSUMER_RUNNING_INFO",
    "consume_message_directly": "ClientRemotingProcessor: answers CONSUME_MESSAGE_DIRECTLY",
    "do_rebalance": "MQConsumerInner: the client instance's rebalance service",
    "persist_consumer_offset": "MQConsumerInner: the client instance's offset timer",
    "remove_unnecessary_message_queue": "RebalanceImpl: a queue leaves the assignment",
    "reset_offset": "ClientRemotingProcessor: answers RESET_CONSUMER_CLIENT_OFFSET",
}
_PUSH_CONSUMER_INNER = _CONSUMER_INNER | {
    "lock": "RebalancePushImpl: the orderly lock of a queue",
    "send_message_back": "ConsumeMessageService: a failed message goes back for retry",
}


class Producer(BlockingMQAdmin, BlockingFacade[aio.Producer]):
    def __init__(
        self, producer_group: str = "DEFAULT_PRODUCER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__(aio.Producer(producer_group, namesrv_addr=namesrv_addr, **kw))

    start = start_twin(aio.Producer.start)
    shutdown = shutdown_twin(aio.Producer.shutdown)
    send = blocking_twin(aio.Producer.send)
    send_orderly = blocking_twin(aio.Producer.send_orderly)
    request = blocking_twin(aio.Producer.request)
    send_oneway = blocking_twin(aio.Producer.send_oneway)
    send_batch = blocking_twin(aio.Producer.send_batch)
    recall_message = blocking_twin(aio.Producer.recall_message)
    fetch_publish_message_queues = blocking_twin(aio.Producer.fetch_publish_message_queues)

    def send_async(
        self, msg: Message, callback: SendCallback | None = None, *, timeout_s: float | None = None
    ) -> Future[SendResult]:
        """Start a send; the future gives its result (``callback`` runs on the loop thread)."""

        async def run() -> SendResult:
            return await self.impl.send_async(msg, callback, timeout_s=timeout_s)

        return self.loop.submit(run())


class PushConsumer(BlockingMQAdmin, BlockingFacade[aio.PushConsumer]):
    not_mirrored = _PUSH_CONSUMER_INNER

    def __init__(
        self, consumer_group: str = "DEFAULT_CONSUMER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__(aio.PushConsumer(consumer_group, namesrv_addr=namesrv_addr, **kw))

    start = start_twin(aio.PushConsumer.start)
    shutdown = shutdown_twin(aio.PushConsumer.shutdown)

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        _subscribe(self, topic, expression)

    def register_message_listener(self, listener: Listener, *, orderly: bool = False) -> None:
        self.impl.register_message_listener(listener, orderly=orderly)

    def register_message_listener_orderly(self, listener: Listener) -> None:
        self.impl.register_message_listener(listener, orderly=True)

    def assigned_queues(self) -> set[MessageQueue]:
        return self.impl.assigned_queues()


class LitePullConsumer(BlockingMQAdmin, BlockingFacade[aio.LitePullConsumer]):
    not_mirrored = _CONSUMER_INNER

    def __init__(
        self, consumer_group: str = "DEFAULT_CONSUMER", *, namesrv_addr: str = "", **kw: Any
    ) -> None:
        super().__init__(aio.LitePullConsumer(consumer_group, namesrv_addr=namesrv_addr, **kw))

    start = start_twin(aio.LitePullConsumer.start)
    shutdown = shutdown_twin(aio.LitePullConsumer.shutdown)
    poll = blocking_twin(aio.LitePullConsumer.poll)
    seek = blocking_twin(aio.LitePullConsumer.seek)
    seek_to_begin = blocking_twin(aio.LitePullConsumer.seek_to_begin)
    seek_to_end = blocking_twin(aio.LitePullConsumer.seek_to_end)
    commit = blocking_twin(aio.LitePullConsumer.commit)
    committed = blocking_twin(aio.LitePullConsumer.committed)
    fetch_message_queues = blocking_twin(aio.LitePullConsumer.fetch_message_queues)
    offset_for_timestamp = blocking_twin(aio.LitePullConsumer.offset_for_timestamp)

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        _subscribe(self, topic, expression)

    def assign(self, mqs: Iterable[MessageQueue]) -> None:
        if not self.started:
            self.impl.set_assignment(mqs)  # applied at start
        else:
            self.loop.run(self.impl.assign(mqs))

    def assignment(self) -> set[MessageQueue]:
        return self.impl.assignment()


def _subscribe(
    consumer: BlockingFacade[aio.PushConsumer] | BlockingFacade[aio.LitePullConsumer],
    topic: str,
    expression: Subscription,
) -> None:
    impl = consumer.impl
    if not consumer.started:
        impl.subscribe(topic, expression)
        return

    async def on_loop() -> None:  # a started consumer is only touched on its loop
        impl.subscribe(topic, expression)

    consumer.loop.run(on_loop())
