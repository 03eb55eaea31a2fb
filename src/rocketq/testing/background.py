"""A name server and brokers on their own event-loop thread, for tests whose body blocks.

Spark tests call ``collect()`` and friends synchronously, which would freeze a broker running
on the test's own loop; ``BackgroundCluster`` runs ``run_namesrv`` and ``run_broker`` on a
private loop thread instead and offers blocking helpers (create a topic, add a broker, run a
coroutine on that loop). Every server listens on 127.0.0.1, port 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

from rocketq.broker.controller import BrokerController
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv

T = TypeVar("T")
CALL_TIMEOUT_S = 60.0


class BackgroundCluster:
    def __init__(
        self,
        root: Path,
        broker_names: Iterable[str] = ("broker-a",),
        store_properties: dict[str, str] | None = None,
        **broker_overrides: Any,
    ) -> None:
        self.root = root
        self.store_properties = dict(store_properties or {})
        self.broker_overrides = broker_overrides  # BrokerConfig fields for every broker
        self.brokers: dict[str, BrokerController] = {}
        self.namesrv_addr = ""
        self._initial = list(broker_names)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="test-cluster")
        self._stack = contextlib.AsyncExitStack()

    def __enter__(self) -> BackgroundCluster:
        self._thread.start()
        try:
            self.run(self._start())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = CALL_TIMEOUT_S) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    async def _start(self) -> None:
        namesrv = await self._stack.enter_async_context(run_namesrv())
        self.namesrv_addr = namesrv.addr
        for name in self._initial:
            await self._add_broker(name)

    async def _add_broker(self, name: str) -> BrokerController:
        broker = await self._stack.enter_async_context(
            run_broker(
                self.root / name,
                namesrv_addr=self.namesrv_addr,
                broker_name=name,
                store_properties=self.store_properties,
                **self.broker_overrides,
            )
        )
        self.brokers[name] = broker
        return broker

    def add_broker(self, name: str) -> BrokerController:
        return self.run(self._add_broker(name))

    def create_topic(
        self, topic: str, queues: int = 2, brokers: Iterable[str] | None = None
    ) -> None:
        """Create (or resize) ``topic`` on the named brokers (all by default) and register."""

        async def create() -> None:
            for name in brokers or list(self.brokers):
                broker = self.brokers[name]
                broker.topic_config_manager.update_topic_config(
                    TopicConfig(topic_name=topic, read_queue_nums=queues, write_queue_nums=queues)
                )
                await broker.register_broker_all()

        self.run(create())

    def close(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self.run(self._stack.aclose())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CALL_TIMEOUT_S)
        if not self._loop.is_closed() and not self._loop.is_running():
            self._loop.close()
