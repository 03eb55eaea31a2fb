"""PullClient: the executors' data path, one PULL_MESSAGE at an exact queue offset.

Theory of operation: a Spark executor holds one ``PullClient`` per name server, from
``PullClient.for_name_server`` (a module-level cache: Python workers are reused across tasks).
It runs the client's own ``MQClientInstance`` on the process's shared ``LoopThread`` and pulls
with the client's ``pull_raw`` (route lookup, slave suggestion), without FLAG_COMMIT_OFFSET:
nothing is acknowledged. The loop thread only moves bytes: the body comes back undecoded and the
task's thread decodes it (``pull_body``), so a large pull never holds the loop. It registers no
producer or consumer, so it starts no timers and sends no heartbeats. Nothing here opens a
socket before the first pull, so a PullClient is cheap to make. Metadata (queues, offsets,
consume-queue sizes, the lag group) goes through ``rocketq.admin``; see ``offset_reader``.
"""

from __future__ import annotations

import atexit
import threading
from concurrent.futures import Future
from typing import ClassVar

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.pull_api import pull_raw
from rocketq.client.config import ClientConfig
from rocketq.client.loop_thread import LoopThread
from rocketq.client.status import PullResult
from rocketq.common.message import MessageQueue
from rocketq.remoting.protocol.subscription import SubscriptionData

PULL_GROUP = "SPARK_ROCKETQ_READER"


class PullClient:
    _cache: ClassVar[dict[str, PullClient]] = {}
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
    def for_name_server(cls, name_server: str) -> PullClient:
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

    def pull_later(
        self, mq: MessageQueue, subscription: SubscriptionData, offset: int, max_nums: int
    ) -> Future[tuple[PullResult, bytes]]:
        """Start one PULL_MESSAGE at ``offset``; the future gives its result and raw body."""

        async def call() -> tuple[PullResult, bytes]:
            if self._instance is None:
                self._instance = MQClientInstance(self._config, self._config.build_client_id())
            return await pull_raw(
                self._instance,
                PULL_GROUP,
                mq,
                subscription,
                offset,
                max_nums,
                timeout_s=self.timeout_s,
            )

        with self._lock:
            if self._loop is None:
                self._loop = LoopThread.acquire()
            loop = self._loop
        return loop.submit(call())


atexit.register(PullClient.close_all)
