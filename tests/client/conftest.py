"""Fixtures: a name server and a broker in-process on 127.0.0.1 port 0, and fast client settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker import BrokerController
from rocketq.client.aio import PushConsumer
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import MessageExt
from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv import NamesrvController
from rocketq.testing import run_broker, run_namesrv

SMALL_STORE = {
    "mapedFileSizeCommitLog": str(8 * 1024 * 1024),
    "mapedFileSizeConsumeQueue": str(6000),
}
FAST_DELAYS = " ".join(["1s"] * 18)

# client intervals shrunk so rebalances, heartbeats and commits happen within a test
FAST_CLIENT: dict[str, Any] = {
    "poll_name_server_interval_s": 1.0,
    "heartbeat_broker_interval_s": 1.0,
    "persist_consumer_offset_interval_s": 0.5,
    "rebalance_interval_s": 1.0,
}
FAST_CONSUMER: dict[str, Any] = {
    **FAST_CLIENT,
    "pull_time_delay_when_exception_s": 0.2,
    "broker_suspend_max_time_s": 2.0,
    "consumer_timeout_when_suspend_s": 5.0,
}


def collecting_consumer(
    group: str, namesrv_addr: str, topic: str
) -> tuple[PushConsumer, list[MessageExt]]:
    """A push consumer of ``topic`` from its first offset, not yet started, whose listener
    appends every message it gets to the returned list and answers CONSUME_SUCCESS."""
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        group,
        namesrv_addr=namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe(topic, "*")
    consumer.register_message_listener(listener)
    return consumer, got


@dataclass
class Cluster:
    namesrv: NamesrvController
    broker: BrokerController
    tmp: Path

    @property
    def addr(self) -> str:
        return self.namesrv.addr

    async def create_topic(self, topic: str, queues: int = 4) -> None:
        self.broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=topic, read_queue_nums=queues, write_queue_nums=queues)
        )
        await self.broker.register_broker_all()

    def committed(self, group: str, topic: str) -> dict[int, int]:
        return dict(self.broker.consumer_offset_manager.query_offsets(group, topic))


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store",
            namesrv_addr=ns.addr,
            store_properties=dict(SMALL_STORE, messageDelayLevel=FAST_DELAYS),
        ) as broker,
    ):
        yield Cluster(ns, broker, tmp_path)
