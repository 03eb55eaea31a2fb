"""The in-process side of the C++ client tests: a name server and a broker on 127.0.0.1 port 0
(``cpp_env``), what the driver runs are given (``Env``), and the store check after each run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketq.broker import BrokerController
from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv import NamesrvController
from rocketq.store.check import check_store
from rocketq.testing import run_broker, run_namesrv
from rocketq.testing.store import MIB, small_store_properties
from tests.interop.cpp_runner import DriverRun, run_driver, start_driver

SMALL_STORE = small_store_properties(16 * MIB)
PRODUCE_TIMEOUT_S = 60.0
CONSUME_TIMEOUT_S = 60.0


@dataclass
class Env:
    namesrv: NamesrvController
    broker: BrokerController
    tmp: Path

    def home(self, name: str) -> Path:
        return self.tmp / "homes" / name

    async def produce(
        self, topic: str, count: int, *extra: str, name: str = "producer"
    ) -> list[dict[str, Any]]:
        args = [
            "produce",
            "--namesrv",
            self.namesrv.addr,
            "--topic",
            topic,
            "--count",
            str(count),
            *extra,
        ]
        events = await run_driver(self.home(name), PRODUCE_TIMEOUT_S, *args)
        # an answered send is read back (pulled, counted) only once dispatched
        assert await asyncio.to_thread(self.broker.message_store.wait_for_dispatch, 10.0)
        return events

    async def consumer(
        self, topic: str, group: str, *extra: str, name: str = "consumer"
    ) -> DriverRun:
        args = ["push", "--namesrv", self.namesrv.addr, "--topic", topic, "--group", group, *extra]
        return await start_driver(self.home(name), *args)

    def create_topic(self, topic: str, queues: int = 4) -> None:
        self.broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=topic, read_queue_nums=queues, write_queue_nums=queues)
        )


@contextlib.asynccontextmanager
async def cpp_env(tmp_path: Path) -> AsyncIterator[Env]:
    """An ``Env`` with :data:`SMALL_STORE` under ``tmp_path / "store"``; once it stopped,
    ``rocketq store check`` passes on that store."""
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store", namesrv_addr=ns.addr, store_properties=dict(SMALL_STORE)
        ) as broker,
    ):
        yield Env(ns, broker, tmp_path)
    assert_store_checks(tmp_path / "store")


def assert_store_checks(root: Path) -> None:
    """After the broker has shut down, ``rocketq store check`` passes on its store."""
    report = check_store(str(root))
    assert report.ok, str(report)
    assert report.records > 0
