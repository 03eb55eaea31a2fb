"""A name server and a broker in-process on 127.0.0.1, port 0, with fast client settings.

``run_cluster`` starts both on the running loop (store under ``<tmp>/store``, small files,
every delay level 1 s) and a RemotingClient for raw requests; ``Cluster`` is what it yields
(``send_raw`` sends a message over that client and waits until the store dispatched it).
``FAST_CLIENT`` and ``FAST_CONSUMER`` shrink the clients' intervals so rebalances,
heartbeats and offset commits happen within a test; ``collecting_consumer`` is a push
consumer that keeps what it gets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketq.broker.controller import BrokerController
from rocketq.client.aio import PushConsumer
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import MessageExt
from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request

RAW_TIMEOUT_S = 10.0  # a raw request's deadline
FAST_DELAYS = " ".join(["1s"] * 18)  # messageDelayLevel: every one of the 18 levels 1 s

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
    client: RemotingClient
    store_root: Path

    @property
    def addr(self) -> str:
        """The name server's address (what clients are given)."""
        return self.namesrv.addr

    @property
    def broker_addr(self) -> str:
        return self.broker.broker_addr

    @property
    def tmp(self) -> Path:
        """The folder the store lives in, free for the test's other files."""
        return self.store_root.parent

    async def create_topic(self, topic: str, queues: int = 4) -> None:
        self.broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=topic, read_queue_nums=queues, write_queue_nums=queues)
        )
        await self.broker.register_broker_all()

    def committed(self, group: str, topic: str) -> dict[int, int]:
        return dict(self.broker.consumer_offset_manager.query_offsets(group, topic))

    async def send_raw(self, topic: str, body: bytes, **request: Any) -> dict[str, str]:
        """SEND_MESSAGE over the raw client (``request``: ``wire.send_request``'s options);
        asserts SUCCESS, waits until the store dispatched it; the response's ext fields."""
        command = send_request(topic, body, **request)
        response = await self.client.invoke(self.broker_addr, command, RAW_TIMEOUT_S)
        assert response.code == ResponseCode.SUCCESS, response.remark
        await self.dispatched()
        return response.ext_fields

    async def dispatched(self) -> None:
        """Wait until the store has dispatched everything written (reads go through the
        consume queue)."""
        assert await asyncio.to_thread(self.broker.message_store.wait_for_dispatch, 5.0)


@contextlib.asynccontextmanager
async def run_cluster(
    tmp: Path,
    *,
    store_properties: dict[str, str] | None = None,
    namesrv_config: NamesrvConfig | None = None,
    **broker_overrides: Any,
) -> AsyncIterator[Cluster]:
    """A name server and a broker (store in ``tmp / "store"``); ``store_properties`` default to
    a small store with fast delay levels, ``broker_overrides`` are BrokerConfig fields."""
    if store_properties is None:
        store_properties = small_store_properties(messageDelayLevel=FAST_DELAYS)
    store_root = tmp / "store"
    async with (
        run_namesrv(config=namesrv_config) as namesrv,
        run_broker(
            store_root,
            namesrv_addr=namesrv.addr,
            store_properties=store_properties,
            **broker_overrides,
        ) as broker,
        RemotingClient() as client,
    ):
        yield Cluster(namesrv, broker, client, store_root)
