"""QueueClient: the blocking metadata and pull calls the Spark source and sink need.

Theory of operation: a Spark driver or executor holds one ``QueueClient`` per name server, from
``QueueClient.for_name_server`` (a module-level cache: Python workers are reused across tasks,
and the stream reader's process lives as long as its query). It runs the client's own
``MQClientInstance`` on the process's shared ``LoopThread`` and calls ``MQClientAPI`` directly:
route lookups, min/max offset, search by time, one PULL_MESSAGE at an exact offset (no
FLAG_COMMIT_OFFSET: nothing is acknowledged), and UPDATE_CONSUMER_OFFSET for lag tooling. It
registers no producer or consumer, so it starts no timers and sends no heartbeats. Nothing
here opens a socket before the first call, so a QueueClient is cheap to make.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, ClassVar, TypeVar

from rocketq.client.aio.api import raise_for
from rocketq.client.aio.instance import MQClientInstance, subscribe_info_of
from rocketq.client.aio.pull_api import pull_kernel
from rocketq.client.config import ClientConfig
from rocketq.client.loop_thread import LoopThread
from rocketq.client.status import PullResult
from rocketq.common.message import MessageQueue
from rocketq.remoting.protocol.bodies import ConsumerData, ConsumeType, HeartbeatData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.group_bodies import QueryConsumeQueueResponseBody
from rocketq.remoting.protocol.headers import QueryConsumeQueueRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData, build_subscription_data
from rocketq.remoting.protocol.topic_route import TopicList

T = TypeVar("T")

PULL_GROUP = "SPARK_ROCKETQ_READER"


class QueueClient:
    _cache: ClassVar[dict[str, QueueClient]] = {}
    _cache_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, name_server: str, *, request_timeout_s: float = 10.0) -> None:
        self.name_server = name_server
        self.timeout_s = request_timeout_s
        self._config = ClientConfig(
            namesrv_addr=name_server,
            instance_name=f"spark-{id(self)}",
            request_timeout_s=request_timeout_s,
        )
        self._loop: LoopThread | None = None
        self._instance: MQClientInstance | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_name_server(cls, name_server: str) -> QueueClient:
        with cls._cache_lock:
            client = cls._cache.get(name_server)
            if client is None:
                client = cls._cache[name_server] = cls(name_server)
            return client

    @classmethod
    def close_all(cls) -> None:
        with cls._cache_lock:
            clients, cls._cache = list(cls._cache.values()), {}
        for client in clients:
            client.close()

    # ------------------------------------------------------------------ lifecycle

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                self._loop = LoopThread.acquire()
            loop = self._loop
        return loop.run(coro, timeout_s=self.timeout_s * 3)

    async def _get_instance(self) -> MQClientInstance:
        if self._instance is None:
            self._instance = MQClientInstance(self._config, self._config.build_client_id())
        return self._instance

    def close(self) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
            instance, self._instance = self._instance, None
        if loop is None:
            return
        try:
            if instance is not None:
                loop.run(instance.remoting.shutdown(), timeout_s=self.timeout_s)
        finally:
            LoopThread.release()

    # ------------------------------------------------------------------ routes

    def message_queues(self, topic: str) -> list[MessageQueue]:
        """The readable queues of ``topic`` in sorted order; [] when it has no route."""

        async def call() -> list[MessageQueue]:
            instance = await self._get_instance()
            if not await instance.update_topic_route(topic):
                return []
            return sorted(subscribe_info_of(topic, instance.topic_route_table[topic]))

        return self._run(call())

    def topics(self) -> list[str]:
        """Every topic the name server knows (GET_ALL_TOPIC_LIST_FROM_NAMESERVER)."""

        async def call() -> list[str]:
            instance = await self._get_instance()
            request = RemotingCommand.create_request(
                RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {}
            )
            response = await instance.remoting.invoke(None, request, self.timeout_s)
            raise_for(response)
            return sorted(TopicList.decode(response.body).topic_list)

        return self._run(call())

    async def _addr(self, mq: MessageQueue) -> tuple[MQClientInstance, str]:
        instance = await self._get_instance()
        return instance, await instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)

    # ------------------------------------------------------------------ offsets

    def min_offset(self, mq: MessageQueue) -> int:
        """The queue's first offset; a queue never written (the broker says -1) starts at 0."""

        async def call() -> int:
            instance, addr = await self._addr(mq)
            return max(0, await instance.api.get_min_offset(addr, mq))

        return self._run(call())

    def max_offset(self, mq: MessageQueue) -> int:
        async def call() -> int:
            instance, addr = await self._addr(mq)
            return await instance.api.get_max_offset(addr, mq)

        return self._run(call())

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        async def call() -> int:
            instance, addr = await self._addr(mq)
            return await instance.api.search_offset(addr, mq, timestamp_ms)

        return self._run(call())

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None:
        async def call() -> None:
            instance, addr = await self._addr(mq)
            await instance.api.update_consumer_offset(addr, group, mq, offset)

        self._run(call())

    def announce_group(self, group: str, topics: list[str]) -> None:
        """One HEART_BEAT naming ``group`` as a CONSUME_ACTIVELY consumer of ``topics``.

        The broker then creates the group's %RETRY% topic and registers it, which is how
        RocketMQ's tools (and ``rocketq.admin``'s consume stats) find a group's brokers; the
        offsets themselves come from UPDATE_CONSUMER_OFFSET.
        """

        async def call() -> None:
            instance = await self._get_instance()
            data = HeartbeatData(
                client_id=instance.client_id,
                consumer_data_set=[
                    ConsumerData(
                        group_name=group,
                        consume_type=ConsumeType.CONSUME_ACTIVELY,
                        subscription_data_set=[build_subscription_data(t, "*") for t in topics],
                    )
                ],
            )
            for topic in topics:
                await instance.update_topic_route(topic)
            for addr in instance.all_broker_addrs():
                await instance.api.send_heartbeat(addr, data)

        self._run(call())

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int | None:
        async def call() -> int | None:
            instance, addr = await self._addr(mq)
            return await instance.api.query_consumer_offset(addr, group, mq)

        return self._run(call())

    def consume_queue_sizes(self, mq: MessageQueue, index: int, count: int) -> list[int]:
        """The message sizes of ``count`` ConsumeQueue units from ``index`` (QUERY_CONSUME_QUEUE).

        Read from the consume queue's 20-byte units, so no message body is fetched.
        """

        async def call() -> list[int]:
            instance, addr = await self._addr(mq)
            header = QueryConsumeQueueRequestHeader(
                topic=mq.topic, queue_id=mq.queue_id, index=index, count=count
            )
            request = RemotingCommand.create_request(
                RequestCode.QUERY_CONSUME_QUEUE, header.to_ext_fields()
            )
            response = await instance.remoting.invoke(addr, request, self.timeout_s)
            raise_for(response)
            body = QueryConsumeQueueResponseBody.decode(response.body)
            return [unit.physic_size for unit in body.queue_data]

        return self._run(call())

    # ------------------------------------------------------------------ pull

    def pull(
        self, mq: MessageQueue, subscription: SubscriptionData, offset: int, max_nums: int
    ) -> PullResult:
        return self.pull_later(mq, subscription, offset, max_nums).result(self.timeout_s * 3)

    def pull_later(
        self, mq: MessageQueue, subscription: SubscriptionData, offset: int, max_nums: int
    ) -> Future[PullResult]:
        """Start one PULL_MESSAGE at ``offset``; the future gives its result."""

        async def call() -> PullResult:
            instance = await self._get_instance()
            return await pull_kernel(
                instance, PULL_GROUP, mq, subscription, offset, max_nums, timeout_s=self.timeout_s
            )

        with self._lock:
            if self._loop is None:
                self._loop = LoopThread.acquire()
            loop = self._loop
        return loop.submit(call())


atexit.register(QueueClient.close_all)
