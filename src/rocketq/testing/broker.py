"""Start a name server and brokers in-process on 127.0.0.1, port 0, for tests; read back what
a broker's store holds (:func:`topic_records`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController, start_namesrv
from rocketq.testing.broker_process import RETRY_PAUSE_S, START_ATTEMPTS
from rocketq.testing.wait import until


@contextlib.asynccontextmanager
async def run_namesrv(
    port: int = 0, *, config: NamesrvConfig | None = None
) -> AsyncIterator[NamesrvController]:
    controller = await start_namesrv(port, config=config)
    try:
        yield controller
    finally:
        await controller.shutdown()


async def start_broker_retrying(
    configure: Callable[[], BrokerConfig], pause_s: float = RETRY_PAUSE_S
) -> BrokerController:
    """A started broker of ``configure()``'s config, started again (with a config made again)
    while a port it binds is taken, ``START_ATTEMPTS`` in all: for a broker that must listen on
    picked ports (a fixed HA rule, a restart at the same address), which another socket can
    take before it binds them."""
    for attempt in range(1, START_ATTEMPTS + 1):
        broker = BrokerController(configure())
        try:
            await broker.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or attempt == START_ATTEMPTS:
                raise
            await asyncio.sleep(pause_s)
        else:
            return broker
    raise AssertionError("unreachable: the last attempt returns or raises")


SMALL_INDEX = {"maxHashSlotNum": "5000", "maxIndexNum": "20000"}


@contextlib.asynccontextmanager
async def run_broker(
    store_root: str | os.PathLike[str],
    *,
    namesrv_addr: str | None = None,
    config: BrokerConfig | None = None,
    **overrides: Any,
) -> AsyncIterator[BrokerController]:
    """A broker on 127.0.0.1:<free port> with its store under ``store_root``.

    Index files default to 5,000 slots and 20,000 entries (420 KB instead of RocketMQ's
    420 MB, which every test broker would otherwise preallocate on disk).
    """
    base = config or BrokerConfig()
    overrides["store_properties"] = {
        **SMALL_INDEX,
        "haListenPort": "0",  # any free port: listenPort + 1 may be taken on a busy machine
        **base.store_properties,
        **overrides.get("store_properties", {}),
    }
    cfg = dataclasses.replace(
        base,
        listen_host="127.0.0.1",
        listen_port=overrides.pop("listen_port", 0),
        broker_ip1="127.0.0.1",
        namesrv_addr=namesrv_addr,
        store_path_root_dir=str(store_root),
        **overrides,
    )
    controller = BrokerController(cfg)
    await controller.start()
    try:
        yield controller
    finally:
        await controller.shutdown()


def topic_records(broker: BrokerController, topic: str) -> list[MessageExt]:
    """Every record with a consume queue unit in ``topic``, decoded (CRC checked) from the
    broker's store, queue by queue."""
    store = broker.message_store
    topic_config = broker.topic_config_manager.select_topic_config(topic)
    found: list[MessageExt] = []
    for queue_id in range(topic_config.read_queue_nums if topic_config is not None else 1):
        result = store.get_message("test", topic, queue_id, 0, 1000)
        found.extend(decode_message(b, check_crc=True) for b in result.message_buffers)
    return found


async def stored_records(
    broker: BrokerController, topic: str, count: int, timeout_s: float = 15
) -> list[MessageExt]:
    """:func:`topic_records` once ``topic`` holds at least ``count``; fails (AssertionError
    with what it holds) when it does not within ``timeout_s``."""
    if not await until(lambda: len(topic_records(broker, topic)) >= count, timeout_s):
        raise AssertionError(f"{topic} holds fewer than {count}: {topic_records(broker, topic)}")
    return topic_records(broker, topic)
